"""codegen/routing.py's RSP fit rules against their C twins in kernels/, which decide what
each RSP kernel takes: every constant with the C #define it mirrors, and every predicate
with the C function (compiled for the host, called through ctypes) over a sweep of shapes
that crosses each limit. Codegen routing a node the kernel refuses only costs speed; the
other way round (the kernel taking what codegen keeps on the CPU) loses it; both fail here.
"""

from __future__ import annotations

import ctypes
import itertools
import re
import subprocess

import numpy as np
import pytest

from dnn64build import TOOL_ROOT
from dnn64build.codegen import ops_int8, routing
from dnn64build.codegen.lowering import Ctx
from dnn64build.ir.graph import Graph, Node, Tensor

KERNELS = TOOL_ROOT / "kernels"
GEOM_FIELDS = ("n", "c_in", "h_in", "w_in", "c_out", "h_out", "w_out", "k_h", "k_w",
               "stride_h", "stride_w", "dil_h", "dil_w", "pad_top", "pad_left", "group")
ConvGeom = type("ConvGeom", (ctypes.Structure,),
                {"_fields_": [(f, ctypes.c_int32) for f in GEOM_FIELDS]})

# The static rules of two kernel files, reached by including each in a file of its own:
# pwconv's shape test with the row length codegen gives it (c_in, or c_in rounded up to 8
# for dnn64_rsp_pwconv_padded_s8), and dnn64_rsp_mul_channels_s8's layout test on the
# geometry it builds from a plane.
SHIMS = {"dnn64_rsp_pwconv.c": """
int parity_pwconv_fits(const dnn64_conv_geom *g, const int8_t *w_tile)
{
    const int32_t k = g->c_in <= SMALL_K || g->c_in % 8 == 0 ? g->c_in : (g->c_in + 7) & ~7;
    return shape_fits(g, k, w_tile);
}
""", "dnn64_rsp_dwconv.c": """
int parity_mul_channels_fits(int32_t channels, int32_t h, int32_t w, int32_t mult,
                             int32_t shift)
{
    dnn64_conv_geom g;
    const int32_t rows = plane_rows(h, w);
    w = h * w / rows, h = rows;
    g.n = 1, g.c_in = channels, g.c_out = channels, g.group = channels;
    g.h_in = h, g.w_in = w, g.h_out = h, g.w_out = w;
    g.k_h = 1, g.k_w = 1, g.stride_h = 1, g.stride_w = 1, g.dil_h = 1, g.dil_w = 1;
    g.pad_top = 0, g.pad_left = 0;
    return dnn64__rsp_requant_on_rsp(mult, shift) && layout_fits(&g);
}
"""}


@pytest.fixture(scope="module")
def c_rules(host_cc: str, tmp_path_factory: pytest.TempPathFactory) -> ctypes.CDLL:
    work = tmp_path_factory.mktemp("routing")
    sources = []
    for path in sorted(KERNELS.glob("*.c")):
        if path.name in SHIMS:  # the kernel file with its shim appended
            shim = work / f"parity_{path.name}"
            shim.write_text(f'#include "{path.name}"\n{SHIMS[path.name]}')
            path = shim
        sources.append(str(path))
    lib = work / "librules.so"
    cmd = [host_cc, "-std=c99", "-O0", "-Wall", "-Werror", "-shared", "-fPIC",
           f"-I{KERNELS}", "-o", str(lib), *sources]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    rules = ctypes.CDLL(str(lib))
    geom_p = ctypes.POINTER(ConvGeom)
    for name, args in {"dnn64_rsp_dwconv_fits": [geom_p],
                       "dnn64_rsp_stem_fits": [geom_p],
                       "parity_pwconv_fits": [geom_p, ctypes.c_void_p],
                       "dnn64_rsp_gemv_dma_fits": [ctypes.c_int32, ctypes.c_void_p],
                       "dnn64__rsp_requant_on_rsp": [ctypes.c_int32] * 2,
                       "parity_mul_channels_fits": [ctypes.c_int32] * 5}.items():
        getattr(rules, name).argtypes = args
        getattr(rules, name).restype = ctypes.c_int
    return rules


