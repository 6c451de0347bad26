"""The emitter of a fused group (``FusedGroup``, dnn64build/planner/fusion/).

A group is one scheduled step: a static table of regions per tile (or band) and
a loop that, per tile, runs each member's region kernel
(``dnn64_conv_region_*``, ``dnn64_*pool_region_*``) from its input region to
its output region, the intermediates living in the group's planned buffers.
All members' weights are one staged tile, read once per inference.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dnn64build.codegen.cfmt import c_call, c_int, c_ints
from dnn64build.codegen.common import conv_geom, conv_rows, pool_geom
from dnn64build.codegen.emit import CWriter, table_decl
from dnn64build.codegen.lowering import MACROS, Call, Ctx, Lowered, unsupported
from dnn64build.codegen.ops_fp32 import bias_vector, fused_act
from dnn64build.codegen.ops_int8 import channel_params, q8_out
from dnn64build.ir.graph import Graph, Node
from dnn64build.planner.fusion.chains import ineligible
from dnn64build.planner.fusion.cost import program_of
from dnn64build.planner.fusion.records import Group, buffer_names


@dataclass
class MemberCtx(Ctx):
    """A member's view: its own node, file-scope names private to member ``j``."""

    member: int = 0

    def sym(self, base: str) -> str:
        return f"n{self.index}m{self.member}_{base}"


def group_parts(ctx: Ctx, refusal: Callable[[Graph, Node], str | None], doing: str
                ) -> tuple[Group, list[Node], Any, list[str]]:
    """The fused-group node's group, members, buffer program and buffer names; a member
    that ``refusal`` names a reason for is refused as ``doing`` it."""
    group = Group.from_record(ctx.node.attrs["fusion"])
    members: list[Node] = ctx.node.attrs["members"]
    for m in members:
        why = refusal(ctx.graph, m)
        if why:
            raise unsupported(m, f"{doing} ({why})")
    program = program_of(ctx.graph, group)
    return group, members, program, buffer_names(group, len(program.buffer_bytes))


def fused_group(ctx: Ctx) -> Lowered:
    group, members, program, buffers = group_parts(ctx, ineligible, "fusing it")
    low = Lowered(note=f"fused group ({group.mode}) of {len(members)} nodes: "
                       + ", ".join(m.name for m in members))
    regions = ctx.sym("regions")
    tiles = len(program.steps)
    ctx.require_disjoint(members[-1].outputs[0], members[0].inputs[0])
    low.decls.append("/* per tile, each member's input region then output region: {row0, rows,"
                     " col0, cols, offset, row_stride, plane_stride} */")
    labels = [f"tile {t}" for t in range(tiles)]  # a band or a patch
    low.decls.append(table_decl("dnn64_region", regions, [tiles, 2 * len(members)], [
        [f for step in tile for f in (c_ints(step.x.fields()), c_ints(step.y.fields()))]
        for tile in program.steps], labels))
    keeps = ""
    if group.mode == "stream":
        keeps = ctx.sym("keep")
        low.decls.append("/* per band, each row buffer: dnn64_region_keep(old_rows, keep_from,"
                         " keep_rows, new_rows) */")
        low.decls.append(table_decl("int32_t", keeps, [tiles, len(members) - 1, 4], [
            [c_ints([s.keep.old_rows, s.keep.keep_from, s.keep.keep_rows, s.keep.new_rows])
             for s in tile if s.keep is not None] for tile in program.steps], labels))

    parts: list[np.ndarray] = []
    calls = []  # per member: (first part index, part count, C text given part pointers)
    for j, m in enumerate(members):
        mctx = MemberCtx(ctx.graph, ctx.arena, m, ctx.index, member=j)
        dtype = ctx.dtype(m.outputs[0])
        x = ctx.ptr(m.inputs[0]) if j == 0 else _buffer(ctx, buffers, program.buffer_of[j - 1],
                                                       dtype)
        y = ctx.ptr(m.outputs[0]) if j == len(members) - 1 else _buffer(
            ctx, buffers, program.buffer_of[j], dtype)
        xr, yr = f"&{regions}[t][{2 * j}]", f"&{regions}[t][{2 * j + 1}]"
        mine, render = _member(mctx, low, m, dtype, xr, x, yr, y)
        calls.append((len(parts), len(mine), render))
        parts += mine

    def render(pointers: list[str]) -> str:
        w = CWriter()
        with w.block("{"):
            w.line("int32_t t;")
            with w.block(f"for (t = 0; t < {tiles}; ++t) {{"):
                for j, (first, count, text) in enumerate(calls):
                    if keeps and j < len(members) - 1:
                        m = members[j]
                        _, c, _, width = ctx.shape(m.outputs[0])
                        size = np.dtype(ctx.dtype(m.outputs[0])).itemsize
                        k = f"{keeps}[t][{j}]"
                        buf = f"ARENA_S8({ctx.arena.offset(buffers[program.buffer_of[j]])}u)"
                        w.code(c_call("dnn64_region_keep", f"(uint8_t *){buf}", c, width * size,
                                      f"{k}[0]", f"{k}[1]", f"{k}[2]", f"{k}[3]"))
                    w.code(text(pointers[first:first + count]))
        return w.source(end="")

    low.steps.append(Call(render, tuple(parts), "fused group weights"))
    return low


