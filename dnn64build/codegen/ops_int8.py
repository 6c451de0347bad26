"""Emitters for int8 nodes and the fp32 <-> int8 conversions (docs/quant-ir.md).

Every integer parameter comes precomputed from ``attrs["int8"]``; this module only
places it: per-channel multipliers/shifts travel with the weights in the blob (so
they are tiled with them), per-tensor values and tables are ``static const`` data.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dnn64build.codegen import common  # its call builders, as common.pool_call etc.
from dnn64build.codegen.cfmt import c_call, c_comment, c_float, c_int
from dnn64build.codegen.common import (
    Emitter,
    binary_operands,
    check_inplace,
    node_inputs,
)
from dnn64build.codegen.emit import array_decl, braced, const_decl, struct_decl
from dnn64build.codegen.lowering import Call, Ctx, Lowered, Tiled, statement, unsupported
from dnn64build.codegen.ops_movement import (
    COORD_MODES,
    PAD_MODES,
    concat,
    copy,
    expand,
    pad_call,
    resize,
    resize_geometry,
    slice_,
    tile,
    transpose,
)
from dnn64build.codegen.program_size import DECL_LINE_BYTES
from dnn64build.codegen.routing import (
    channel_mul_on_rsp,
    conv_kernel,
    gemm_on_rsp,
    gemv_dma_on_rsp,
    pwconv_row_taps,
    stem_on_rsp,
    sums_on_rsp,
)
from dnn64build.ir.graph import Node
from dnn64build.ir.ops import ACTIVATION_OPS, SCALAR_OPERAND_ACTIVATIONS, VIEW_OPS
from dnn64build.quant import intmath
from dnn64build.quant.int8_ops import add_params_of


def _require_int8(ctx: Ctx, *names: str) -> None:
    for name in names:
        if name and ctx.dtype(name) != "int8":
            raise unsupported(ctx.node, f"int8 node with tensor {name!r} of dtype "
                                        f"{ctx.dtype(name)}")


def const_table(ctx: Ctx, low: Lowered, base: str, ctype: str, values: list[int],
           per_line: int | None = None) -> str:
    """Declares a constant array in ``low``; returns its symbol. ``per_line`` values a
    line: the program-size estimate counts declaration lines (DECL_LINE_BYTES each), so
    a large table written that way is counted at its size."""
    sym = ctx.sym(base)
    low.decls.append(array_decl(ctype, sym, [c_int(v) for v in values], per_line))
    return sym


def q8_out(ctx: Ctx, low: Lowered, p: dict) -> str:
    """The dnn64_q8_out of an int8 Conv/Gemm/MatMul; returns its address."""
    lut = "NULL"
    if p.get("lut") is not None:
        lut = const_table(ctx, low, "lut", "int8_t", p["lut"])
    sym = ctx.sym("q")
    low.decls.append(const_decl("dnn64_q8_out", sym, braced([
        c_int(p["out_zero_point"]), c_int(p["act_min"]), c_int(p["act_max"]), lut])))
    return f"&{sym}"


def channel_params(ctx: Ctx, bias_name: str, p: dict, channels: int) -> tuple[np.ndarray, ...]:
    """bias, multiplier and shift per output channel (int32), staged with the weights."""
    if not bias_name or not ctx.is_const(bias_name):
        raise unsupported(ctx.node, "an int8 layer without a constant int32 bias")
    bias = np.asarray(ctx.const(bias_name), dtype=np.int32).reshape(channels)
    mult = np.asarray(p["multiplier"], dtype=np.int64).astype(np.int32).reshape(channels)
    shift = np.asarray(p["shift"], dtype=np.int64).astype(np.int32).reshape(channels)
    return bias, mult, shift


GEMV_LANES = 8


def gemv_blocks(rows: np.ndarray, *params: np.ndarray) -> tuple[np.ndarray, ...]:
    """dnn64_rsp_gemv_dma_s8's layout of weight rows [n, k] and per-channel params [n]:
    blocks of 8 output channels, each tap after tap (8 bytes a tap: one SP load a tap
    of 8 channels, read once in order); the last block's missing channels are zeros.
    One row per block, so that weight tiles hold whole blocks."""
    n, k = rows.shape
    blocks = -(-n // GEMV_LANES)
    w = np.zeros((blocks * GEMV_LANES, k), dtype=np.int8)
    w[:n] = rows
    w = w.reshape(blocks, GEMV_LANES, k).transpose(0, 2, 1).reshape(blocks, k * GEMV_LANES)
    padded = []
    for a in params:
        pad = np.zeros(blocks * GEMV_LANES, dtype=a.dtype)
        pad[:n] = a
        padded.append(pad.reshape(blocks, GEMV_LANES))
    return (np.ascontiguousarray(w), *padded)


def gemv_dma_step(k: int, n: int, arrays: tuple[np.ndarray, ...], ap: str, zp: str, q: str,
                  yp: str) -> Tiled:
    """The dnn64_rsp_gemv_dma_s8 calls of y = a rows^T over ``arrays`` (rows [n, k],
    bias, multiplier, shift), tiled by blocks of 8 output channels."""
    def call(begin: int | str, count: int | str, s: Sequence[str]) -> str:
        if isinstance(begin, int) and isinstance(count, int):
            first, rows = GEMV_LANES * begin, min(GEMV_LANES * count, n - GEMV_LANES * begin)
        else:  # C expressions (a loop over the tiles): the last block may be short
            first, most = f"{GEMV_LANES} * ({begin})", f"{GEMV_LANES} * ({count})"
            rows = f"({n} - {first} < {most} ? {n} - {first} : {most})"
        return c_call("dnn64_rsp_gemv_dma_s8", k, n, ap, zp, *s, first, rows, q, yp)
    return Tiled(gemv_blocks(*arrays), call)


def conv(ctx: Ctx) -> Lowered:
    """An int8 Conv; with the QuantizeLinear of its input paired to it (ctx.pair, see
    routing.quantize_stem_pairs) the first tile's call quantizes the float input too."""
    node = ctx.node
    x, w, b = node_inputs(node, 3)
    y = node.outputs[0]
    _require_int8(ctx, x, w, y)
    if not ctx.is_const(w):
        raise unsupported(node, "an int8 weight that is not constant")
    ctx.require_disjoint(y, x)
    p = node.attrs["int8"]
    if node.op == "ConvTranspose" and node.attrs["group"] != 1:
        raise unsupported(node, "int8 ConvTranspose with group > 1")
    low = Lowered()
    rows, kernel = common.conv_rows(node, np.asarray(ctx.const(w), dtype=np.int8))
    c_out = rows.shape[0]
    fn = conv_kernel(ctx)
    if fn == "dnn64_rsp_pwconv_padded_s8":  # zero taps up to the padded row
        rows = np.pad(rows, ((0, 0), (0, pwconv_row_taps(rows.shape[1]) - rows.shape[1])))
    low.on_rsp = fn.startswith("dnn64_rsp_")
    q = q8_out(ctx, low, p)
    xp, yp, zp = ctx.ptr(x), ctx.ptr(y), c_int(p["x_zero_point"])
    arrays = (rows, *channel_params(ctx, b, p, c_out))
    if fn == "dnn64_rsp_pwconv_s8" and ctx.numel(x) == rows.shape[1] and gemv_dma_on_rsp(
            ctx, rows.shape[1]):
        # one position, one image (a squeeze-excite's): a Gemm of one row
        low.steps.append(gemv_dma_step(rows.shape[1], c_out, arrays, xp, zp, q, yp))
        return low
    geom = common.conv_geom(ctx, low, x, y, c_out, kernel)
    head: tuple[str, ...] = ()  # the float input's arguments, when the first call quantizes
    if ctx.pair is not None:
        if not stem_on_rsp(ctx):
            raise AssertionError(f"plan bug: node {node.name!r} is paired with "
                                 f"{ctx.pair.name!r} but does not run through stem_s8.rsp")
        x_f, qp = ctx.pair.inputs[0], ctx.pair.attrs["int8"]
        ctx.require_disjoint(y, x_f)
        head = (ctx.ptr(x_f), c_float(qp["scale"]), c_int(qp["zero_point"]))

    def call(begin: int, count: int, s) -> str:
        if head and begin == 0:
            return c_call("dnn64_rsp_conv_quantized_s8", geom, *head, xp, zp, *s, begin,
                          count, q, yp)
        return c_call(fn, geom, xp, zp, *s, begin, count, q, yp)

    low.steps.append(Tiled(arrays, call))
    return low


