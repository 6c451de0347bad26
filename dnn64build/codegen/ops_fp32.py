"""Emitters for fp32 nodes, one per operator.

Each emitter reads its node through a ``Ctx`` and returns ``Lowered`` (see
dnn64build.codegen.lowering). Parameters are printed as file-scope ``static
const`` structs named after the node's schedule index, so every call reads as one
line with the ONNX node named in the comment above it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dnn64build.codegen.cfmt import c_call, c_float
from dnn64build.codegen.common import (
    Emitter,
    bcast_decl,
    binary_operands,
    check_inplace,
    conv_weight,
    global_avgpool_call,
    node_inputs,
    pool_call,
    reduce_call,
    require_float,
    softmax_call,
    staged,
)
from dnn64build.codegen.emit import braced, const_decl
from dnn64build.codegen.lowering import Call, Ctx, Lowered, Tiled, statement, unsupported
from dnn64build.codegen.ops_movement import (
    cast,
    concat,
    copy,
    expand,
    gather,
    pad,
    resize,
    slice_,
    tile,
    transpose,
)
from dnn64build.ir.ops import ACTIVATION_OF_OP, VIEW_OPS


def _plain_kind(name: str) -> Callable[[dict], tuple[str, float, float]]:
    """An activation without parameters: kind DNN64_ACT_<NAME>."""
    kind = f"DNN64_ACT_{name.upper()}"
    return lambda p: (kind, 0.0, 0.0)


# fused/stand-alone activation name -> (kernel kind, alpha, beta) from its params
_ACT = {
    "relu": lambda p: ("DNN64_ACT_RELU", 0.0, 0.0),
    "relu6": lambda p: ("DNN64_ACT_CLIP", 0.0, 6.0),
    "clip": lambda p: ("DNN64_ACT_CLIP",
                       -np.inf if p.get("min") is None else p["min"],
                       np.inf if p.get("max") is None else p["max"]),
    "leaky_relu": lambda p: ("DNN64_ACT_LEAKY_RELU", p["alpha"], 0.0),
    "sigmoid": lambda p: ("DNN64_ACT_SIGMOID", 0.0, 0.0),
    "tanh": lambda p: ("DNN64_ACT_TANH", 0.0, 0.0),
    "hard_sigmoid": lambda p: ("DNN64_ACT_HARD_SIGMOID", p["alpha"], p["beta"]),
    "hard_swish": lambda p: ("DNN64_ACT_HARD_SWISH", 0.0, 0.0),
    "silu": lambda p: ("DNN64_ACT_SILU", 0.0, 0.0),
    # unary element-wise ops: (kind, alpha, beta) as dnn64_kernels.h documents each kind
    **{name: _plain_kind(name) for name in ("neg", "abs", "exp", "log", "sqrt", "reciprocal",
                                             "sign", "erf", "softplus", "softsign", "mish")},
    "gelu": lambda p: ("DNN64_ACT_GELU_TANH" if p.get("approximate") == "tanh"
                       else "DNN64_ACT_GELU", 0.0, 0.0),
    "elu": lambda p: ("DNN64_ACT_ELU", p["alpha"], 0.0),
    "selu": lambda p: ("DNN64_ACT_SELU", p["alpha"], p["gamma"]),
    "celu": lambda p: ("DNN64_ACT_CELU", p["alpha"], 0.0),
    "thresholded_relu": lambda p: ("DNN64_ACT_THRESHOLDED_RELU", p["alpha"], 0.0),
    "shrink": lambda p: ("DNN64_ACT_SHRINK", p["lambd"], p["bias"]),
    "swish": lambda p: ("DNN64_ACT_SWISH", p["alpha"], 0.0),
}


def act_decl(ctx: Ctx, low: Lowered, name: str | None, params: dict) -> str:
    """Declare the dnn64_act_f32 for activation ``name``; its pointer ("NULL" for none)."""
    if name is None:
        return "NULL"
    if name not in _ACT:
        raise unsupported(ctx.node, f"fused activation {name!r}")
    kind, alpha, beta = _ACT[name](params)
    sym = ctx.sym("act")
    low.decls.append(const_decl("dnn64_act_f32", sym, braced([kind, c_float(alpha),
                                                               c_float(beta)])))
    return f"&{sym}"


def fused_act(ctx: Ctx, low: Lowered) -> str:
    """The node's fused activation declared (act_decl): its pointer, "NULL" for none."""
    attrs = ctx.node.attrs
    return act_decl(ctx, low, attrs.get("activation"), attrs.get("activation_params", {}))

def _require_4d(ctx: Ctx, name: str) -> None:
    if len(ctx.shape(name)) != 4:
        raise unsupported(ctx.node, "an input that is not 4-D (NCHW)")