def _buffer(ctx: Ctx, buffers: list[str], k: int, dtype: str) -> str:
    return f"{MACROS[dtype]}({ctx.arena.offset(buffers[k])}u)"


def _member(ctx: MemberCtx, low: Lowered, node: Node, dtype: str, xr: str, x: str, yr: str,
            y: str) -> tuple[list[np.ndarray], Callable[[Sequence[str]], str]]:
    """The member's weight parts and its call given their staged pointers; its parameter
    blocks go to ``low.decls``."""
    xt, yt = node.inputs[0], node.outputs[0]
    if node.op == "Conv":
        w = node.inputs[1]
        b = node.inputs[2] if len(node.inputs) > 2 else ""
        if dtype == "int8":
            p = node.attrs["int8"]
            rows, kernel = conv_rows(node, np.asarray(ctx.const(w), dtype=np.int8))
            c_out = rows.shape[0]
            geom = conv_geom(ctx, low, xt, yt, c_out, kernel)
            q = q8_out(ctx, low, p)
            mine = [rows, *channel_params(ctx, b, p, c_out)]

            def text(s):
                return c_call("dnn64_conv_region_s8", geom, xr, x, c_int(p["x_zero_point"]),
                              *s, 0, c_out, q, yr, y)
        else:
            rows, kernel = conv_rows(node, np.asarray(ctx.const(w), dtype=np.float32))
            c_out = rows.shape[0]
            bias = bias_vector(ctx, b, c_out)
            geom = conv_geom(ctx, low, xt, yt, c_out, kernel)
            act = fused_act(ctx, low)
            mine = [rows] if bias is None else [rows, bias]

            def text(s):
                return c_call("dnn64_conv_region_f32", geom, xr, x, s[0],
                              s[1] if len(s) > 1 else "NULL", 0, c_out, act, yr, y)
    else:
        geom = pool_geom(ctx, low, xt, yt)
        suffix = "s8" if dtype == "int8" else "f32"
        mine = []
        if node.op == "MaxPool":
            def text(s):
                return c_call(f"dnn64_maxpool_region_{suffix}", geom, xr, x, yr, y)
        else:
            extra: list[object] = [node.attrs["count_include_pad"]]
            if dtype == "int8":
                p = node.attrs["int8"]
                extra += [c_int(p["x_zero_point"]), c_int(p["act_min"]), c_int(p["act_max"])]

            def text(s):
                return c_call(f"dnn64_avgpool_region_{suffix}", geom, *extra, xr, x, yr, y)
    return mine, text