def _gemm(ctx: Ctx, a: str, bt: np.ndarray, bias_name: str) -> Lowered:
    """int8 Y = A @ bt.T (+ bias) through dnn64_gemm_s8, tiled over the rows of bt; on the
    RSP (see gemm_on_rsp) one row through dnn64_rsp_gemv_s8 (the output channels in the
    lanes), several as the 1x1 Conv they are (m images of k channels of one position, bt
    its weights) through dnn64_rsp_conv_s8."""
    y = ctx.node.outputs[0]
    _require_int8(ctx, a, y)
    ctx.require_disjoint(y, a)
    p = ctx.node.attrs["int8"]
    n, k = bt.shape
    m = ctx.numel(a) // k
    low = Lowered(on_rsp=gemm_on_rsp(ctx, k))
    q = q8_out(ctx, low, p)
    ap, yp, zp = ctx.ptr(a), ctx.ptr(y), c_int(p["x_zero_point"])
    arrays = (np.ascontiguousarray(bt, dtype=np.int8), *channel_params(ctx, bias_name, p, n))
    if m == 1 and gemv_dma_on_rsp(ctx, k):
        low.on_rsp = True
        low.steps.append(gemv_dma_step(k, n, arrays, ap, zp, q, yp))
        return low
    if low.on_rsp and m == 1:
        low.steps.append(Tiled(arrays, lambda begin, count, s: c_call(
            "dnn64_rsp_gemv_s8", k, n, ap, zp, *s, begin, count, q, yp)))
        return low
    if low.on_rsp:
        geom = ctx.sym("geom")
        low.decls.append(struct_decl("dnn64_conv_geom", geom, {
            "n": m, "c_in": k, "h_in": 1, "w_in": 1, "c_out": n, "h_out": 1, "w_out": 1,
            "k_h": 1, "k_w": 1, "stride_h": 1, "stride_w": 1, "dil_h": 1, "dil_w": 1,
            "pad_top": 0, "pad_left": 0, "group": 1}))
        low.steps.append(Tiled(arrays, lambda begin, count, s: c_call(
            "dnn64_rsp_conv_s8", f"&{geom}", ap, zp, *s, begin, count, q, yp)))
        return low
    low.steps.append(Tiled(arrays, lambda begin, count, s: c_call(
        "dnn64_gemm_s8", m, k, n, ap, zp, s[0], 1, *s[1:], begin, count, q, yp)))
    return low


