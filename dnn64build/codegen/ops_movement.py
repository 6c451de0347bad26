"""Emitters for data movement, for any element type (fp32 and int8 alike).

Views the plan aliased emit no code; everything else is a copy, crop, pad,
transpose or nearest resize through the element-size-generic kernels.
"""

from __future__ import annotations

import numpy as np

from dnn64build.codegen.cfmt import c_call, c_float
from dnn64build.codegen.common import (
    dims_decl,
    outer_inner,
    require_float,
    require_max_rank,
    staged,
)
from dnn64build.codegen.emit import const_decl
from dnn64build.codegen.lowering import ELEM_SIZES, Call, Ctx, Lowered, statement, unsupported


def elem_size(ctx: Ctx, name: str) -> int:
    dtype = ctx.dtype(name)
    if dtype not in ELEM_SIZES:
        raise unsupported(ctx.node, f"tensor {name!r} of dtype {dtype}")
    return ELEM_SIZES[dtype]


def copy(ctx: Ctx) -> Lowered:
    """Views (Reshape, Flatten, ...): nothing when the plan aliased them, else a copy."""
    x, y = ctx.node.inputs[0], ctx.node.outputs[0]
    if len(ctx.node.outputs) > 1 and ctx.node.outputs[1]:
        raise unsupported(ctx.node, "a second output")
    if ctx.dtype(x) != ctx.dtype(y):
        raise unsupported(ctx.node, f"a cast from {ctx.dtype(x)} to {ctx.dtype(y)}")
    if not ctx.is_const(x) and ctx.same_memory(x, y):
        return Lowered(note="view: the output aliases the input, no code")
    ctx.require_disjoint(y, x)
    count, es = ctx.numel(y), elem_size(ctx, y)
    parts, src = staged(ctx, [x])
    return Lowered(steps=[Call(lambda p: c_call("dnn64_concat_copy", es, 1, count, count, 0,
                                                *src(p), ctx.ptr(y)), parts)])


def concat(ctx: Ctx) -> Lowered:
    node = ctx.node
    y = node.outputs[0]
    shape = ctx.shape(y)
    axis = node.attrs["axis"]
    outer, length, inner = outer_inner(shape, axis)
    es = elem_size(ctx, y)
    low = Lowered()
    position = 0
    for x in node.inputs:
        span = ctx.shape(x)[axis] * inner
        at = position
        position += span
        if span == 0:
            continue
        if (not ctx.is_const(x) and outer == 1
                and ctx.arena.offset(x) == ctx.arena.offset(y) + at * es):
            continue  # the plan placed this input inside the output already
        if not ctx.is_const(x):
            ctx.require_disjoint(y, x)
        parts, src = staged(ctx, [x])
        low.steps.append(Call(
            lambda p, src=src, span=span, at=at: c_call(
                "dnn64_concat_copy", es, outer, span, length * inner, at, *src(p), ctx.ptr(y)),
            parts, label=f"input {x}"))
    if not low.steps:
        low.note = "every input was planned in place inside the output, no code"
    return low


def transpose(ctx: Ctx) -> Lowered:
    node = ctx.node
    x = node.inputs[0]
    shape, perm = ctx.shape(x), node.attrs["perm"]
    moved = [a for a in perm if shape[a] != 1]
    if moved == sorted(moved):
        return copy(ctx)  # only size-1 dims move: same element order
    return _layout_call(ctx, "dnn64_transpose", shape, "perm", perm)


def _layout_call(ctx: Ctx, function: str, dims: list[int], name: str,
                 values: list[int]) -> Lowered:
    """``function``(elem_size, rank, dims, values, x, y): a copy of the node's input into
    its output, ``dims`` and ``values`` (named ``name``) as rank int32 each."""
    x, y = ctx.node.inputs[0], ctx.node.outputs[0]
    require_max_rank(ctx, len(dims))
    ctx.require_disjoint(y, x)
    low = Lowered()
    dims_sym = dims_decl(ctx, low, "dims", dims)
    values_sym = dims_decl(ctx, low, name, values)
    es = elem_size(ctx, y)
    parts, src = staged(ctx, [x])
    low.steps.append(Call(lambda p: c_call(function, es, len(dims), dims_sym, values_sym,
                                           *src(p), ctx.ptr(y)), parts))
    return low


# --- structural operators (issue 22): Expand, Tile ---

def _row_strides(shape: list[int]) -> list[int]:
    return [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]