# --- convolution, Gemm, MatMul ---

def bias_vector(ctx: Ctx, name: str, channels: int) -> np.ndarray | None:
    """The constant fp32 bias ``name`` of ``channels`` values, staged with the weights;
    None without one."""
    if not name:
        return None
    if not ctx.is_const(name):
        raise unsupported(ctx.node, "a bias that is not constant")
    return np.ascontiguousarray(ctx.const(name), dtype=np.float32).reshape(channels)


def _weight_tiles(weight: np.ndarray, bias: np.ndarray | None,
                  render: Callable[[int, int, str, str], str]) -> Tiled:
    """Weight rows and the optional bias tiled together; ``render(begin, count, weight
    pointer, bias pointer or "NULL")``."""
    if bias is None:
        return Tiled((weight,), lambda begin, count, p: render(begin, count, p[0], "NULL"))
    return Tiled((weight, bias), lambda begin, count, p: render(begin, count, p[0], p[1]))


def conv(ctx: Ctx) -> Lowered:
    node = ctx.node
    x, w, b = node_inputs(node, 3)
    y = node.outputs[0]
    require_float(ctx, x, y)
    _require_4d(ctx, x)
    if not ctx.is_const(w):
        raise unsupported(ctx.node, "a weight that is not constant")
    ctx.require_disjoint(y, x)
    low = Lowered()
    rows, geom = conv_weight(ctx, low, np.float32)
    bias = bias_vector(ctx, b, rows.shape[0])
    act = fused_act(ctx, low)
    fn = "dnn64_conv_transpose_f32" if node.op == "ConvTranspose" else "dnn64_conv_f32"
    xp, yp = ctx.ptr(x), ctx.ptr(y)
    low.steps.append(_weight_tiles(rows, bias, lambda begin, count, wp, bp: c_call(
        fn, geom, xp, wp, bp, begin, count, act, yp)))
    return low


def _gemm_call(ctx: Ctx, low: Lowered, a: str, y: str, m: int, k: int, bt: np.ndarray,
               bias: np.ndarray | None, act: str) -> None:
    """Y[m, n] = A[m, k] @ bt.T + bias, tiled over the rows of bt ([n, k])."""
    ctx.require_disjoint(y, a)
    n = bt.shape[0]
    ap, yp = ctx.ptr(a), ctx.ptr(y)
    low.steps.append(_weight_tiles(
        np.ascontiguousarray(bt, dtype=np.float32), bias,
        lambda begin, count, wp, bp: c_call("dnn64_gemm_f32", m, k, n, ap, wp, 1, bp, begin,
                                            count, act, yp)))


def gemm(ctx: Ctx) -> Lowered:
    node = ctx.node
    a, b, c = node_inputs(node, 3)
    y = node.outputs[0]
    require_float(ctx, a, y)
    if ctx.is_const(a) or not ctx.is_const(b):
        raise unsupported(node, "Gemm without a constant B and an activation A")
    attrs = node.attrs
    m, n = ctx.shape(y)
    k = ctx.shape(a)[0] if attrs["transA"] else ctx.shape(a)[1]
    if attrs["transA"] and m != 1 and k != 1:
        raise unsupported(node, "transA=1 (with both dims of A above 1)")
    weight = np.asarray(ctx.const(b), dtype=np.float32)
    bt = weight if attrs["transB"] else weight.T
    if attrs["alpha"] != 1.0:
        bt = bt * np.float32(attrs["alpha"])
    bias = None
    if c:
        if not ctx.is_const(c):
            raise unsupported(node, "a C input that is not constant")
        full = np.broadcast_to(np.asarray(ctx.const(c), dtype=np.float32), (m, n))
        if not np.array_equal(full, np.broadcast_to(full[0], (m, n))):
            raise unsupported(node, "a C input that differs between rows")
        bias = np.ascontiguousarray(full[0])
        if attrs["beta"] != 1.0:
            bias = bias * np.float32(attrs["beta"])
    low = Lowered()
    _gemm_call(ctx, low, a, y, m, k, bt, bias, fused_act(ctx, low))
    return low