def gemm(ctx: Ctx) -> Lowered:
    a, b, c = node_inputs(ctx.node, 3)
    attrs = ctx.node.attrs
    if not ctx.is_const(b) or attrs["transA"] or not attrs["transB"]:
        raise unsupported(ctx.node, "int8 Gemm other than constant B with transB=1")
    return _gemm(ctx, a, np.asarray(ctx.const(b)), c)


def matmul(ctx: Ctx) -> Lowered:
    node = ctx.node
    a, b, c = node_inputs(node, 3)
    if ctx.is_const(b):
        if len(ctx.shape(b)) != 2:
            raise unsupported(node, "int8 MatMul with a constant B that is not 2-D")
        return _gemm(ctx, a, np.asarray(ctx.const(b)).T, c)
    y = node.outputs[0]
    _require_int8(ctx, a, b, y)
    a_shape, b_shape = ctx.shape(a), ctx.shape(b)
    if len(a_shape) < 2 or len(b_shape) < 2:
        raise unsupported(node, "int8 MatMul of 1-D operands")
    m, k = a_shape[-2:]
    n = b_shape[-1]
    batch = ctx.numel(y) // (m * n)
    strides = []
    for shape, size in ((a_shape, m * k), (b_shape, k * n)):
        count = int(np.prod(shape[:-2], dtype=np.int64))
        if count not in (1, batch):
            raise unsupported(node, "int8 MatMul broadcasting that is neither full nor none")
        strides.append(0 if count == 1 and batch > 1 else size)
    ctx.require_disjoint(y, a, b)
    p = node.attrs["int8"]
    low = Lowered()
    q = q8_out(ctx, low, p)
    low.steps.append(statement(c_call(
        "dnn64_matmul_s8", batch, m, k, n, ctx.ptr(a), strides[0], c_int(p["a_zero_point"]),
        ctx.ptr(b), strides[1], c_int(p["b_zero_point"]), c_int(p["multiplier"]),
        c_int(p["shift"]), q, ctx.ptr(y))))
    return low


