"""Helpers shared by the emitters: parameter blocks, shapes, aliasing rules, staged
constants, and the calls whose fp32 and int8 forms differ only in the kernel suffix
(``f32`` / ``s8``) and the int8 quantization arguments."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from dnn64build.codegen.cfmt import c_call, c_int, c_ints
from dnn64build.codegen.emit import array_decl, braced, const_decl, struct_decl
from dnn64build.codegen.lowering import Ctx, Lowered, statement, unsupported
from dnn64build.ir.graph import Node

Emitter = Callable[[Ctx], Lowered]
# (staged part pointers) -> the C pointer of each operand, in order
Pointers = Callable[[Sequence[str]], list[str]]
MAX_DIMS = 6  # DNN64_MAX_DIMS of kernels/dnn64_kernels.h


def require_float(ctx: Ctx, *names: str) -> None:
    """Refuse tensors that are not float32 (an fp32 emitter met another dtype)."""
    for name in names:
        if name and ctx.dtype(name) != "float32":
            raise unsupported(ctx.node, f"tensor {name!r} of dtype {ctx.dtype(name)}")


def require_max_rank(ctx: Ctx, rank: int) -> None:
    """Kernels with a dims array take at most MAX_DIMS dims."""
    if rank > MAX_DIMS:
        raise unsupported(ctx.node, f"rank {rank} (at most {MAX_DIMS})")


def node_inputs(node: Node, count: int) -> list[str]:
    """The node's first ``count`` inputs, "" for omitted ones."""
    return (list(node.inputs) + [""] * count)[:count]

def outer_inner(shape: list[int], axis: int) -> tuple[int, int, int]:
    return (int(np.prod(shape[:axis], dtype=np.int64)), shape[axis],
            int(np.prod(shape[axis + 1:], dtype=np.int64)))

def check_inplace(ctx: Ctx, out: str, name: str) -> None:
    """An element-wise output may share memory with an operand it does not broadcast."""
    if ctx.is_const(name) or not ctx.arena.overlaps(out, name):
        return
    if not (ctx.same_memory(out, name) and ctx.shape(name) == ctx.shape(out)):
        ctx.require_disjoint(out, name)

def conv_geom(ctx: Ctx, low: Lowered, x: str, y: str, c_out: int, kernel: list[int]) -> str:
    a = ctx.node.attrs
    n, c, h, w = ctx.shape(x)
    _, _, oh, ow = ctx.shape(y)
    sym = ctx.sym("geom")
    fields = {
        "n": n, "c_in": c, "h_in": h, "w_in": w, "c_out": c_out, "h_out": oh, "w_out": ow,
        "k_h": kernel[0], "k_w": kernel[1], "stride_h": a["strides"][0],
        "stride_w": a["strides"][1], "dil_h": a["dilations"][0], "dil_w": a["dilations"][1],
        "pad_top": a["pads"][0], "pad_left": a["pads"][1], "group": a["group"],
    }
    low.decls.append(struct_decl("dnn64_conv_geom", sym, fields))
    return f"&{sym}"

def pool_geom(ctx: Ctx, low: Lowered, x: str, y: str) -> str:
    a = ctx.node.attrs
    n, c, h, w = ctx.shape(x)
    oh, ow = ctx.shape(y)[2:]
    top, left, bottom, right = a["pads"]
    fields = {
        "n": n, "c": c, "h_in": h, "w_in": w, "h_out": oh, "w_out": ow,
        "k_h": a["kernel_shape"][0], "k_w": a["kernel_shape"][1],
        "stride_h": a["strides"][0], "stride_w": a["strides"][1],
        "dil_h": a["dilations"][0], "dil_w": a["dilations"][1],
        "pad_top": top, "pad_left": left, "pad_bottom": bottom, "pad_right": right,
    }
    sym = ctx.sym("geom")
    low.decls.append(struct_decl("dnn64_pool_geom", sym, fields))
    return f"&{sym}"

def _padded(shape: list[int], rank: int) -> list[int]:
    return [1] * (rank - len(shape)) + list(shape)


def _strides(shape: list[int], dims: list[int]) -> list[int]:
    """Element strides of ``shape`` (right-aligned to ``dims``), 0 where broadcast."""
    padded = _padded(shape, len(dims))
    result, step = [0] * len(dims), 1
    for d in range(len(dims) - 1, -1, -1):
        result[d] = 0 if padded[d] == 1 and dims[d] != 1 else step
        step *= padded[d]
    return result


def bcast_decl(ctx: Ctx, low: Lowered, a_shape: list[int], b_shape: list[int],
           out_shape: list[int]) -> str:
    dims = list(out_shape) or [1]
    require_max_rank(ctx, len(dims))
    pad = [0] * (MAX_DIMS - len(dims))
    sym = ctx.sym("bcast")
    low.decls.append(const_decl("dnn64_bcast", sym, braced([
        len(dims), c_ints(dims + pad), c_ints(_strides(a_shape, dims) + pad),
        c_ints(_strides(b_shape, dims) + pad)])))
    return f"&{sym}"

def dims_decl(ctx: Ctx, low: Lowered, base: str, values: list[int]) -> str:
    sym = ctx.sym(base)
    low.decls.append(array_decl("int32_t", sym, [c_int(v) for v in values or [0]]))
    return sym


