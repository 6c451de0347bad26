"""The lowering framework: what an operator emitter gets and returns.

An emitter turns one IR node into ``Steps``: C statements, each kernel call with
the weight arrays it needs staged (a ``Call``), or a family of calls over
output-channel tiles (a ``Tiled``, expanded once the staging size is known).
Weights live in the blob (docs/codegen.md); an emitter never sees ROM offsets,
only the C expressions of the staged copies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dnn64build.codegen.arena import ArenaMap, align_up
from dnn64build.codegen.cfmt import c_call
from dnn64build.errors import UserError
from dnn64build.ir.graph import Graph, Node

# (staged part pointers, already cast to const T *) -> C statement(s)
Render = Callable[[Sequence[str]], str]
# (first output channel, channel count, staged part pointers) -> C statement(s); the
# channels are numbers or C expressions (a loop over tiles, codegen/tile_loop.py)
TileRender = Callable[[int | str, int | str, Sequence[str]], str]

# `kernels` of a model: cpu only; rsp wherever an RSP kernel exists; auto where it is
# expected to pay (see routing.conv_on_rsp).
KERNEL_CHOICES = ("auto", "cpu", "rsp")

CTYPES = {"float32": "float", "int8": "int8_t", "int32": "int32_t"}
MACROS = {"float32": "ARENA_F32", "int8": "ARENA_S8", "int32": "ARENA_I32"}
ELEM_SIZES = {"float32": 4, "int8": 1, "int32": 4}


@dataclass
class Call:
    """One kernel call that reads ``parts`` (staged together as one tile, may be empty)."""

    render: Render
    parts: tuple[np.ndarray, ...] = ()
    label: str = ""
    # tile k of a tiled layer (staging.expand): (the layer, k), so a loop can run its tiles
    tile_of: tuple[Tiled, int] | None = None


@dataclass
class Tiled:
    """A layer computed in output-channel tiles: each array is sliced along axis 0."""

    arrays: tuple[np.ndarray, ...]
    render: TileRender

    @property
    def rows(self) -> int:
        return int(self.arrays[0].shape[0])

    def tile_bytes(self, count: int) -> int:
        return sum(align_up(count * (a.nbytes // max(a.shape[0], 1))) for a in self.arrays)


@dataclass(frozen=True)
class TilePlace:
    """Where a kernel finds a weight tile given its blob offset: the tiles laid first in the
    blob (offsets below ``resident_bytes``) are resident, loaded once into the model's
    ``resident`` buffer (planner ``weights``, docs/planner.md "Resident weights"); any
    other is read from the cartridge into the staging half ``stage`` (C expression)."""

    stage: str
    resident_bytes: int = 0

    def resident(self, offset: int) -> bool:
        return offset < self.resident_bytes

    def read(self, offset: int, nbytes: int) -> str:
        """The C statement that brings the tile in: nothing for a resident tile."""
        if self.resident(offset):
            return ""
        return c_call("dnn64_asset_read", self.stage, f"weights.offset + {offset}u",
                      f"{nbytes}u") + "\n"

    def base(self, offset: int) -> str:
        """The C expression of the tile's first byte (a const uint8_t * or uint8_t *)."""
        return f"(resident + {offset}u)" if self.resident(offset) else self.stage


@dataclass
class Reread:
    """A step that reads its own weight tiles while it runs (a dag group re-reads each
    member's tiles for every firing, dnn64build/codegen/fused_dag.py): ``tiles`` are laid
    into the blob once, after the statically read ones, and never read by the static
    sequence; ``render(offsets, place)`` gets each tile's blob offset and where the tiles
    are found (a TilePlace: the staging half it may use, the resident tiles); ``reads`` is
    how many times each tile is read per run."""

    tiles: tuple[tuple[np.ndarray, ...], ...]
    reads: tuple[int, ...]
    render: Callable[[Sequence[int], TilePlace], str]
    label: str = ""
    parts: tuple[np.ndarray, ...] = ()  # nothing for the static sequence to read


Step = Call | Tiled | Reread


def statement(text: str) -> Call:
    """A call that stages nothing: fixed C text."""
    return Call(lambda pointers: text)


@dataclass
class Lowered:
    """An emitter's result: file-scope definitions and the statements of its steps."""

    decls: list[str] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    note: str = ""
    on_rsp: bool = False  # the node's multiply-accumulates run on the RSP (dnn64_rsp.h)


def part_bytes(parts: Sequence[np.ndarray]) -> int:
    return sum(align_up(p.nbytes) for p in parts)


def unsupported(node: Node, what: str) -> UserError:
    return UserError(
        f"{what} is not supported by code generation",
        where=f"node {node.name!r} ({node.op})",
        hint="rewrite that part of the model, or keep it out of the exported graph",
    )


@dataclass
class Ctx:
    """What an emitter may look at for node ``node`` (number ``index`` in the schedule)."""

    graph: Graph
    arena: ArenaMap
    node: Node
    index: int
    kernels: str = "cpu"  # KERNEL_CHOICES: where int8 layers with an RSP kernel run
    # The node run in one call with this one (plan.json quantize_stem: a QuantizeLinear and
    # the stem Conv reading its output; each names the other), or None.
    pair: Node | None = None

    def shape(self, name: str) -> list[int]:
        return list(self.graph.tensors[name].shape)

    def dtype(self, name: str) -> str:
        return self.graph.tensors[name].dtype

    def numel(self, name: str) -> int:
        return int(np.prod(self.shape(name), dtype=np.int64))

    def is_const(self, name: str) -> bool:
        return self.graph.is_constant(name)

    def const(self, name: str) -> np.ndarray:
        return self.graph.constants[name]

    def sym(self, base: str) -> str:
        """A file-scope name private to this node."""
        return f"n{self.index}_{base}"

    def ptr(self, name: str) -> str:
        """C expression of activation ``name`` in the arena (typed pointer)."""
        dtype = self.dtype(name)
        if dtype not in MACROS:
            raise unsupported(self.node, f"tensor {name!r} of dtype {dtype}")
        return f"{MACROS[dtype]}({self.arena.offset(name)}u)"

    def same_memory(self, a: str, b: str) -> bool:
        return self.arena.offset(a) == self.arena.offset(b)

    def require_disjoint(self, out: str, *inputs: str) -> None:
        """Kernels that forbid overlap: the plan must not alias these (a planner bug)."""
        for name in inputs:
            if name and not self.is_const(name) and self.arena.overlaps(out, name):
                raise AssertionError(
                    f"plan bug: node {self.node.name!r} ({self.node.op}) output {out!r} "
                    f"overlaps input {name!r}, which its kernel does not allow")