_ADD_FIELDS = ("a_zero_point", "b_zero_point", "out_zero_point", "a_multiplier", "a_shift",
               "b_multiplier", "b_shift", "out_multiplier", "out_shift", "left_shift",
               "act_min", "act_max")
_MUL_FIELDS = ("a_zero_point", "b_zero_point", "out_zero_point", "multiplier", "shift",
               "act_min", "act_max")
_MINMAX_FIELDS = ("a_zero_point", "b_zero_point", "out_zero_point", "a_multiplier", "a_shift",
                  "b_multiplier", "b_shift")
# Each int8 element-wise op's kernel, its parameter struct and the struct's fields.
ELTWISE = {"Add": ("dnn64_add_s8", "dnn64_add_s8_params", _ADD_FIELDS),
            "Sub": ("dnn64_sub_s8", "dnn64_add_s8_params", _ADD_FIELDS),
            "Mul": ("dnn64_mul_s8", "dnn64_mul_s8_params", _MUL_FIELDS),
            "Div": ("dnn64_div_s8", "dnn64_mul_s8_params", _MUL_FIELDS),
            "Max": ("dnn64_max_s8", "dnn64_minmax_s8_params", _MINMAX_FIELDS),
            "Min": ("dnn64_min_s8", "dnn64_minmax_s8_params", _MINMAX_FIELDS)}