def staged(ctx: Ctx, names: Sequence[str], dtype: type | None = None
           ) -> tuple[tuple[np.ndarray, ...], Pointers]:
    """The constants among ``names`` as the parts of one tile (each once, converted to
    ``dtype`` if given), and the C pointer of every name given the staged pointers."""
    consts = list(dict.fromkeys(n for n in names if ctx.is_const(n)))
    parts = tuple(np.ascontiguousarray(ctx.const(n), dtype=dtype) for n in consts)

    def pointers(p: Sequence[str]) -> list[str]:
        given = dict(zip(consts, p, strict=True))
        return [given[n] if n in given else ctx.ptr(n) for n in names]

    return parts, pointers


def binary_operands(ctx: Ctx, low: Lowered, dtype: type
                    ) -> tuple[str, tuple[np.ndarray, ...], Pointers]:
    """Add/Sub/Mul/Div: checks how the output may alias A and B and declares the broadcast
    block; returns its address, the constant operands to stage, and the pointers of A, B
    and Y given the staged pointers."""
    a, b = ctx.node.inputs[:2]
    y = ctx.node.outputs[0]
    for name in (a, b):
        check_inplace(ctx, y, name)
    bc = bcast_decl(ctx, low, ctx.shape(a), ctx.shape(b), ctx.shape(y))
    parts, pointers = staged(ctx, (a, b, y), dtype)
    return bc, parts, pointers


def conv_rows(node: Node, weight: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """A Conv/ConvTranspose weight as output-channel rows [C_out, C_in/g * kH * kW], and
    the kernel size. ConvTranspose's [C_in, C_out/g, kH, kW] is reordered group by group:
    [g, C_in/g, C_out/g, kH, kW] -> [g, C_out/g, C_in/g, kH, kW]."""
    kernel = list(weight.shape[-2:])
    if node.op == "ConvTranspose":
        c_in, per_group = weight.shape[:2]
        g = node.attrs["group"]
        weight = (weight.reshape(g, c_in // g, per_group, *kernel).transpose(0, 2, 1, 3, 4)
                  .reshape(g * per_group, -1))
    return np.ascontiguousarray(weight.reshape(weight.shape[0], -1)), kernel


def conv_weight(ctx: Ctx, low: Lowered, dtype: type) -> tuple[np.ndarray, str]:
    """The node's constant Conv/ConvTranspose weight as output-channel rows of ``dtype``
    (conv_rows), and the address of its geometry block, declared in ``low``."""
    node = ctx.node
    rows, kernel = conv_rows(node, np.asarray(ctx.const(node.inputs[1]), dtype=dtype))
    return rows, conv_geom(ctx, low, node.inputs[0], node.outputs[0], rows.shape[0], kernel)


def pool_call(ctx: Ctx, suffix: str, *avg_args: object) -> Lowered:
    """MaxPool / AveragePool through dnn64_{max,avg}pool_<suffix>; ``avg_args`` follow
    count_include_pad in the average pool's call."""
    node = ctx.node
    x, y = node.inputs[0], node.outputs[0]
    ctx.require_disjoint(y, x)
    low = Lowered()
    geom = pool_geom(ctx, low, x, y)
    if node.op == "MaxPool":
        text = c_call(f"dnn64_maxpool_{suffix}", geom, ctx.ptr(x), ctx.ptr(y))
    else:
        text = c_call(f"dnn64_avgpool_{suffix}", geom, node.attrs["count_include_pad"],
                      *avg_args, ctx.ptr(x), ctx.ptr(y))
    low.steps.append(statement(text))
    return low


def global_avgpool_call(ctx: Ctx, suffix: str, *args: object, on_rsp: bool = False) -> Lowered:
    """dnn64_global_avgpool_<suffix>(planes, plane size, args..., x, y), or with ``on_rsp``
    dnn64_rsp_global_avgpool_<suffix> (the same arguments)."""
    x, y = ctx.node.inputs[0], ctx.node.outputs[0]
    ctx.require_disjoint(y, x)
    n, c, h, w = ctx.shape(x)
    fn = f"dnn64_{'rsp_' if on_rsp else ''}global_avgpool_{suffix}"
    text = c_call(fn, n * c, h * w, *args, ctx.ptr(x), ctx.ptr(y))
    return Lowered(steps=[statement(text)], on_rsp=on_rsp)


def reduce_call(ctx: Ctx, function: str, *args: object) -> Lowered:
    """``function``(rank, dims, axes mask, args..., x, y): dnn64_reduce_<op>_<suffix>."""
    x, y = ctx.node.inputs[0], ctx.node.outputs[0]
    ctx.require_disjoint(y, x)
    shape = ctx.shape(x)
    require_max_rank(ctx, len(shape))
    low = Lowered()
    dims = dims_decl(ctx, low, "dims", shape)
    mask = sum(1 << a for a in ctx.node.attrs["axes"])
    low.steps.append(statement(c_call(function, len(shape), dims, mask, *args, ctx.ptr(x),
                                      ctx.ptr(y))))
    return low


def softmax_call(ctx: Ctx, low: Lowered, suffix: str, *args: object,
                 kernel: str = "dnn64_softmax") -> Lowered:
    """<kernel>_<suffix>(outer, length, inner, x, args..., y) over attrs["axis"]."""
    x, y = ctx.node.inputs[0], ctx.node.outputs[0]
    ctx.require_disjoint(y, x)
    outer, length, inner = outer_inner(ctx.shape(x), ctx.node.attrs["axis"])
    low.steps.append(statement(c_call(f"{kernel}_{suffix}", outer, length, inner,
                                      ctx.ptr(x), *args, ctx.ptr(y))))
    return low