def matmul(ctx: Ctx) -> Lowered:
    node = ctx.node
    a, b = node.inputs[:2]
    y = node.outputs[0]
    require_float(ctx, a, b, y)
    low = Lowered()
    a_shape, b_shape = ctx.shape(a), ctx.shape(b)
    if ctx.is_const(b) and not ctx.is_const(a) and len(b_shape) == 2:
        k, n = b_shape
        m = int(np.prod(a_shape[:-1], dtype=np.int64))
        bt = np.asarray(ctx.const(b), dtype=np.float32).T
        _gemm_call(ctx, low, a, y, m, k, bt, None, "NULL")
        return low
    a_mat = [1, *a_shape] if len(a_shape) == 1 else a_shape
    b_mat = [*b_shape, 1] if len(b_shape) == 1 else b_shape
    m, k = a_mat[-2:]
    n = b_mat[-1]
    batch_dims = list(np.broadcast_shapes(tuple(a_mat[:-2]), tuple(b_mat[:-2])))
    batch = int(np.prod(batch_dims, dtype=np.int64))

    def stride(dims: list[int], size: int) -> int:
        if int(np.prod(dims, dtype=np.int64)) == 1:
            return 0
        if [1] * (len(batch_dims) - len(dims)) + dims == batch_dims:
            return size
        raise unsupported(node, "MatMul broadcasting that is neither full nor none")

    sa, sb = stride(a_mat[:-2], m * k), stride(b_mat[:-2], k * n)
    ctx.require_disjoint(y, a, b)
    parts, pointers = staged(ctx, (a, b), np.float32)

    def render(p) -> str:
        ap, bp = pointers(p)
        return c_call("dnn64_matmul_f32", batch, m, k, n, ap, sa, bp, sb, ctx.ptr(y))

    low.steps.append(Call(render, parts))
    return low

# --- element-wise ---

_BINARY = {"Add": "DNN64_BINARY_ADD", "Sub": "DNN64_BINARY_SUB", "Mul": "DNN64_BINARY_MUL",
           "Div": "DNN64_BINARY_DIV", "Max": "DNN64_BINARY_MAX", "Min": "DNN64_BINARY_MIN",
           "PRelu": "DNN64_BINARY_PRELU", "Pow": "DNN64_BINARY_POW"}


def binary(ctx: Ctx) -> Lowered:
    a, b = ctx.node.inputs[:2]
    # Pow's exponent may be an integer constant: it is staged as float32 like any constant
    operands = (a,) if ctx.node.op == "Pow" and ctx.is_const(b) else (a, b)
    require_float(ctx, *operands, ctx.node.outputs[0])
    low = Lowered()
    bc, parts, pointers = binary_operands(ctx, low, np.float32)
    op = _BINARY[ctx.node.op]
    low.steps.append(Call(lambda p: c_call("dnn64_binary_f32", op, bc, *pointers(p)), parts))
    return low


def activation(ctx: Ctx) -> Lowered:
    node = ctx.node
    x, y = node.inputs[0], node.outputs[0]
    require_float(ctx, x, y)
    check_inplace(ctx, y, x)
    low = Lowered()
    act = act_decl(ctx, low, ACTIVATION_OF_OP[node.op], node.attrs)
    low.steps.append(statement(c_call("dnn64_activation_f32", act, ctx.ptr(x), ctx.ptr(y),
                                      ctx.numel(y))))
    return low


def batch_norm(ctx: Ctx) -> Lowered:
    node = ctx.node
    x, scale, bias, mean, var = node.inputs[:5]
    y = node.outputs[0]
    require_float(ctx, x, y)
    if not all(ctx.is_const(t) for t in (scale, bias, mean, var)):
        raise unsupported(node, "BatchNormalization with non-constant statistics")
    check_inplace(ctx, y, x)
    f32 = [np.asarray(ctx.const(t), dtype=np.float32) for t in (scale, bias, mean, var)]
    mul = f32[0] / np.sqrt(f32[3] + np.float32(node.attrs["epsilon"]))
    add = f32[1] - f32[2] * mul
    shape = ctx.shape(x)
    channel = [shape[1]] + [1] * (len(shape) - 2)
    low = Lowered()
    bc = bcast_decl(ctx, low, shape, channel, shape)
    xp, yp = ctx.ptr(x), ctx.ptr(y)
    low.steps.append(Call(
        lambda p: (c_call("dnn64_binary_f32", "DNN64_BINARY_MUL", bc, xp, p[0], yp) + "\n" +
                   c_call("dnn64_binary_f32", "DNN64_BINARY_ADD", bc, yp, p[1], yp)),
        (np.ascontiguousarray(mul), np.ascontiguousarray(add))))
    return low

# --- pooling, softmax, reductions ---

def pool(ctx: Ctx) -> Lowered:
    node = ctx.node
    require_float(ctx, node.inputs[0], node.outputs[0])
    _require_4d(ctx, node.inputs[0])
    if len(node.outputs) > 1 and node.outputs[1]:
        raise unsupported(node, "MaxPool's Indices output")
    return pool_call(ctx, "f32")


def global_avgpool(ctx: Ctx) -> Lowered:
    require_float(ctx, ctx.node.inputs[0], ctx.node.outputs[0])
    return global_avgpool_call(ctx, "f32")


