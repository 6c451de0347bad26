"""The abstract allocation problem: buffers with lifetimes and sizes.

Domain words, stated once:

- a *step* is an index into the execution schedule;
- a buffer's lifetime is half-open, ``[lower, upper)``: it is live at every step
  ``t`` with ``lower <= t < upper`` (plan.json's inclusive ``first``/``last`` are
  converted in :mod:`dnn64build.planner.planfile` and nowhere else);
- an *offset* is a byte position in the arena, a multiple of the buffer's
  alignment;
- a buffer's *footprint* is its size rounded up to its alignment. Allocators
  place footprints, so the arena is ``max(offset + footprint)`` and the live-bytes
  bound below is a true lower bound even when alignments differ.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

BufferId = str
Step = int
Offset = int

DEFAULT_ALIGNMENT = 16


def align_up(value: int, alignment: int) -> int:
    """Smallest multiple of ``alignment`` that is ``>= value``."""
    return -(-value // alignment) * alignment


@dataclass(frozen=True)
class Buffer:
    """One buffer to place. Invariant: ``0 <= lower < upper``, ``size >= 0``,
    ``alignment`` a positive power of two."""

    id: BufferId
    lower: Step
    upper: Step
    size: int
    alignment: int = DEFAULT_ALIGNMENT

    def __post_init__(self) -> None:
        if not 0 <= self.lower < self.upper:
            raise ValueError(f"buffer {self.id}: lifetime [{self.lower}, {self.upper}) is empty")
        if self.size < 0:
            raise ValueError(f"buffer {self.id}: negative size {self.size}")
        if self.alignment <= 0 or self.alignment & (self.alignment - 1):
            raise ValueError(f"buffer {self.id}: alignment {self.alignment} is not a power of 2")

    @property
    def footprint(self) -> int:
        return align_up(self.size, self.alignment)

    def overlaps(self, other: Buffer) -> bool:
        """True when the two lifetimes share a step."""
        return self.lower < other.upper and other.lower < self.upper


@dataclass(frozen=True)
class Problem:
    """A set of buffers with unique ids, in a fixed order (the input order)."""

    buffers: tuple[Buffer, ...]

    def __post_init__(self) -> None:
        seen: set[BufferId] = set()
        for buf in self.buffers:
            if buf.id in seen:
                raise ValueError(f"duplicate buffer id {buf.id!r}")
            seen.add(buf.id)

    @classmethod
    def of(cls, buffers: Iterable[Buffer]) -> Problem:
        return cls(tuple(buffers))

    def __len__(self) -> int:
        return len(self.buffers)


def conflict_lists(problem: Problem) -> list[list[int]]:
    """For each buffer (by index), the indices of the buffers whose lifetimes
    overlap it, ascending. A sweep over lower bounds: O(n log n + conflicts)."""
    order = sorted(range(len(problem)), key=lambda i: problem.buffers[i].lower)
    conflicts: list[list[int]] = [[] for _ in problem.buffers]
    active: list[int] = []
    for i in order:
        lower = problem.buffers[i].lower
        active = [j for j in active if problem.buffers[j].upper > lower]
        for j in active:
            conflicts[i].append(j)
            conflicts[j].append(i)
        active.append(i)
    for row in conflicts:
        row.sort()
    return conflicts


@dataclass(frozen=True)
class Peak:
    """The live-bytes lower bound and where it is reached (first such step)."""

    bytes: int
    step: Step
    live: tuple[BufferId, ...]


def lower_bound(problem: Problem) -> Peak:
    """Max over steps of the live footprint bytes: no plan's arena is smaller,
    because buffers live at the same step occupy disjoint footprints. A sweep
    over lifetime ends, so steps may be sparse (any integers)."""
    events = sorted(
        [(b.lower, 1, b.footprint) for b in problem.buffers]
        + [(b.upper, 0, -b.footprint) for b in problem.buffers]
    )  # at equal steps, ends (0) come before starts: lifetimes are half-open
    peak, step, running = 0, 0, 0
    for when, _, delta in events:
        running += delta
        if running > peak:
            peak, step = running, when
    ids = tuple(b.id for b in problem.buffers if b.lower <= step < b.upper)
    return Peak(peak, step, ids)


def arena_bytes(problem: Problem, offsets: Mapping[BufferId, Offset]) -> int:
    """The arena a placement needs: the highest footprint end."""
    return max((offsets[b.id] + b.footprint for b in problem.buffers), default=0)
