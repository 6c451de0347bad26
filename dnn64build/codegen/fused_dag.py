"""The emitter of a dag group (``FusedGroup`` of mode ``dag``, planner/dagstream.py).

The group is one scheduled step: a static table of its firings (stage, rows, the held
rows of the stage's output buffer before and after), run-length coded so that its size
does not grow with the image (codegen/firings.py), and a loop that walks them in order
(``dnn64_next_firing``).
Each buffer is a compact row buffer (every channel's held rows back to back; an
element-wise stage writes over its input's rows in the input's buffer); ``held[k]``
tracks the rows buffer k holds. A firing first drops the rows its output
buffer no longer needs (``dnn64_region_keep``), then computes its rows:

- Conv / MaxPool / AveragePool: the region kernels (kernels/dnn64_region.c), reading
  the whole held range of the input (or the whole group input X);
- Resize (bilinear, half-pixel): output row by output row, one whole-tensor kernel call
  per channel on just the one or two input rows it blends (``_resize_stage``);
- Add, Mul (of two activations, or an activation and a per-channel constant: a
  BatchNormalization), activations, Concat, QuantizeLinear, DequantizeLinear: per
  channel, on the contiguous rows of each plane, with the whole-tensor kernels.

A group that streams the graph input (stage 0, an input stage) fills its row buffer
through the run function's ``read_rows`` callback (``INPUT_ROWS``: rows [r0, r1) of
every channel, each channel's rows at ``plane_bytes`` from the last), so the whole
input is never in the arena. Symmetrically, a group that hands out the graph output
(its last stage, an output stage) passes each finished band of rows of Y, straight from
its row buffer, to the run function's ``write_rows`` callback (``OUTPUT_ROWS``).

Weights are re-read from the cartridge for every firing, in output-channel tiles of at
most ``TILE_BYTES`` (a ``Reread`` step), so a group needs one small staging half however
many weights its members have; the blob holds each tile once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from dnn64build.codegen.cfmt import c_call, c_float, c_int
from dnn64build.codegen.common import conv_geom, conv_rows, pool_geom
from dnn64build.codegen.emit import CWriter, array_decl, table_decl
from dnn64build.codegen.firings import code_firings
from dnn64build.codegen.fused import MemberCtx, group_parts
from dnn64build.codegen.lowering import (
    CTYPES,
    MACROS,
    Ctx,
    Lowered,
    Reread,
    TilePlace,
    part_bytes,
)
from dnn64build.codegen.ops_fp32 import act_decl, bias_vector, fused_act
from dnn64build.codegen.ops_int8 import (
    ELTWISE,
    channel_params,
    const_table,
    eltwise_params,
    q8_out,
)
from dnn64build.codegen.staging import DEFAULT_STAGING_CAP
from dnn64build.ir.graph import Node
from dnn64build.ir.ops import ACTIVATION_OF_OP
from dnn64build.planner.dagstream import DagProgram, RowTaps, row_refusal, stage_of
from dnn64build.planner.fusion.rewrite import group_io

TILE_BYTES = DEFAULT_STAGING_CAP // 2  # the most weight bytes one firing reads at once
# The callback a streamed input's rows come from, and the run function's extra arguments.
INPUT_ROWS = "dnn64_input_rows_fn"
INPUT_ROWS_ARGS = f"{INPUT_ROWS} read_rows, void *user"
# The callback a streamed output's rows go to, and the run function's extra arguments.
OUTPUT_ROWS = "dnn64_output_rows_fn"
OUTPUT_ROWS_ARGS = f"{OUTPUT_ROWS} write_rows, void *write_user"

# a float32 <-> int8 row stage's kernel
_CONVERSIONS = {"QuantizeLinear": "dnn64_quantize_f32_s8",
                "DequantizeLinear": "dnn64_dequantize_s8_f32"}

# (tile offsets in the blob, where the tiles are) -> C statements of one firing of a stage
StageText = Callable[[Sequence[int], TilePlace], str]


def dag_group(ctx: Ctx) -> Lowered:
    group, members, program, buffers = group_parts(ctx, row_refusal,
                                                   "streaming it row by row")
    assert isinstance(program, DagProgram)
    xs, y = group_io(ctx.graph, members)
    if not program.emitted:  # an emitted Y is a row buffer of its own, no arena tensor
        ctx.require_disjoint(y, *(x for x in xs if x != program.streamed))
    low = Lowered(note=f"dag group of {len(members)} nodes, {len(program.firings)} firings, "
                       f"row buffers: {', '.join(str(r) for r in program.buffer_rows)} rows")
    fire, runs = ctx.sym("fire"), ctx.sym("runs")
    coded = code_firings([(f.stage, *f.rows, *(f.before or (0, 0)), *(f.after or (0, 0)))
                          for f in program.firings])
    low.decls.append("/* per template firing: stage, first row, end row, output buffer rows "
                     "held before (lo, hi) and after (lo, hi), then the steps of those six */")
    low.decls.append(table_decl("int16_t", fire, [len(coded.templates), 13],
                                [[c_int(v) for v in r] for r in coded.templates]))
    low.decls.append("/* the firings: {first template, count, times} (dnn64_next_firing) */")
    low.decls.append(table_decl("dnn64_firing_run", runs, [len(coded.runs)],
                                [[c_int(v) for v in r] for r in coded.runs]))
    slot = dict(zip(program.tensors, program.buffer_of, strict=True))
    layout = _Layout(ctx, slot, buffers)
    tiles: list[tuple[np.ndarray, ...]] = []
    reads: list[int] = []
    cases: list[tuple[int, int, StageText]] = []  # first tile, tile count, text
    firings_of = [sum(f.stage == j for f in program.firings)
                  for j in range(len(program.stages))]
    keeps = [_keep(layout, m.outputs[0]) for m in members]
    if program.streamed:
        cases.append((0, 0, _boundary_stage(
            ctx, layout, program.streamed, callback="read_rows", user="user",
            index=ctx.graph.inputs.index(program.streamed), pointer="uint8_t *")))
        keeps.insert(0, _keep(layout, program.streamed))
    for m in members:
        mctx = MemberCtx(ctx.graph, ctx.arena, m, ctx.index, member=len(cases))
        mine, text = _stage(mctx, low, m, layout)
        reads += [firings_of[len(cases)]] * len(mine)
        cases.append((len(tiles), len(mine), text))
        tiles += mine
    if program.emitted:
        cases.append((0, 0, _boundary_stage(
            ctx, layout, program.emitted, callback="write_rows", user="write_user",
            index=ctx.graph.outputs.index(program.emitted), pointer="const uint8_t *")))
        keeps.append("")  # it writes no buffer

    def render(offsets: Sequence[int], place: TilePlace) -> str:
        w = CWriter()
        with w.block("{"):
            w.line(f"int32_t held[{max(len(program.buffer_bytes), 1)}][2] = {{{{0, 0}}}};",
                   "int32_t f[7], c;",
                   f"dnn64_firings walk = {{{runs}, {fire}, {len(coded.runs)}, 0, 0, 0}};",
                   "dnn64_region xr, yr;", "dnn64_bcast bc;",
                   "(void)c; (void)xr; (void)yr; (void)bc;")
            with w.block("while (dnn64_next_firing(&walk, f)) {"):
                w.line("switch (f[0]) {")  # the case labels at the switch's level
                for j, (first, count, text) in enumerate(cases):
                    with w.block(f"case {j}: {{"):
                        w.code(keeps[j] + text(offsets[first:first + count], place))
                        w.line("break;")
                w.line("default:")
                with w.indented():
                    w.line("break;")
                w.line("}")
        return w.source(end="")

    low.steps.append(Reread(tuple(tiles), tuple(reads), render, "dag group weights"))
    return low


class _Layout:
    """Where each tensor of the group lives and which rows it holds, as C expressions."""

    def __init__(self, ctx: Ctx, slot: dict[str, int], buffers: list[str]) -> None:
        self.ctx, self.slot, self.buffers = ctx, slot, buffers

    def ptr(self, t: str) -> str:
        dtype = self.ctx.dtype(t)
        if t in self.slot:
            return f"{MACROS[dtype]}({self.ctx.arena.offset(self.buffers[self.slot[t]])}u)"
        return self.ctx.ptr(t)

    def held(self, t: str) -> tuple[str, str]:
        if t in self.slot:
            return f"held[{self.slot[t]}][0]", f"held[{self.slot[t]}][1]"
        return "0", str(self.ctx.shape(t)[2])

    def region(self, t: str, lo: str | None = None, hi: str | None = None) -> str:
        """dnn64_rows_region of rows [lo, hi) of t (default: every row it holds)."""
        h_lo, h_hi = self.held(t)
        return c_call("dnn64_rows_region", h_lo, h_hi, lo or h_lo, hi or h_hi,
                      self.ctx.shape(t)[3])[:-1]


def _boundary_stage(ctx: Ctx, layout: _Layout, t: str, *, callback: str, user: str,
                    index: int, pointer: str) -> StageText:
    """Rows [f[1], f[2]) of a streamed graph input or output ``t``: one call of the
    caller's rows callback on the rows ``t``'s buffer holds (read into it, or handed out
    of it)."""
    size = np.dtype(ctx.dtype(t)).itemsize
    call = c_call(callback, user, index, "(uint32_t)f[1]", "(uint32_t)(f[2] - f[1])",
                  f"({pointer})({layout.ptr(t)} + yr.offset)",
                  f"(uint32_t)yr.plane_stride * {size}u")
    text = f"yr = {layout.region(t, 'f[1]', 'f[2]')};\n{call}\n"
    return lambda offsets, stage: text


def _keep(layout: _Layout, t: str) -> str:
    """Drop the rows of ``t``'s buffer no longer needed, as the firing says."""
    if t not in layout.slot:
        return ""
    k = layout.slot[t]
    _, c, _, w = layout.ctx.shape(t)
    size = np.dtype(layout.ctx.dtype(t)).itemsize
    buf = f"ARENA_S8({layout.ctx.arena.offset(layout.buffers[k])}u)"
    out = CWriter()
    with out.block("{"):
        out.line("const int32_t kept = f[5] > f[3] ? f[5] : f[3];",
                 c_call("dnn64_region_keep", f"(uint8_t *){buf}", c, w * size, "f[4] - f[3]",
                        "kept - f[3]", "f[4] - kept", "f[6] - f[5]"))
    out.line(f"held[{k}][0] = f[5];", f"held[{k}][1] = f[6];")
    return out.source()