def softmax(ctx: Ctx) -> Lowered:
    require_float(ctx, ctx.node.inputs[0], ctx.node.outputs[0])
    kernel = "dnn64_log_softmax" if ctx.node.op == "LogSoftmax" else "dnn64_softmax"
    return softmax_call(ctx, Lowered(), "f32", kernel=kernel)


def reduce(ctx: Ctx) -> Lowered:
    """ReduceMean, ReduceSum, ReduceMax: dnn64_reduce_<mean|sum|max>_f32."""
    node = ctx.node
    x = node.inputs[0]
    require_float(ctx, x, node.outputs[0])
    if not node.attrs["axes"]:
        return copy(ctx)
    return reduce_call(ctx, f"dnn64_reduce_{node.op[len('Reduce'):].lower()}_f32")


# --- structural operators (issue 22) ---

def lrn(ctx: Ctx) -> Lowered:
    node = ctx.node
    x, y = node.inputs[0], node.outputs[0]
    require_float(ctx, x, y)
    ctx.require_disjoint(y, x)
    n, c = ctx.shape(x)[:2]
    a = node.attrs
    low = Lowered()
    low.steps.append(statement(c_call(
        "dnn64_lrn_f32", n, c, ctx.numel(x) // (n * c), a["size"], c_float(a["alpha"]),
        c_float(a["beta"]), c_float(a["bias"]), ctx.ptr(x), ctx.ptr(y))))
    return low


def layer_norm(ctx: Ctx) -> Lowered:
    """dnn64_layer_norm_f32 over the dims from ``axis`` on; scale and bias constants
    broadcast to one full row."""
    node = ctx.node
    x, scale, bias = node_inputs(node, 3)
    y = node.outputs[0]
    require_float(ctx, x, y)
    if not all(ctx.is_const(t) for t in (scale, bias) if t):
        raise unsupported(node, "LayerNormalization with a scale or bias that is not constant")
    check_inplace(ctx, y, x)
    shape = ctx.shape(x)
    row = shape[node.attrs["axis"]:]
    inner = int(np.prod(row, dtype=np.int64))
    rows = [np.ascontiguousarray(np.broadcast_to(np.asarray(ctx.const(t), np.float32), row))
            .reshape(inner) for t in (scale, bias) if t]
    low = Lowered()
    xp, yp, eps = ctx.ptr(x), ctx.ptr(y), c_float(node.attrs["epsilon"])
    outer = ctx.numel(x) // inner
    low.steps.append(Call(lambda p: c_call("dnn64_layer_norm_f32", outer, inner, eps, xp, p[0],
                                           p[1] if len(p) > 1 else "NULL", yp), tuple(rows)))
    return low


def where(ctx: Ctx) -> Lowered:
    """dnn64_select: the constant condition broadcast to the output as a byte mask."""
    node = ctx.node
    cond, a, b = node.inputs[:3]
    y = node.outputs[0]
    require_float(ctx, a, b, y)
    if not ctx.is_const(cond):
        raise unsupported(node, "Where with a condition that is not constant")
    ctx.require_disjoint(y, a, b)
    shape = ctx.shape(y)
    mask = np.ascontiguousarray(np.broadcast_to(np.asarray(ctx.const(cond), bool), shape),
                                dtype=np.int8).reshape(-1)  # staged as int8: 0 or 1
    low = Lowered()
    bc = bcast_decl(ctx, low, ctx.shape(a), ctx.shape(b), shape)
    parts, pointers = staged(ctx, (a, b), np.float32)
    low.steps.append(Call(lambda p: c_call("dnn64_select", 4, bc, f"(const uint8_t *){p[0]}",
                                           *pointers(p[1:]), ctx.ptr(y)), (mask, *parts)))
    return low


FP32_EMITTERS: dict[str, Emitter] = {
    "Conv": conv,
    "ConvTranspose": conv,
    "Gemm": gemm,
    "MatMul": matmul,
    **dict.fromkeys(_BINARY, binary),
    **dict.fromkeys(ACTIVATION_OF_OP, activation),
    "BatchNormalization": batch_norm,
    "Softmax": softmax,
    "LogSoftmax": softmax,
    "MaxPool": pool,
    "AveragePool": pool,
    "GlobalAveragePool": global_avgpool,
    "ReduceMean": reduce,
    "Concat": concat,
    **dict.fromkeys(VIEW_OPS, copy),
    "Transpose": transpose,
    "Pad": pad,
    "Slice": slice_,
    "Gather": gather,
    "Resize": resize,
    "Cast": cast,
    # structural operators (issue 22)
    "LRN": lrn,
    "ReduceSum": reduce,
    "ReduceMax": reduce,
    "Expand": expand,
    "Tile": tile,
    "LayerNormalization": layer_norm,
    "Where": where,
}