def _compact(dims: list[int], strides: list[int]) -> tuple[list[int], list[int]]:
    """The same strided walk in fewest dims: size-1 dims dropped, and a dim merged into
    the one before it where that one steps over it exactly (or both repeat)."""
    out_dims: list[int] = []
    out_strides: list[int] = []
    for d, s in zip(dims, strides, strict=True):
        if d == 1:
            continue
        if out_dims and out_strides[-1] == s * d:
            out_dims[-1] *= d
            out_strides[-1] = s
        else:
            out_dims.append(d)
            out_strides.append(s)
    return out_dims or [1], out_strides or [0]


def _strided_copy(ctx: Ctx, dims: list[int], strides: list[int]) -> Lowered:
    """y (row-major over ``dims``) = x at ``strides`` (0: repeat) via dnn64_strided_copy."""
    dims, strides = _compact(dims, strides)
    return _layout_call(ctx, "dnn64_strided_copy", dims, "strides", strides)


def expand(ctx: Ctx) -> Lowered:
    """Expand: the input broadcast to the output's shape (stride 0 along broadcast dims)."""
    out = ctx.shape(ctx.node.outputs[0])
    shape = [1] * (len(out) - len(ctx.shape(ctx.node.inputs[0]))) + ctx.shape(ctx.node.inputs[0])
    strides = [0 if n == 1 else s for n, s in zip(shape, _row_strides(shape), strict=True)]
    return _strided_copy(ctx, out, strides)


def tile(ctx: Ctx) -> Lowered:
    """Tile: each dim d walked as [repeats[d], size[d]], the repeat with stride 0."""
    shape = ctx.shape(ctx.node.inputs[0])
    dims, strides = [], []
    for n, r, s in zip(shape, ctx.node.attrs["repeats"], _row_strides(shape), strict=True):
        dims += [r, n]
        strides += [0, s]
    return _strided_copy(ctx, dims, strides)


PAD_MODES = {"constant": "DNN64_PAD_CONSTANT", "reflect": "DNN64_PAD_REFLECT",
              "edge": "DNN64_PAD_EDGE"}


def _crop(ctx: Ctx, x: str, begin: list[int], out_dims: list[int]) -> Lowered:
    """y = x[begin : begin + out_dims] as a pad with negative begin pads."""
    y = ctx.node.outputs[0]
    if 0 in out_dims:
        return Lowered(note="empty output, no code")
    return pad_call(ctx, x, y, [-b for b in begin], out_dims, "DNN64_PAD_CONSTANT", "NULL")


def pad_call(ctx: Ctx, x: str, y: str, begin: list[int], out_dims: list[int], mode: str,
              value: str, low: Lowered | None = None) -> Lowered:
    low = low or Lowered()
    shape = ctx.shape(x)
    require_max_rank(ctx, len(shape))
    ctx.require_disjoint(y, x)
    rank = max(len(shape), 1)
    dims = dims_decl(ctx, low, "in_dims", shape or [1])
    pads = dims_decl(ctx, low, "pads_begin", begin or [0])
    outs = dims_decl(ctx, low, "out_dims", out_dims or [1])
    es = elem_size(ctx, y)
    parts, src = staged(ctx, [x])
    low.steps.append(Call(lambda p: c_call("dnn64_pad", es, rank, dims, pads, outs, mode, value,
                                           *src(p), ctx.ptr(y)), parts))
    return low


def pad(ctx: Ctx) -> Lowered:
    node = ctx.node
    x, y = node.inputs[0], node.outputs[0]
    mode = node.attrs["mode"]
    if mode not in PAD_MODES:
        raise unsupported(node, f"Pad mode {mode!r}")
    rank = len(ctx.shape(x))
    low = Lowered()
    value = "NULL"
    if mode == "constant" and node.attrs["value"] != 0.0:
        if ctx.dtype(y) != "float32":
            raise unsupported(node, "a non-zero pad value on a non-float tensor")
        sym = ctx.sym("value")
        low.decls.append(const_decl("float", sym, c_float(node.attrs["value"])))
        value = f"&{sym}"
    return pad_call(ctx, x, y, node.attrs["pads"][:rank], ctx.shape(y), PAD_MODES[mode],
                     value, low)


def slice_(ctx: Ctx) -> Lowered:
    node = ctx.node
    a = node.attrs
    if any(step != 1 for step in a["steps"]):
        raise unsupported(node, "Slice with a step other than 1")
    x = node.inputs[0]
    begin = [0] * len(ctx.shape(x))
    for start, axis in zip(a["starts"], a["axes"], strict=True):
        begin[axis] = start
    return _crop(ctx, x, begin, ctx.shape(node.outputs[0]))


