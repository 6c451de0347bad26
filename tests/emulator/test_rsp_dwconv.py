"""dnn64_rsp_dwconv_s8 (dwconv_s8.rsp: the RSP fetches its own input rows and writes its
outputs by SP DMA) in mupen64plus with the low-level RSP plugin, bit-exact against the
numpy integer reference and against dnn64_conv_s8 on the same ROM; shapes it does not
take run dnn64_conv_s8, with the same results.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from dnn64build.quant.intmath import MulParams, mul_s8, quantize_multiplier
from tests.emulator.cases_rom import check_probe_cases, run_cases_rom
from tests.emulator.test_rsp_kernels import PROBE, assert_conv_cases, case_data, pack_case

OWN_DMA_PROBE = PROBE.parent / "rsp_own_dma_probe.c"  # rsp_conv_probe.c through the kernel

# (n, c, h, w, c, k, stride, pads (top, left, bottom, right), dil, group = c, tile), on
# the RSP unless said
CASES = [
    (1, 8, 7, 7, 8, 3, 1, (1, 1, 1, 1), 1, 8, None),          # 3x3, 7x7 planes
    (1, 9, 9, 9, 9, 5, 2, (2, 2, 2, 2), 1, 9, (2, 5)),        # 5x5 stride 2, a tile
    (1, 13, 14, 14, 13, 5, 1, (2, 2, 2, 2), 1, 13, None),     # odd channels, 14x14
    (1, 16, 20, 20, 16, 3, 2, (1, 1, 1, 1), 1, 16, None),     # rows not a multiple of 8
    (2, 5, 3, 2, 5, 3, 1, (1, 1, 1, 1), 1, 5, None),          # tiny planes, batch 2
    (1, 4, 1, 1, 4, 3, 1, (1, 1, 1, 1), 1, 4, None),          # one position
    (1, 3, 30, 112, 3, 3, 2, (1, 1, 1, 1), 1, 3, None),       # 112-byte rows, 3 bands
    (1, 10, 17, 13, 10, 3, 1, (0, 0, 0, 0), 1, 10, None),     # no padding
    (1, 6, 11, 9, 6, 5, 2, (1, 0, 2, 1), 1, 6, None),         # uneven pads
    (1, 37, 5, 6, 37, 3, 1, (2, 2, 0, 0), 1, 37, (1, 35)),    # 2 lists of 32, pads 2
    (1, 8, 6, 6, 8, 5, 1, (2, 2, 2, 2), 1, 8, None),          # a table, narrower clamp
    (1, 7, 13, 124, 7, 3, 2, (1, 2, 1, 2), 1, 7, None),      # stride 2: 127-byte rows
    (1, 5, 15, 23, 5, 5, 2, (2, 2, 2, 2), 1, 5, None),        # stride 2: odd sizes
    (1, 3, 9, 120, 3, 5, 2, (2, 2, 0, 2), 1, 3, None),        # 5x5 s2, 8 split steps
    (1, 4, 1, 1, 4, 3, 2, (1, 1, 1, 1), 1, 4, None),          # stride 2: one pixel
    (1, 70, 6, 6, 70, 3, 1, (1, 1, 1, 1), 1, 70, None),       # a table behind the RSP
    (1, 45, 5, 5, 45, 5, 1, (2, 2, 2, 2), 1, 45, (3, 40)),    # a table, planes off lines
    (1, 9, 5, 5, 9, 3, 1, (1, 1, 1, 1), 1, 9, None),          # CPU: -shift 1 and 16
    (1, 4, 6, 6, 4, 3, 1, (1, 1, 1, 1), 2, 4, None),          # CPU: dilation
    (1, 4, 6, 6, 4, 7, 1, (3, 3, 3, 3), 1, 4, None),          # CPU: 7x7
    (1, 2, 4, 130, 2, 3, 1, (1, 1, 1, 1), 1, 2, None),        # CPU: rows of 132 bytes
    (1, 16, 10, 10, 16, 3, 1, (1, 1, 1, 1), 1, 16, None),     # the output stage's bounds
    (1, 16, 11, 11, 16, 5, 2, (2, 2, 2, 2), 1, 16, None),     # the same, 5x5 stride 2
    (1, 8, 6, 6, 8, 3, 1, (1, 1, 1, 1), 1, 8, None),          # CPU: a bias of 2^20
    (1, 3, 7, 114, 3, 5, 2, (2, 2, 2, 2), 1, 3, None),        # stride 2: the split's even
                                                              # bytes past the even half
    (1, 2, 41, 100, 2, 3, 1, (1, 1, 1, 1), 1, 2, None),       # 3x3 s1: bands of odd rows
    (1, 2, 37, 90, 2, 5, 1, (2, 2, 2, 2), 1, 2, None),        # 5x5 s1: the same
]
TABLE_CASES = {10, 15, 16}
EDGE_CASE = 17  # channels whose output stage the RSP cannot take: the CPU runs the call
BOUND_CASES = {21: (-128, 127), 22: (127, -128)}  # case: (x zero point, out zero point)
BIAS_CASE = 23  # a bias the RSP's output stage cannot take: the CPU runs the call
CPU_CASES = {EDGE_CASE, 18, 19, 20}


def rsp_data(case, rng, with_table: bool, edge_multipliers: bool):
    """case_data, with every channel's output stage on the RSP (2 <= -shift <= 15) unless
    edge_multipliers (then test_rsp_kernels's channels at -shift 1 and 16 stay)."""
    x, wt, bias, mult, shift, x_zp, out_zp, act, lut = case_data(case, rng, with_table)
    if not edge_multipliers:
        pairs = [quantize_multiplier(float(r)) for r in rng.uniform(2e-4, 2e-2, case[4])]
        mult = np.array([p[0] for p in pairs], np.int32)
        shift = np.array([p[1] for p in pairs], np.int32)
    return x, wt, bias, mult, shift, x_zp, out_zp, act, lut


def at_bounds(data, rng, x_zp: int, out_zp: int):
    """dw_output_stage.inc at its bounds: channels 0-3 with |bias| = 2^20 - 1 and weights
    all 127 or all -128 on inputs of -128 and 127 only (|A| up to 1.87 * 2^20, just under
    2^21); -shift 15 (M near 2^30 and 2^31) on the even channels, 2 on channels 1, 3, 5; the
    zero points at the int8 ends (the constant T, tb and ta at their extremes)."""
    x, wt, bias, mult, shift, _, _, act, lut = data
    x = np.where(rng.random(x.shape) < 0.5, -128, 127).astype(np.int8)
    wt[0:4] = np.array([127, -128, 127, -128], np.int8)[:, None, None, None]
    bias[0:4] = [2**20 - 1, -(2**20 - 1), -(2**20 - 1), 2**20 - 1]
    reals = {0: 2.0**-16 * 1.0001, 2: 2.0**-15 * 0.9999, 1: 0.126, 3: 0.2499, 5: 0.2, 4: 1.7e-5}
    for channel, real in reals.items():
        mult[channel], shift[channel] = quantize_multiplier(real)
        assert mult[channel] > 2**30 and -shift[channel] in (2, 15)  # the RSP's range
    return x, wt, bias, mult, shift, x_zp, out_zp, act, lut


def run_own_dma_cases(bare, boot_stub, tmp_path, cases: list[tuple], *, seed: int,
                      kernel: str, fits: str, table_cases: set[int], edge_cases: set[int],
                      not_fitting: set[int], bound_cases: dict[int, tuple[int, int]] | None = None,
                      bias_case: int | None = None, probe: Path = OWN_DMA_PROBE) -> None:
    """Run `cases` through `probe` (rsp_conv_probe.c's cases through its own kernel
    wrapper) calling `kernel` (fits: its geometry test as a C expression of g and w) in
    mupen64plus: every output bit-exact against the numpy reference and dnn64_conv_s8,
    and the geometry test true except on not_fitting. edge_cases keep
    test_rsp_kernels's channels the RSP's output stage cannot take; bound_cases (case:
    zero points) are at_bounds; bias_case has one bias of 2^20."""
    rng = np.random.default_rng(seed)
    datas = [rsp_data(case, rng, i in table_cases, i in edge_cases)
             for i, case in enumerate(cases)]
    for i, zps in (bound_cases or {}).items():
        datas[i] = at_bounds(datas[i], rng, *zps)
    if bias_case is not None:
        datas[bias_case][2][1] = 2**20
    blob = struct.pack(">i", len(cases)) + b"".join(map(pack_case, cases, datas))
    lines = run_cases_rom(bare, boot_stub, probe, blob, tmp_path / "probe.z64",
                          defines={"RSP_KERNEL": kernel, "RSP_FITS(g, w)": fits})
    assert_conv_cases(lines, cases, datas)
    for i in range(len(cases)):
        flag = "0" if i in not_fitting else "1"
        assert f"fit{i:02d} {flag}" in lines, f"case {i}: geometry {fits}: {flag}"


@pytest.mark.emulator
def test_rsp_dwconv_bit_exact_in_mupen64plus(bare, boot_stub, mupen64plus, tmp_path):
    run_own_dma_cases(bare, boot_stub, tmp_path, CASES, seed=12,
                      kernel="dnn64_rsp_dwconv_s8", fits="dnn64_rsp_dwconv_fits(g)",
                      table_cases=TABLE_CASES, edge_cases=CPU_CASES,
                      not_fitting=CPU_CASES - {EDGE_CASE}, bound_cases=BOUND_CASES,
                      bias_case=BIAS_CASE)


MUL_PROBE = PROBE.parent / "rsp_mul_probe.c"
# (channels, h, w, b per channel, in place, real multiplier); on the RSP unless said
MUL_CASES = [
    (16, 8, 8, 1, 0, 0.004),     # squeeze-excite shape: planes times b per channel
    (7, 5, 9, 0, 0, 0.0021),     # a per channel, odd sizes
    (5, 3, 3, 1, 1, 0.01),       # in place (y is the planes' buffer)
    (3, 2, 56, 1, 0, 3e-5),      # 56-byte rows, -shift 15
    (3, 4, 4, 1, 0, 0.3),        # CPU: -shift 1
    (4, 14, 14, 1, 0, 0.004),    # planes as 2 rows of 98
    (3, 13, 11, 0, 0, 0.004),    # planes as 11 rows of 13
    (2, 5, 127, 1, 0, 0.004),    # no split with fewer rows: 5 rows of 127
    (3, 6, 6, 1, 0, 0.2),        # -shift 2
]
MUL_CPU = {4}


def mul_case(case, rng) -> tuple[bytes, np.ndarray]:
    """The case's asset bytes and its expected y (intmath.mul_s8)."""
    channels, h, w, b_per_channel, in_place, real = case
    planes = rng.integers(-128, 128, (channels, h, w), dtype=np.int8)
    values = rng.integers(-128, 128, (channels, 1, 1), dtype=np.int8)
    values[0] = 127  # w = 255 with b's zero point -128: the largest 16-bit weight
    mult, shift = quantize_multiplier(real)
    a_zp, out_zp, act = int(rng.integers(-128, 128)), int(rng.integers(-20, 20)), (-100, 120)
    values_zp = -128
    zps = (a_zp, values_zp) if b_per_channel else (values_zp, a_zp)
    params = MulParams(*zps, out_zp, mult, shift)
    a, b = (planes, values) if b_per_channel else (values, planes)
    want = mul_s8(a, b, params, *act)
    words = [channels, h, w, b_per_channel, in_place, *zps, out_zp, mult, shift, *act]
    pad4 = lambda b: b + b"\0" * (-len(b) % 4)  # noqa: E731
    blob = (struct.pack(f">{len(words)}i", *words) + pad4(planes.tobytes())
            + pad4(values.tobytes()))
    return blob, want


@pytest.mark.emulator
def test_rsp_channel_mul_bit_exact_in_mupen64plus(bare, boot_stub, mupen64plus, tmp_path):
    rng = np.random.default_rng(13)
    check_probe_cases(bare, boot_stub, MUL_PROBE, tmp_path / "mul.z64", MUL_CASES,
                      [mul_case(case, rng) for case in MUL_CASES], "mul", "dnn64_mul_s8")
    # the RSP's cases: -shift in 2..15 and a normalised multiplier (else the CPU runs them)
    for i, case in enumerate(MUL_CASES):
        mult, shift = quantize_multiplier(case[5])
        assert (2 <= -shift <= 15 and mult > 2**30) == (i not in MUL_CPU)


def _own_dma_model():
    """Depthwise 3x3 and 5x5 stride 2 Convs, a squeeze-excite (its pool, 1x1 Convs on one
    position and a Mul), 1x1 Convs, a ReduceMean and a classifier Gemm of one row: every
    kernel of the RSP fetching its own data under `kernels: auto`."""
    from onnx import helper

    from tests.codegen.codegen_cases import onnx_model, rand

    inits = {"d1": rand(8, 1, 3, 3, seed=1), "p1": rand(16, 8, 1, 1, seed=2),
             "d2": rand(16, 1, 5, 5, seed=3) * 0.5, "p2": rand(8, 16, 1, 1, seed=4),
             "f1": rand(16, 8, 1, 1, seed=5), "f2": rand(8, 16, 1, 1, seed=6),
             "fc": rand(12, 8, seed=7), "fcb": rand(12, seed=8)}
    nodes = [
        helper.make_node("Conv", ["input", "d1"], ["a"], name="dw3", pads=[1, 1, 1, 1],
                         group=8),
        helper.make_node("GlobalAveragePool", ["a"], ["g"], name="squeeze"),
        helper.make_node("Conv", ["g", "f1"], ["s1"], name="se_fc1"),
        helper.make_node("Relu", ["s1"], ["s2"], name="se_relu"),
        helper.make_node("Conv", ["s2", "f2"], ["s3"], name="se_fc2"),
        helper.make_node("Sigmoid", ["s3"], ["e"], name="excite"),
        helper.make_node("Mul", ["a", "e"], ["m"], name="se"),
        helper.make_node("Conv", ["m", "p1"], ["b"], name="pw1"),
        helper.make_node("Relu", ["b"], ["r"], name="relu"),
        helper.make_node("Conv", ["r", "d2"], ["c"], name="dw5s2", pads=[2, 2, 2, 2],
                         strides=[2, 2], group=16),
        helper.make_node("Conv", ["c", "p2"], ["y"], name="pw2"),
        helper.make_node("ReduceMean", ["y"], ["h"], name="pool", axes=[2, 3], keepdims=1),
        helper.make_node("Flatten", ["h"], ["hf"], name="flatten"),
        helper.make_node("Gemm", ["hf", "fc", "fcb"], ["logits"], name="fc", transB=1),
    ]
    return onnx_model(nodes, {"input": [1, 8, 14, 13]}, ["y", "logits"], inits)


@pytest.mark.emulator
def test_own_dma_kernels_in_a_model_match_host_and_the_integer_reference(bare, mupen64plus,
                                                                         tmp_path):
    """Through the CLI with `kernels: auto`: the ROM's outputs (depthwise Convs, the
    squeeze-excite's pool, 1x1 Convs and Mul, the 1x1 Convs, the last ReduceMean and the
    Gemm on the RSP) equal the host build's bit for bit, and `run` checks each against the
    integer reference executor."""
    import json

    from tests.emulator.rom_workspace import auto_kernels_rom

    out, c_file = auto_kernels_rom(tmp_path / "ws", "own_dma", _own_dma_model(), seed=7,
                                   input_shape=(1, 8, 14, 13))
    meta = json.loads((out / "codegen" / "meta.json").read_text())
    assert {"dw3", "squeeze", "se_fc1", "se_fc2", "se", "pw1", "dw5s2", "pw2", "pool",
            "fc"} <= set(meta["rsp_nodes"])
    for kernel, calls in (("dnn64_rsp_dwconv_s8(", 2), ("dnn64_rsp_mul_channels_s8(", 1),
                          ("dnn64_rsp_pwconv_s8(", 2), ("dnn64_rsp_gemv_dma_s8(", 3),
                          ("dnn64_rsp_global_avgpool_s8(", 1), ("dnn64_rsp_reduce_mean_s8(", 1)):
        assert c_file.count(kernel) == calls, kernel