def eltwise_params(ctx: Ctx, low: Lowered, node: Node) -> str:
    """Declares an int8 element-wise node's parameter struct in ``low``; returns its
    symbol. An Add's or Sub's carries the tables its kernel folds the output stage into
    (intmath.add_tables), built here instead of by 512 requantisations on the console."""
    _, struct, fields = ELTWISE[node.op]
    p = node.attrs["int8"]
    values = [c_int(p[f]) for f in fields]
    if fields is _ADD_FIELDS:
        tables = intmath.add_tables(add_params_of(p), subtract=node.op == "Sub")
        values.append("NULL" if tables is None else const_table(
            ctx, low, "add_tables", "int32_t", tables.tolist(), per_line=DECL_LINE_BYTES // 4))
        fields = (*fields, "tables")
    sym = ctx.sym("params")
    low.decls.append(const_decl(struct, sym, braced(values), ", ".join(fields)))
    return sym


def binary(ctx: Ctx) -> Lowered:
    _require_int8(ctx, *ctx.node.inputs[:2], ctx.node.outputs[0])
    fn = ELTWISE[ctx.node.op][0]
    low = Lowered()
    bc, parts, pointers = binary_operands(ctx, low, np.int8)
    params = eltwise_params(ctx, low, ctx.node)
    values = channel_mul_on_rsp(ctx)
    low.on_rsp = values is not None

    def render(s) -> str:
        ap, bp, yp = pointers(s)
        if values is not None:
            _, c, h, w = ctx.shape(ctx.node.outputs[0])
            return c_call("dnn64_rsp_mul_channels_s8", bc, ap, bp, f"&{params}", yp, c, h, w,
                          values)
        return c_call(fn, bc, ap, bp, f"&{params}", yp)

    low.steps.append(Call(render, parts))
    return low


def _io(ctx: Ctx) -> tuple[str, str, dict]:
    """The node's first input and output, both int8, and its int8 parameters."""
    x, y = ctx.node.inputs[0], ctx.node.outputs[0]
    _require_int8(ctx, x, y)
    return x, y, ctx.node.attrs["int8"]


def lut(ctx: Ctx) -> Lowered:
    x, y, p = _io(ctx)
    check_inplace(ctx, y, x)
    low = Lowered()
    table = const_table(ctx, low, "lut", "int8_t", p["lut"])
    low.steps.append(statement(c_call("dnn64_lut_s8", table, ctx.ptr(x), ctx.ptr(y),
                                      ctx.numel(y))))
    return low


def _requant(p: dict) -> tuple[str, ...]:
    """multiplier, shift and output zero point: the arguments of a per-tensor rescale."""
    return c_int(p["multiplier"]), c_int(p["shift"]), c_int(p["out_zero_point"])


def pool(ctx: Ctx) -> Lowered:
    _, _, p = _io(ctx)
    if ctx.node.op == "MaxPool":  # max of int8 values needs no parameters
        return common.pool_call(ctx, "s8")
    return common.pool_call(ctx, "s8", c_int(p["x_zero_point"]), c_int(p["act_min"]),
                     c_int(p["act_max"]))


def global_avgpool(ctx: Ctx) -> Lowered:
    """dnn64_global_avgpool_s8, or unless `kernels: cpu` dnn64_rsp_global_avgpool_s8 (the
    RSP fetching and summing the planes; measured faster on MobileNetV3-Small's pools,
    docs/benchmarks.md)."""
    _, _, p = _io(ctx)
    _, _, h, w = ctx.shape(ctx.node.inputs[0])
    on_rsp = sums_on_rsp(ctx, h * w)
    return common.global_avgpool_call(ctx, "s8", c_int(p["act_min"]), c_int(p["act_max"]),
                                      on_rsp=on_rsp)


def reduce_mean(ctx: Ctx) -> Lowered:
    """dnn64_reduce_mean_s8, or over trailing axes unless `kernels: cpu`
    dnn64_rsp_reduce_mean_s8 (the planes summed on the RSP as GlobalAveragePool's)."""
    x, y, p = _io(ctx)
    axes = sorted(ctx.node.attrs["axes"])
    if not axes:
        return copy(ctx)
    shape = ctx.shape(x)
    n = int(np.prod(shape[axes[0]:], dtype=np.int64))
    if axes != list(range(axes[0], len(shape))) or not sums_on_rsp(ctx, n):
        return common.reduce_call(ctx, "dnn64_reduce_mean_s8", c_int(p["x_zero_point"]),
                                  *_requant(p))
    ctx.require_disjoint(y, x)
    return Lowered(steps=[statement(c_call(
        "dnn64_rsp_reduce_mean_s8", ctx.numel(x) // n, n, c_int(p["x_zero_point"]),
        *_requant(p), ctx.ptr(x), ctx.ptr(y)))], on_rsp=True)


def reduce_max(ctx: Ctx) -> Lowered:
    """dnn64_reduce_max_s8 (the output keeps the input's quantization)."""
    _io(ctx)
    if not ctx.node.attrs["axes"]:
        return copy(ctx)
    return common.reduce_call(ctx, "dnn64_reduce_max_s8")


def softmax(ctx: Ctx) -> Lowered:
    _, _, p = _io(ctx)
    low = Lowered()
    table = const_table(ctx, low, "exp_table", "int32_t", p["exp_table"])
    return common.softmax_call(ctx, low, "s8", table, *_requant(p))


def pad(ctx: Ctx) -> Lowered:
    node = ctx.node
    x, y, p = _io(ctx)
    if node.attrs["mode"] not in PAD_MODES:
        raise unsupported(node, f"Pad mode {node.attrs['mode']!r}")
    low = Lowered()
    value = "NULL"
    if node.attrs["mode"] == "constant":
        sym = ctx.sym("value")
        low.decls.append(const_decl("int8_t", sym, c_int(p.get("pad_value", 0))))
        value = f"&{sym}"
    rank = len(ctx.shape(x))
    return pad_call(ctx, x, y, node.attrs["pads"][:rank], ctx.shape(y),
                    PAD_MODES[node.attrs["mode"]], value, low)


def resize_int8(ctx: Ctx) -> Lowered:
    if ctx.node.attrs["mode"] == "nearest":
        return resize(ctx)
    a = ctx.node.attrs
    x, y, _ = _io(ctx)
    in_shape, out_shape = ctx.shape(x), ctx.shape(y)
    coord = a["coordinate_transformation_mode"]
    if coord not in COORD_MODES or len(in_shape) < 2 or in_shape[:-2] != out_shape[:-2]:
        raise unsupported(ctx.node, "this int8 linear Resize")
    ctx.require_disjoint(y, x)
    return Lowered(steps=[statement(c_call("dnn64_resize_linear_s8",
                                           resize_geometry(ctx, x, y), ctx.ptr(x),
                                           ctx.ptr(y)))])


def _convert(ctx: Ctx, fn: str, int8_tensor: str) -> Lowered:
    """fp32 <-> int8 through ``fn(x, count, scale, zero point, y)``."""
    x, y = ctx.node.inputs[0], ctx.node.outputs[0]
    _require_int8(ctx, int8_tensor)
    ctx.require_disjoint(y, x)
    p = ctx.node.attrs["int8"]
    return Lowered(steps=[statement(c_call(fn, ctx.ptr(x), ctx.numel(x), c_float(p["scale"]),
                                           c_int(p["zero_point"]), ctx.ptr(y)))])


def quantize(ctx: Ctx) -> Lowered:
    if ctx.pair is not None:  # routing.quantize_stem_pairs: the Conv's call quantizes
        _require_int8(ctx, ctx.node.outputs[0])
        return Lowered(note=f'quantized inside node "{c_comment(ctx.pair.name)}": '
                            "dnn64_rsp_conv_quantized_s8, band by band")
    return _convert(ctx, "dnn64_quantize_f32_s8", ctx.node.outputs[0])


def dequantize(ctx: Ctx) -> Lowered:
    return _convert(ctx, "dnn64_dequantize_s8_f32", ctx.node.inputs[0])


def requantize(ctx: Ctx) -> Lowered:
    x, y, p = _io(ctx)
    check_inplace(ctx, y, x)
    return Lowered(steps=[statement(c_call(
        "dnn64_requantize_s8", ctx.ptr(x), ctx.numel(x), c_int(p["x_zero_point"]),
        *_requant(p), ctx.ptr(y)))])


INT8_EMITTERS: dict[str, Emitter] = {
    "Conv": conv,
    "ConvTranspose": conv,
    "Gemm": gemm,
    "MatMul": matmul,
    **dict.fromkeys(ELTWISE, binary),
    **dict.fromkeys((*ACTIVATION_OPS, *SCALAR_OPERAND_ACTIVATIONS), lut),
    "MaxPool": pool,
    "AveragePool": pool,
    "GlobalAveragePool": global_avgpool,
    "ReduceMean": reduce_mean,
    "Softmax": softmax,
    **dict.fromkeys(VIEW_OPS, copy),
    "Transpose": transpose,
    "Concat": concat,
    "Pad": pad,
    "Resize": resize_int8,
    "QuantizeLinear": quantize,
    "DequantizeLinear": dequantize,
    "Requantize": requantize,
    # structural operators (issue 22); an int8 ReduceSum is a ReduceMean of count 1
    "ReduceSum": reduce_mean,
    "ReduceMax": reduce_max,
    "Slice": slice_,
    "Expand": expand,
    "Tile": tile,
}