def gather(ctx: Ctx) -> Lowered:
    """A contiguous ascending run of constant indices into an activation is a crop; any
    other Gather (a constant table read at computed int32 indices: an embedding) copies
    row by row (dnn64_gather)."""
    node = ctx.node
    x, indices = node.inputs[:2]
    y = node.outputs[0]
    axis = node.attrs["axis"]
    shape = ctx.shape(x)
    if ctx.is_const(indices) and not ctx.is_const(x):
        flat = np.asarray(ctx.const(indices), dtype=np.int64).reshape(-1)
        flat = np.where(flat < 0, flat + shape[axis], flat)
        if np.array_equal(flat, np.arange(flat[0], flat[0] + flat.size)):
            begin = [0] * len(shape)
            begin[axis] = int(flat[0])
            out_dims = list(shape)
            out_dims[axis] = int(flat.size)
            return _crop(ctx, x, begin, out_dims)
    elif not ctx.is_const(indices) and ctx.dtype(indices) != "int32":
        raise unsupported(node, f"Gather indices of dtype {ctx.dtype(indices)} (int32 only)")
    if ctx.dtype(x) != ctx.dtype(y):
        raise unsupported(node, f"a Gather from {ctx.dtype(x)} into {ctx.dtype(y)}")
    ctx.require_disjoint(y, x)
    outer, rows, inner = outer_inner(shape, axis)
    es, count = elem_size(ctx, y), ctx.numel(indices)
    table_parts, table = staged(ctx, [x])
    index_parts, index = staged(ctx, [indices], np.int32)
    split = len(table_parts)

    def render(p) -> str:
        return c_call("dnn64_gather", es, outer, rows, inner, *table(p[:split]),
                      *index(p[split:]), count, ctx.ptr(y))

    return Lowered(steps=[Call(render, (*table_parts, *index_parts))])


COORD_MODES = {"half_pixel": "DNN64_COORD_HALF_PIXEL",
               "asymmetric": "DNN64_COORD_ASYMMETRIC",
               "align_corners": "DNN64_COORD_ALIGN_CORNERS",
               "pytorch_half_pixel": "DNN64_COORD_PYTORCH_HALF_PIXEL"}
_NEAREST = {"round_prefer_floor": "DNN64_NEAREST_ROUND_PREFER_FLOOR",
            "round_prefer_ceil": "DNN64_NEAREST_ROUND_PREFER_CEIL",
            "floor": "DNN64_NEAREST_FLOOR", "ceil": "DNN64_NEAREST_CEIL"}


def resize_geometry(ctx: Ctx, x: str, y: str) -> str:
    """planes, h_in, w_in, h_out, w_out, scale_h, scale_w, coordinate mode: the leading
    arguments of every resize kernel (the last two dims are resized)."""
    a = ctx.node.attrs
    in_shape, out_shape = ctx.shape(x), ctx.shape(y)
    planes = int(np.prod(in_shape[:-2], dtype=np.int64))
    return ", ".join([str(planes), *map(str, in_shape[-2:]), *map(str, out_shape[-2:]),
                      c_float(a["scales"][-2]), c_float(a["scales"][-1]),
                      COORD_MODES[a["coordinate_transformation_mode"]]])


def resize(ctx: Ctx) -> Lowered:
    node = ctx.node
    a = node.attrs
    x, y = node.inputs[0], node.outputs[0]
    in_shape, out_shape = ctx.shape(x), ctx.shape(y)
    if len(in_shape) < 2 or in_shape[:-2] != out_shape[:-2]:
        raise unsupported(node, "Resize of other than the last two dims")
    coord = a["coordinate_transformation_mode"]
    if coord not in COORD_MODES:
        raise unsupported(node, f"coordinate_transformation_mode {coord!r}")
    ctx.require_disjoint(y, x)
    geometry = resize_geometry(ctx, x, y)
    if a["mode"] == "nearest":
        text = c_call("dnn64_resize_nearest", elem_size(ctx, y), geometry,
                      _NEAREST[a["nearest_mode"]], ctx.ptr(x), ctx.ptr(y))
    else:
        require_float(ctx, x, y)
        text = c_call("dnn64_resize_linear_f32", geometry, ctx.ptr(x), ctx.ptr(y))
    return Lowered(steps=[statement(text)])


def cast(ctx: Ctx) -> Lowered:
    if ctx.node.attrs["to"] != ctx.dtype(ctx.node.inputs[0]):
        raise unsupported(ctx.node, f"Cast to {ctx.node.attrs['to']}")
    return copy(ctx)