def _read(offset: int, parts: tuple[np.ndarray, ...], place: TilePlace) -> str:
    return place.read(offset, part_bytes(parts))


def _staged(parts: tuple[np.ndarray, ...], stage: str) -> list[str]:
    """C pointers of each part of a tile whose first byte is at ``stage``."""
    out, at = [], 0
    for part in parts:
        out.append(f"(const {CTYPES[str(part.dtype)]} *)({stage} + {at}u)")
        at += part_bytes([part])
    return out


def _channel_tiles(arrays: tuple[np.ndarray, ...]) -> list[tuple[int, int]]:
    """(first channel, count) of tiles of at most TILE_BYTES (one channel if bigger)."""
    per = sum(a.nbytes // max(a.shape[0], 1) for a in arrays)
    count = max(1, TILE_BYTES // max(per + 16 * len(arrays), 1))
    rows = arrays[0].shape[0]
    return [(b, min(count, rows - b)) for b in range(0, rows, count)]


def _stage(ctx: MemberCtx, low: Lowered, node: Node, layout: _Layout
           ) -> tuple[list[tuple[np.ndarray, ...]], StageText]:
    """The stage's weight tiles and its C text given their blob offsets and a half."""
    x, y = node.inputs[0], node.outputs[0]
    dtype = ctx.dtype(y)
    regions = f"xr = {layout.region(x)};\nyr = {layout.region(y, 'f[1]', 'f[2]')};\n"
    xp, yp = layout.ptr(x), layout.ptr(y)
    if node.op == "Conv":
        int8 = dtype == "int8"
        w = np.asarray(ctx.const(node.inputs[1]), dtype=np.int8 if int8 else np.float32)
        rows, kernel = conv_rows(node, w)
        c_out = rows.shape[0]
        geom = conv_geom(ctx, low, x, y, c_out, kernel)
        b = node.inputs[2] if len(node.inputs) > 2 else ""
        if int8:
            p = node.attrs["int8"]
            q = q8_out(ctx, low, p)
            arrays = (rows, *channel_params(ctx, b, p, c_out))
        else:
            act = fused_act(ctx, low)
            bias = bias_vector(ctx, b, c_out)
            arrays = (rows,) if bias is None else (rows, bias)
        spans = _channel_tiles(arrays)
        tiles = [tuple(np.ascontiguousarray(a[s:s + n]) for a in arrays) for s, n in spans]

        def text(offsets: Sequence[int], place: TilePlace) -> str:
            out = regions
            for (begin, count), parts, offset in zip(spans, tiles, offsets, strict=True):
                s = _staged(parts, place.base(offset))
                out += _read(offset, parts, place)
                if int8:
                    out += c_call("dnn64_conv_region_s8", geom, "&xr", xp,
                                  c_int(node.attrs["int8"]["x_zero_point"]), *s, begin, count,
                                  q, "&yr", yp) + "\n"
                else:
                    out += c_call("dnn64_conv_region_f32", geom, "&xr", xp, s[0],
                                  s[1] if len(s) > 1 else "NULL", begin, count, act, "&yr",
                                  yp) + "\n"
            return out
        return tiles, text
    if node.op in ("MaxPool", "AveragePool"):
        geom = pool_geom(ctx, low, x, y)
        suffix = "s8" if dtype == "int8" else "f32"
        extra: list[object] = []
        if node.op == "AveragePool":
            extra = [node.attrs["count_include_pad"]]
            if dtype == "int8":
                p = node.attrs["int8"]
                extra += [c_int(p["x_zero_point"]), c_int(p["act_min"]), c_int(p["act_max"])]
        fn = f"dnn64_{'max' if node.op == 'MaxPool' else 'avg'}pool_region_{suffix}"
        return [], lambda offsets, stage: regions + c_call(fn, geom, *extra, "&xr", xp, "&yr",
                                                           yp) + "\n"
    if node.op == "Resize":
        text = _resize_stage(ctx, low, node, layout)
        return [], lambda offsets, stage: text
    return _row_stage(ctx, low, node, layout)


def _resize_stage(ctx: MemberCtx, low: Lowered, node: Node, layout: _Layout) -> str:
    """Output rows [f[1], f[2]) of a bilinear half-pixel Resize, row by row: for row r a
    call of the whole-tensor kernel per channel on input rows [first, first + count) to
    one output row, with half-pixel coordinates and the one-row scale that reproduces
    row r's fraction (planner/dagstream.py, resize_row_taps): the same arithmetic, so
    the same values, bit for bit, as the whole Resize."""
    x, y = node.inputs[0], node.outputs[0]
    taps = stage_of(ctx.graph, node).window
    assert isinstance(taps, RowTaps)
    _, channels, _, w_in = ctx.shape(x)
    w_out = ctx.shape(y)[3]
    first = const_table(ctx, low, "first", "int16_t", list(taps.first))
    count = const_table(ctx, low, "count", "int16_t", list(taps.count))
    scale = ctx.sym("scale")
    low.decls.append(array_decl("float", scale, [c_float(s) for s in taps.scale]))
    fn = "dnn64_resize_linear_s8" if ctx.dtype(y) == "int8" else "dnn64_resize_linear_f32"
    call = c_call(fn, 1, f"{count}[r]", w_in, 1, w_out, f"{scale}[r]",
                  c_float(node.attrs["scales"][-1]), "DNN64_COORD_HALF_PIXEL",
                  f"{layout.ptr(x)} + xr.offset + c * xr.plane_stride",
                  f"{layout.ptr(y)} + yr.offset + c * yr.plane_stride")
    w = CWriter()
    with w.block("{"):
        w.line("int32_t r;")
        with w.block("for (r = f[1]; r < f[2]; ++r) {"):
            w.line(f"xr = {layout.region(x, f'{first}[r]', f'{first}[r] + {count}[r]')};",
                   f"yr = {layout.region(y, 'r', 'r + 1')};")
            w.code(_per_channel(channels, call))
    return w.source()


def _row_stage(ctx: MemberCtx, low: Lowered, node: Node, layout: _Layout
               ) -> tuple[list[tuple[np.ndarray, ...]], StageText]:
    """Add, Mul, activations and Concat: per channel, on the contiguous rows
    [f[1], f[2]) of each plane."""
    y = node.outputs[0]
    dtype = ctx.dtype(y)
    _, channels, _, width = ctx.shape(y)
    data = [t for t in node.inputs if t and not ctx.is_const(t)]
    head = "".join(f"const dnn64_region r{k} = {layout.region(t, 'f[1]', 'f[2]')};\n"
                   for k, t in enumerate(data))
    head += f"yr = {layout.region(y, 'f[1]', 'f[2]')};\n"
    count = f"(f[2] - f[1]) * {width}"
    head += f"bc.rank = 1;\nbc.dims[0] = {count};\nbc.a_strides[0] = 1;\nbc.b_strides[0] = 1;\n"

    def at(k: int, c: str = "c") -> str:
        ptr = layout.ptr(data[k])
        return f"{ptr} + r{k}.offset + {c} * r{k}.plane_stride"

    out_at = f"{layout.ptr(y)} + yr.offset + c * yr.plane_stride"
    if node.op == "Concat":
        body, begin = "", 0
        for k, t in enumerate(data):
            n = ctx.shape(t)[1]
            body += _per_channel(n, c_call(
                "dnn64_concat_copy", np.dtype(dtype).itemsize, 1, count, count, 0,
                at(k), f"{layout.ptr(y)} + yr.offset + ({begin} + c) * yr.plane_stride"))
            begin += n
        return [], lambda offsets, stage: head + body
    if node.op in ("Add", "Mul"):
        return _binary_stage(ctx, low, node, layout, head, out_at)
    if node.op in _CONVERSIONS:
        p = node.attrs["int8"]
        call = c_call(_CONVERSIONS[node.op], at(0), count, c_float(p["scale"]),
                      c_int(p["zero_point"]), out_at)
        return [], lambda offsets, stage: head + _per_channel(channels, call)
    # a stand-alone activation
    if dtype == "int8":
        table = const_table(ctx, low, "lut", "int8_t", node.attrs["int8"]["lut"])
        call = c_call("dnn64_lut_s8", table, at(0), out_at, count)
    else:
        act = act_decl(ctx, low, ACTIVATION_OF_OP[node.op], node.attrs)
        call = c_call("dnn64_activation_f32", act, at(0), out_at, count)
    return [], lambda offsets, stage: head + _per_channel(channels, call)


def _binary_stage(ctx: MemberCtx, low: Lowered, node: Node, layout: _Layout, head: str,
                  out_at: str) -> tuple[list[tuple[np.ndarray, ...]], StageText]:
    """Add / Mul per channel: an activation operand steps through the plane's rows, a
    per-channel constant (staged) stays on the channel's value."""
    y = node.outputs[0]
    dtype = ctx.dtype(y)
    channels = ctx.shape(y)[1]
    a, b = node.inputs[:2]
    consts = [t for t in (a, b) if ctx.is_const(t)]
    parts = tuple(np.ascontiguousarray(np.broadcast_to(
        np.asarray(ctx.const(t), dtype=np.dtype(dtype)).reshape(-1), (channels,)))
        for t in consts)
    data = [t for t in node.inputs if t and not ctx.is_const(t)]
    if dtype == "int8":
        fn = ELTWISE[node.op][0]
        params = eltwise_params(ctx, low, node)
    else:
        fn = "dnn64_binary_f32"
        params = {"Add": "DNN64_BINARY_ADD", "Mul": "DNN64_BINARY_MUL"}[node.op]

    def text(offsets: Sequence[int], place: TilePlace) -> str:
        staged = dict(zip(consts, _staged(parts, place.base(offsets[0]) if parts else ""),
                          strict=True))
        out = head + (_read(offsets[0], parts, place) if parts else "")
        args = []
        for field, t in (("a_strides", a), ("b_strides", b)):
            if t in staged:
                out += f"bc.{field}[0] = 0;\n"
                args.append(f"{staged[t]} + c")
            else:
                k = data.index(t)
                args.append(f"{layout.ptr(t)} + r{k}.offset + c * r{k}.plane_stride")
        call = (c_call(fn, "&bc", *args, f"&{params}", out_at) if dtype == "int8"
                else c_call(fn, params, "&bc", *args, out_at))
        return out + _per_channel(channels, call)
    return ([parts] if parts else []), text


def _per_channel(channels: int, statement: str) -> str:
    """``statement`` run for every channel c of the ``channels``."""
    w = CWriter()
    w.line(f"for (c = 0; c < {channels}; ++c)")
    with w.indented():
        w.code(statement)
    return w.source()