def c_defines(*files: str) -> dict[str, int]:
    """The integer #defines of kernels/ files (a literal or a (1 << n))."""
    found = {}
    for name in files:
        text = (KERNELS / name).read_text()
        for key, value in re.findall(r"^#define (\w+) +(\d+|\(1 << \d+\))", text, re.M):
            found[key] = eval(value)  # noqa: S307 - a literal or a shift, matched above
    return found


def test_constants_match_the_kernels() -> None:
    header = c_defines("dnn64_rsp.h")
    assert header["DNN64_RSP_K_MAX"] == routing.RSP_K_MAX
    assert c_defines("dnn64_rsp_dwconv.c")["SLOT_BYTES"] == routing.RSP_DW_ROW_BYTES
    pw = c_defines("dnn64_rsp_pwconv.c")
    assert (pw["SKIP_MAX"], pw["SMALL_K"]) == (routing.RSP_PW_SKIP_MAX, routing.RSP_PW_SMALL_K)
    gemv = c_defines("dnn64_rsp_gemv_dma.c")
    assert (gemv["K_MAX"], gemv["LANES"]) == (routing.RSP_GEMV_DMA_K_MAX, ops_int8.GEMV_LANES)
    assert c_defines("dnn64_rsp_sums.c")["N_MAX"] == routing.RSP_SUMS_PLANE_MAX


