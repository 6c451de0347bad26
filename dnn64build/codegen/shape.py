"""The shape of a planned model's code, counted without generating it: the weight staging
size (its one owner: the plan stage checks the fit with it, generate_model lays the tiles
into it), the kernel calls and functions the program-size estimate is built on, the
weight tiles and the cartridge bytes an inference reads. See docs/codegen.md."""

from __future__ import annotations

import math
import re
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dnn64build.codegen.arena import ArenaMap, align_up
from dnn64build.codegen.lower_plan import lower_plan, lowering_key
from dnn64build.codegen.lowering import Call, Lowered, Reread, Step, Tiled, TilePlace, part_bytes
from dnn64build.codegen.program_size import program_estimate
from dnn64build.codegen.staging import grown_half, half_bytes, smallest_half, tile_counts
from dnn64build.codegen.tile_loop import MIN_TILES
from dnn64build.ir.graph import Graph, Node
from dnn64build.planner.fusion.cost import node_macs
from dnn64build.planner.fusion.records import GROUP_OP


@dataclass(frozen=True)
class CodeShape:
    """What the generated code of a planned model holds, counted without generating it:
    what the plan stage checks the fit with."""

    staging_bytes: int  # the weight staging area (both halves)
    calls: int  # kernel calls and statements (a loop over a layer's tiles: a few calls)
    staged_calls: int  # of those, calls reading a weight tile (each adds a ROM read)
    decl_lines: int  # lines of file-scope parameter structs and tables
    functions: frozenset[str]  # the dnn64_* functions the code names (kernels it links)
    cartridge_bytes: int  # bytes read from the cartridge per inference (streamed inputs too)
    reread_bytes: int  # of those, the bytes of tiles read more than once (dag groups)
    rsp_macs: int  # multiply-accumulates of the nodes run on the RSP
    # (bytes, reads per inference) of every weight tile: the statically read ones in
    # order, then the ones dag groups re-read (the indices plan.json's weights record uses)
    tiles: tuple[tuple[int, int], ...] = ()

    @property
    def program_bytes(self) -> int:
        """The estimate of the linked program besides the arena (program_size.py)."""
        return program_estimate(self.functions, self.calls, self.staged_calls,
                                self.decl_lines)


