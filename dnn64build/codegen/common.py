"""Helpers shared by the emitters: parameter blocks, shapes, aliasing rules."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dnn64build.codegen.cfmt import c_ints, c_struct
from dnn64build.codegen.lowering import Ctx, Lowered, unsupported
from dnn64build.ir.graph import Node

Emitter = Callable[[Ctx], Lowered]
MAX_DIMS = 6  # DNN64_MAX_DIMS of kernels/dnn64_kernels.h


def require_float(ctx: Ctx, *names: str) -> None:
    """Refuse tensors that are not float32 (an fp32 emitter met another dtype)."""
    for name in names:
        if name and ctx.dtype(name) != "float32":
            raise unsupported(ctx.node, f"tensor {name!r} of dtype {ctx.dtype(name)}")


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
    low.decls.append(c_struct("dnn64_conv_geom", sym, fields))
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
    low.decls.append(c_struct("dnn64_pool_geom", sym, fields))
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
    if len(dims) > MAX_DIMS:
        raise unsupported(ctx.node, f"rank {len(dims)} (at most {MAX_DIMS})")
    pad = [0] * (MAX_DIMS - len(dims))
    sym = ctx.sym("bcast")
    low.decls.append(
        f"static const dnn64_bcast {sym} = {{{len(dims)}, {c_ints(dims + pad)}, "
        f"{c_ints(_strides(a_shape, dims) + pad)}, {c_ints(_strides(b_shape, dims) + pad)}}};")
    return f"&{sym}"

def dims_decl(ctx: Ctx, low: Lowered, base: str, values: list[int]) -> str:
    sym = ctx.sym(base)
    low.decls.append(f"static const int32_t {sym}[{max(len(values), 1)}] = "
                     f"{c_ints(values or [0])};")
    return sym