def conv_ctx(g: dict[str, int], kernels: str = "rsp") -> Ctx:
    """A one-Conv graph of ``g`` (a geoms() case) and its Ctx."""
    pads = [g["pad_top"], g["pad_left"], g["pad_bottom"], g["pad_right"]]
    weight = np.zeros((g["c_out"], g["c_in"] // g["group"], g["k_h"], g["k_w"]), np.int8)
    tensors = {"x": Tensor([g["n"], g["c_in"], g["h_in"], g["w_in"]], "int8", "input"),
               "w": Tensor(list(weight.shape), "int8", "constant"),
               "y": Tensor([g["n"], g["c_out"], g["h_out"], g["w_out"]], "int8", "output")}
    node = Node("conv", "Conv", ["x", "w"], ["y"], {
        "strides": [g["stride_h"], g["stride_w"]], "pads": pads,
        "dilations": [g["dil_h"], g["dil_w"]], "group": g["group"],
        "kernel_shape": [g["k_h"], g["k_w"]]})
    graph = Graph("parity", ["x"], ["y"], tensors, [node], {"w": weight})
    return Ctx(graph, None, node, 0, kernels)  # type: ignore[arg-type]


def c_geom(geom: dict[str, int]) -> ConvGeom:
    return ConvGeom(*(geom[f] for f in GEOM_FIELDS))


def geoms(**axes) -> list[dict[str, int]]:
    """Every combination of ``axes`` (dnn64_conv_geom's fields and the end pads
    pad_bottom, pad_right) over a unit geometry, h_out and w_out as a Conv computes them
    unless given; those with an empty output left out."""
    base = {f: 1 for f in GEOM_FIELDS} | dict.fromkeys(
        ("pad_top", "pad_left", "pad_bottom", "pad_right"), 0)
    cases = []
    for values in itertools.product(*axes.values()):
        g = base | dict(zip(axes, values, strict=True))
        for side, begin, end in (("h", "pad_top", "pad_bottom"), ("w", "pad_left", "pad_right")):
            if f"{side}_out" in axes:
                continue
            extent = g[f"dil_{side}"] * (g[f"k_{side}"] - 1) + 1
            g[f"{side}_out"] = ((g[f"{side}_in"] + g[begin] + g[end] - extent)
                                // g[f"stride_{side}"] + 1)
        if g["h_out"] >= 1 and g["w_out"] >= 1:
            cases.append(g)
    return cases


ALIGNED = np.zeros(16, dtype=np.int64)  # an 8-byte aligned weight tile


def disagreements(cases, python, c) -> list:
    """The cases where the two rules differ (each case's rule results, for the message)."""
    return [(case, py, cv) for case in cases
            if (py := bool(python(case))) != (cv := bool(c(case)))]


def test_dwconv_fits_as_dnn64_rsp_dwconv_fits(c_rules) -> None:
    dw = {"c_in": [4], "c_out": [4], "group": [4], "h_in": [9]}
    # the row limit and the pads, for each kernel and stride the microcode takes
    cases = geoms(**dw, k_h=[3, 5], k_w=[3, 5], stride_h=[1, 2], stride_w=[1, 2],
                  pad_top=[0, 2, 4, 5], pad_left=[0, 1, 2, 4, 5], pad_right=[0, 1, 3],
                  w_in=[1, 60, 121, 123, 124, 125, 126, 127, 128, 129, 200])
    # the kernel sizes, strides, dilations and groups it does not take
    cases += geoms(**dw | {"h_in": [16]}, k_h=[1, 3, 5, 7], k_w=[1, 3, 5, 7],
                   stride_h=[1, 2, 3], stride_w=[1, 2, 3], pad_top=[1], pad_left=[1],
                   pad_right=[1], w_in=[16])
    cases += geoms(**dw | {"h_in": [16]}, k_h=[3], k_w=[3], dil_h=[1, 2], dil_w=[1, 2],
                   w_in=[16])
    cases += geoms(c_in=[4], c_out=[4, 8], group=[1, 2, 4], k_h=[3], k_w=[3], w_in=[16],
                   h_in=[16])

    def python(g):
        ctx = conv_ctx(g)
        return routing.dwconv_on_rsp(ctx, g["c_out"], [g["k_h"], g["k_w"]])

    assert not disagreements(cases, python, lambda g: c_rules.dnn64_rsp_dwconv_fits(c_geom(g)))
    assert sum(map(python, cases)) > 100  # the sweep reaches both sides


def test_pwconv_fits_as_dnn64_rsp_pwconv_fits(c_rules) -> None:
    c_ins = [1, 7, 8, 9, 15, 16, 58, 116, 4088, 4089, 4095, 4096, 4097, 4103, 4104, 8192]
    cases = geoms(c_in=c_ins, c_out=[16], k_h=[1, 3], k_w=[1, 3], stride_h=[1, 2],
                  stride_w=[1, 2], pad_top=[0, 1], pad_left=[0, 1], pad_right=[0, 1],
                  h_in=[5], w_in=[6])
    cases += geoms(c_in=c_ins, c_out=[16], group=[2], h_in=[5], w_in=[6])
    # one field off at a time with the output's size still the input's (which a real Conv
    # has only with some of them), so that each test is reached on its own
    one = {"c_in": [16], "c_out": [16], "h_in": [5], "w_in": [6], "h_out": [5], "w_out": [6]}
    for field, other in (("k_h", 3), ("k_w", 3), ("stride_h", 2), ("stride_w", 2),
                         ("pad_top", 1), ("pad_left", 1), ("group", 2), ("h_out", 4),
                         ("w_out", 5)):
        cases += geoms(**one | {field: [other]})

    def python(g):
        ctx = conv_ctx(g)
        red = g["c_in"] // g["group"] * g["k_h"] * g["k_w"]
        return (routing.conv_on_rsp(ctx, red, g["c_out"] // g["group"])
                and routing.pwconv_on_rsp(ctx, red))

    def c(g):
        return c_rules.parity_pwconv_fits(c_geom(g), ALIGNED.ctypes.data)

    assert not disagreements(cases, python, c)
    assert sum(map(python, cases)) >= 12


def test_stem_fits_as_dnn64_rsp_stem_fits(c_rules) -> None:
    stem = {"c_in": [3], "c_out": [16], "k_h": [3], "k_w": [3], "stride_h": [2],
            "stride_w": [2], "h_in": [17]}
    cases = geoms(**stem, pad_top=[0, 1, 2, 3], pad_left=[0, 2, 3], pad_bottom=[0, 1, 2, 3],
                  pad_right=[0, 1, 2, 3], w_in=[13, 14, 15, 16, 29, 30, 31, 32, 223, 224,
                                                225, 229, 230, 231, 232, 233, 234, 240, 241])
    # one field off the stem's shape each, on planes whose W_out is 8 (H_out given, so that
    # the end pads do not refuse them first)
    for field, other in (("c_in", 4), ("k_h", 1), ("stride_h", 1), ("dil_w", 2), ("group", 3)):
        cases += geoms(**stem | {field: [other], "h_out": [8]}, w_in=[16, 17, 18, 19, 20],
                       pad_left=[0, 1], pad_right=[0, 1])
    # A real Conv's rows reach the row limit only with end pads above 2 (W_out a multiple
    # of 8); the rule's own edge, with W_out given.
    cases += geoms(**stem, w_in=list(range(224, 242)), w_out=[112, 120])

    def python(g):
        return routing.stem_on_rsp(conv_ctx(g))

    assert not disagreements(cases, python, lambda g: c_rules.dnn64_rsp_stem_fits(c_geom(g)))
    assert sum(map(python, cases)) > 50


def test_gemv_dma_fits_as_dnn64_rsp_gemv_dma_fits(c_rules) -> None:
    ctx = conv_ctx(geoms()[0])
    ks = list(range(-8, 1400))
    assert not disagreements(ks, lambda k: routing.gemv_dma_on_rsp(ctx, k),
                             lambda k: c_rules.dnn64_rsp_gemv_dma_fits(k, ALIGNED.ctypes.data))


def test_requant_on_rsp_as_the_kernels(c_rules) -> None:
    cases = list(itertools.product(
        [0, 1, 2**29, 2**30 - 1, 2**30, 2**30 + 1, 2**31 - 1, -(2**31)], range(-20, 6)))
    assert not disagreements(cases, lambda c: routing.requant_on_rsp(*c),
                             lambda c: c_rules.dnn64__rsp_requant_on_rsp(*c))


def test_channel_mul_on_rsp_as_dnn64_rsp_mul_channels_s8(c_rules) -> None:
    """The Mul of planes [1, C, H, W] by [1, C, 1, 1] scales goes to
    dnn64_rsp_mul_channels_s8 exactly when that kernel's output stage and layout take it."""
    cases = list(itertools.product([1, 16], [1, 2, 3, 7], [1, 64, 127, 128, 129, 200, 256],
                                   [2**30, 2**30 + 1], [-1, -2, -15, -16]))

    def python(case):
        c, h, w, mult, shift = case
        tensors = {"a": Tensor([1, c, h, w], "int8", "activation"),
                   "b": Tensor([1, c, 1, 1], "int8", "activation"),
                   "y": Tensor([1, c, h, w], "int8", "output")}
        node = Node("mul", "Mul", ["a", "b"], ["y"],
                    {"int8": {"multiplier": mult, "shift": shift}})
        graph = Graph("parity", ["a", "b"], ["y"], tensors, [node])
        return routing.channel_mul_on_rsp(Ctx(graph, None, node, 0, "rsp")) == 1  # type: ignore[arg-type]

    assert not disagreements(cases, python, lambda c: c_rules.parity_mul_channels_fits(*c))
    assert sum(map(python, cases)) > 10


def test_reductions_as_the_kernels_limits() -> None:
    """conv_on_rsp and gemm_on_rsp stop at DNN64_RSP_K_MAX (dnn64_rsp_conv_s8 runs longer
    reductions on the CPU), sums_on_rsp at sums_s8's plane of N_MAX bytes (and above 0)."""
    k_max = c_defines("dnn64_rsp.h")["DNN64_RSP_K_MAX"]
    n_max = c_defines("dnn64_rsp_sums.c")["N_MAX"]
    ctx = conv_ctx(geoms()[0])
    for k in (1, k_max - 1, k_max, k_max + 1, 2 * k_max):
        assert routing.conv_on_rsp(ctx, k, 8) == (k <= k_max)
        assert routing.gemm_on_rsp(ctx, k) == (k <= k_max)
    for n in (0, 1, n_max, n_max + 1):
        assert routing.sums_on_rsp(ctx, n) == (1 <= n <= n_max)