def code_shape(graph: Graph, plan: dict[str, Any], *, configured: int | None,
               where: str, kernels: str = "cpu", grow_limit: int | None = None) -> CodeShape:
    """The code shape of ``graph`` run with ``plan``. Its ``staging_bytes`` is the size of
    the weight staging area the generated code will use: ``configured`` if every tile
    fits half of it (else UserError), otherwise just enough for the largest tile
    (docs/codegen.md), or, given ``grow_limit`` (bytes, both halves), grown up to it
    where that cuts an RSP layer into fewer tiles (``staging.grown_half``: every tile is
    an RSP kernel call of its own, and an RSP Conv packs its im2col once per tile; a CPU
    kernel reads its input in place whatever the tile, and keeps the minimum). The one
    owner of that number: the plan stage checks the fit with it and
    codegen lays the tiles into it. ``kernels`` as for generate_model (the RSP kernels
    link their own object; the tiles are the same)."""
    _, _, lowered = _lowered(graph, plan, where, kernels)
    steps = [s for _, low in lowered for s in low.steps]
    half = half_bytes(steps, configured, where)
    if configured is None and grow_limit is not None:
        rsp_tiled = [s for _, low in lowered if low.on_rsp for s in low.steps
                     if isinstance(s, Tiled)]
        half = grown_half(rsp_tiled, half, grow_limit // 2)
    return _shapes(graph, lowered, [half])[0]


def shrunk_code_shapes(graph: Graph, plan: dict[str, Any], *, where: str,
                       kernels: str = "cpu") -> list[CodeShape]:
    """The code shapes of ``graph`` run with ``plan`` on weight stagings below the
    minimum (``code_shape`` with ``configured`` None) that are worth their bytes: each
    the smallest staging at which a tiled layer is cut into one tile count (a staging
    between two of them only holds bytes no tile uses), down to the smallest staging
    that holds every tile (one channel a tile). Lowered once for all of them."""
    graph, _, lowered = _lowered(graph, plan, where, kernels)
    steps = [s for _, low in lowered for s in low.steps]
    minimum = half_bytes(steps, None, where)
    smallest = max(smallest_half(steps), 16)
    halves = {smallest}
    for step in steps:
        if isinstance(step, Tiled):
            counts = {-(-step.rows // tiles) for tiles in range(1, step.rows + 1)}
            halves.update(align_up(step.tile_bytes(count)) for count in counts)
    return _shapes(graph, lowered, sorted((h for h in halves if smallest <= h < minimum),
                                          reverse=True))


def _shapes(graph: Graph, lowered: list[tuple[Node, Lowered]], halves: Sequence[int]
            ) -> list[CodeShape]:
    """The code shape of ``lowered`` (nodes of the fused ``graph``) with staging halves of
    each of ``halves`` bytes."""
    steps = [s for _, low in lowered for s in low.steps]
    # Weight bytes per inference: each static tile once, each re-read tile as often as read.
    once = sum(part_bytes(s.parts) for s in steps if isinstance(s, Call))
    rereads = tuple((part_bytes(t), n) for s in steps if isinstance(s, Reread)
                    for t, n in zip(s.tiles, s.reads, strict=True))
    rsp_macs = sum(node_macs(graph, node) for node, low in lowered if low.on_rsp)
    # A streamed graph input is read from its asset row by row, each row once.
    streamed = [node.attrs["fusion"].get("streams") for node, _ in lowered
                if node.op == GROUP_OP]
    inputs = sum(math.prod(graph.tensors[x].shape) * np.dtype(graph.tensors[x].dtype).itemsize
                 for x in streamed if x)
    # A dag group's step is one firing loop whose cases read their own tiles.
    reread = sum(len(s.tiles) for s in steps if isinstance(s, Reread))
    untiled = sum(1 for s in steps if not isinstance(s, Tiled))
    staged = reread + sum(1 for s in steps if isinstance(s, Call) and s.parts)
    decls = [line for _, low in lowered for line in low.decls]
    text = [_shape_text(s) for s in steps]
    functions = frozenset(re.findall(r"\b(dnn64_\w+)\s*\(", "\n".join(decls + text)))
    lines = sum(len(line.splitlines()) for line in decls)
    shapes = []
    for half in halves:
        counts = [len(tile_counts(s, half)) for s in steps if isinstance(s, Tiled)]
        # a layer of MIN_TILES tiles or more: tile 0's call, then a loop (tile_loop.py)
        # counted as its body's call, the two reads it may start and their bookkeeping
        calls = sum(n if n < MIN_TILES else 4 for n in counts)
        staged_calls = sum(n if n < MIN_TILES else 3 for n in counts)
        static = tuple((size, 1) for s in steps for size in _tile_sizes(s, half))
        tiled_bytes = sum(s.tile_bytes(count) for s in steps if isinstance(s, Tiled)
                          for _, count in tile_counts(s, half))
        shapes.append(CodeShape(
            staging_bytes=2 * half, calls=calls + reread + untiled,
            staged_calls=staged_calls + staged, decl_lines=lines, functions=functions,
            cartridge_bytes=once + tiled_bytes + sum(size * n for size, n in rereads) + inputs,
            reread_bytes=sum(size * n for size, n in rereads if n > 1), rsp_macs=rsp_macs,
            tiles=static + rereads))
    return shapes


def _tile_sizes(step: Step, half: int) -> list[int]:
    """The bytes of each tile the static sequence reads for ``step`` (expand's calls)."""
    if isinstance(step, Tiled):
        return [step.tile_bytes(count) for _, count in tile_counts(step, half)]
    if isinstance(step, Call) and step.parts:
        return [part_bytes(step.parts)]
    return []


def _shape_text(step: Step) -> str:
    """The C text of ``step`` with placeholder pointers and offsets (only the functions it
    names matter)."""
    if isinstance(step, Tiled):
        return step.render(0, 1, ["p"] * len(step.arrays))
    if isinstance(step, Reread):
        return step.render([0] * len(step.tiles), TilePlace("p"))
    return step.render(["p"] * len(step.parts))


# The plan stage asks for the shape of one plan several times (at its minimum staging,
# grown, shrunk) and its search's options often plan alike: the lowerings of the last few
# plans are kept, keyed by the graph and what lower_plan reads of the plan (lowering_key).
LOWERINGS_KEPT = 8
_kept: OrderedDict[tuple[int, str, str, str], tuple[Graph, Any]] = OrderedDict()


def _lowered(graph: Graph, plan: dict[str, Any], where: str, kernels: str
             ) -> tuple[Graph, ArenaMap, list[tuple[Node, Lowered]]]:
    """lower_plan's result, lowered once for a graph and plan."""
    key = (id(graph), where, kernels, lowering_key(plan))
    kept = _kept.get(key)
    if kept is None or kept[0] is not graph:  # the graph holds its id while kept
        kept = _kept[key] = (graph, lower_plan(graph, plan, where, kernels))
        while len(_kept) > LOWERINGS_KEPT:
            _kept.popitem(last=False)
    _kept.move_to_end(key)
    return kept[1]
