"""Exact placement by branch and bound, in the spirit of MiniMalloc.

The search space. Pushing every buffer of a plan down until it rests on a
conflicting buffer (or on 0) never grows the arena, so some optimal plan has
each buffer at the aligned top of the conflicting buffers *below* it. Listing
that plan's buffers by offset, each one's offset is then the aligned top of the
conflicting buffers listed before it: its *floor*. So the search picks the next
buffer to place and puts it at its floor; the leaves cover an optimal plan.

Pruning rules, each a named switch in :class:`ExactParams` (all keep the search
exact; every combination is tested against brute force):

- ``canonical_order``: only place buffers in nondecreasing offset order, ties
  by index (the listing above), so each plan is reached once;
- ``section_bound``: at every time section the unplaced live buffers stack above
  the placed ones (and above the last offset, under canonical order); prune
  when that bound reaches the incumbent;
- ``symmetric_buffers``: of buffers with identical lifetime and footprint, place
  the lower index first;
- ``heuristic_incumbent``: start from best_fit's arena so bounds bite at once.

The search is bounded by *work*, so a given problem and budget give the same
plan on any machine: each node costs ``NODE_OVERHEAD`` units plus one per
buffer and per time section (what choosing its children scans), so a unit
takes about the same time on small and large problems; the search stops when
``work_budget`` units are spent (or ``node_budget`` nodes, if set). A
wall-clock ``deadline_s`` is opt-in only: with it the result depends on the
machine's speed.

Outcomes are kept apart: optimal, budget exhausted, deadline exceeded (both
with the best plan found, if any), infeasible under the capacity. The search
stops early when it meets the live-bytes lower bound.
"""

from __future__ import annotations

import bisect
import enum
import time
from collections.abc import Mapping
from dataclasses import dataclass

from dnn64build.planner.best_fit import best_fit
from dnn64build.planner.problem import (
    BufferId,
    Offset,
    Problem,
    align_up,
    arena_bytes,
    conflict_lists,
    lower_bound,
)

# Units of work (see above). On the reference machine (2 shared cores) a unit
# takes 0.06-0.14 microseconds: the default budget is 0.4-0.9 s.
WORK_BUDGET = 6_000_000
NODE_OVERHEAD = 256  # a node's fixed cost (place, unplace, sort), in units


@dataclass(frozen=True)
class ExactParams:
    canonical_order: bool = True
    section_bound: bool = True
    symmetric_buffers: bool = True
    heuristic_incumbent: bool = True
    work_budget: int = WORK_BUDGET
    node_budget: int | None = None  # an extra cap on nodes, if set
    deadline_s: float | None = None  # opt-in: seconds from the start of the search


class ExactOutcome(enum.Enum):
    OPTIMAL = "optimal"
    BUDGET_EXHAUSTED = "budget_exhausted"
    DEADLINE_EXCEEDED = "deadline_exceeded"
    INFEASIBLE = "infeasible"


@dataclass(frozen=True)
class ExactResult:
    outcome: ExactOutcome
    offsets: dict[BufferId, Offset] | None  # best plan within the capacity, if any
    arena_bytes: int | None
    nodes: int


class _Stop(Exception):
    def __init__(self, outcome: ExactOutcome):
        self.outcome = outcome


class _Search:
    """Mutable search state. Invariants between ``place``/``unplace`` pairs:
    ``floor[i]`` is the highest footprint top among placed buffers conflicting
    with i; ``height[k]`` / ``remaining[k]`` are the highest placed top and the
    unplaced footprint bytes at time section k."""

    def __init__(self, problem: Problem, params: ExactParams, threshold: int):
        self.bufs = problem.buffers
        self.params = params
        self.threshold = threshold  # a leaf must have an arena below this
        self.conflicts = conflict_lists(problem)
        n = len(self.bufs)
        cuts = sorted({b.lower for b in self.bufs} | {b.upper for b in self.bufs})
        self.sections = [
            range(bisect.bisect_left(cuts, b.lower), bisect.bisect_left(cuts, b.upper))
            for b in self.bufs
        ]
        self.height = [0] * max(len(cuts) - 1, 0)
        self.remaining = [0] * len(self.height)
        for i, b in enumerate(self.bufs):
            for k in self.sections[i]:
                self.remaining[k] += b.footprint
        self.footprint = [b.footprint for b in self.bufs]
        self.alignment = [b.alignment for b in self.bufs]
        self.offset: list[Offset | None] = [None] * n
        self.floor = [0] * n
        self.history: list[tuple[int, list[int], list[int]]] = []
        self.twin = self._twins() if params.symmetric_buffers else [None] * n
        self.best: dict[int, Offset] | None = None
        self.nodes = 0
        self.node_cost = NODE_OVERHEAD + n + len(self.height)
        limits = [params.work_budget // self.node_cost]
        if params.node_budget is not None:
            limits.append(params.node_budget)
        self.max_nodes = min(limits)

    def _twins(self) -> list[int | None]:
        seen: dict[tuple[int, int, int, int], int] = {}
        twin: list[int | None] = []
        for i, b in enumerate(self.bufs):
            key = (b.lower, b.upper, b.footprint, b.alignment)
            twin.append(seen.get(key))
            seen[key] = i
        return twin

    def place(self, i: int, offset: Offset) -> None:
        size = self.footprint[i]
        top = offset + size
        floor, height, remaining = self.floor, self.height, self.remaining
        saved_floor = [floor[j] for j in self.conflicts[i]]
        saved_height = [height[k] for k in self.sections[i]]
        for j in self.conflicts[i]:
            if floor[j] < top:
                floor[j] = top
        for k in self.sections[i]:
            remaining[k] -= size
            if height[k] < top:
                height[k] = top
        self.offset[i] = offset
        self.history.append((i, saved_floor, saved_height))

    def unplace(self) -> None:
        i, saved_floor, saved_height = self.history.pop()
        size = self.footprint[i]
        floor, height, remaining = self.floor, self.height, self.remaining
        for j, value in zip(self.conflicts[i], saved_floor, strict=True):
            floor[j] = value
        for k, value in zip(self.sections[i], saved_height, strict=True):
            remaining[k] += size
            height[k] = value
        self.offset[i] = None

    def children(self) -> list[tuple[Offset, int]]:
        """(offset, buffer) pairs to branch on, best first; [] when pruned."""
        canonical = self.params.canonical_order
        last_offset, last = 0, -1
        if canonical and self.history:
            last = self.history[-1][0]
            last_offset = self.offset[last] or 0
        threshold = self.threshold
        if self.params.section_bound:
            bound = max(
                ((h if h > last_offset else last_offset) + r if r else h)
                for h, r in zip(self.height, self.remaining, strict=True)
            )
            if bound >= threshold:
                return []
        out = []
        offset, twins, floor, footprint = self.offset, self.twin, self.floor, self.footprint
        for i, align in enumerate(self.alignment):
            if offset[i] is not None:
                continue
            twin = twins[i]
            if twin is not None and offset[twin] is None:
                continue
            at = -(-floor[i] // align) * align
            if canonical and (at < last_offset or (at == last_offset and i < last)):
                continue
            if at + footprint[i] >= threshold:
                continue
            out.append((at, -footprint[i], i))
        out.sort()
        return [(at, i) for at, _, i in out]

    def run(self, lower: int, deadline: float | None) -> None:
        n = len(self.bufs)
        frames = [self.children()]
        cursors = [0]
        while frames:
            if cursors[-1] == len(frames[-1]):
                frames.pop()
                cursors.pop()
                if self.history:
                    self.unplace()
                continue
            at, i = frames[-1][cursors[-1]]
            cursors[-1] += 1
            if self.offset[i] is not None or align_up(self.floor[i], self.alignment[i]) != at:
                raise AssertionError("exact search: stale child (a bug)")
            self.nodes += 1
            if self.nodes > self.max_nodes:
                raise _Stop(ExactOutcome.BUDGET_EXHAUSTED)
            if deadline is not None and self.nodes % 256 == 1 and time.perf_counter() > deadline:
                raise _Stop(ExactOutcome.DEADLINE_EXCEEDED)
            self.place(i, at)
            if len(self.history) == n:
                arena = max(o + f for o, f in zip(self.offset, self.footprint, strict=True))
                if arena < self.threshold:
                    self.best = {j: o for j, o in enumerate(self.offset) if o is not None}
                    self.threshold = arena
                    if arena <= lower:
                        raise _Stop(ExactOutcome.OPTIMAL)
                self.unplace()
                continue
            frames.append(self.children())
            cursors.append(0)


def solve_exact(
    problem: Problem,
    params: ExactParams | None = None,
    capacity: int | None = None,
    incumbent: Mapping[BufferId, Offset] | None = None,
) -> ExactResult:
    """Minimise the arena; with ``capacity``, only plans that fit it count."""
    params = params or ExactParams()
    if not any(b.footprint for b in problem.buffers):
        return ExactResult(ExactOutcome.OPTIMAL, {b.id: 0 for b in problem.buffers}, 0, 0)
    start = time.perf_counter()
    deadline = None if params.deadline_s is None else start + params.deadline_s
    if incumbent is None and params.heuristic_incumbent:
        incumbent = best_fit(problem)
    best_ids: dict[BufferId, Offset] | None = None
    threshold = capacity + 1 if capacity is not None else None
    if incumbent is not None:
        arena = arena_bytes(problem, incumbent)
        if threshold is None or arena < threshold:
            best_ids, threshold = dict(incumbent), arena
    if threshold is None:  # no incumbent, no capacity: any finite plan will do
        threshold = sum(b.footprint + b.alignment for b in problem.buffers) + 1
    lower = lower_bound(problem).bytes
    # Empty buffers take no bytes: they sit at 0 (aligned for any alignment)
    # and stay out of the search, where stacking them could cost alignment.
    empty = {b.id: 0 for b in problem.buffers if not b.footprint}
    sized = Problem.of(b for b in problem.buffers if b.footprint)
    search = _Search(sized, params, threshold)
    outcome = ExactOutcome.OPTIMAL
    if best_ids is None or arena_bytes(problem, best_ids) > lower:
        try:
            search.run(lower, deadline)
        except _Stop as stop:
            outcome = stop.outcome
    if search.best is not None:
        best_ids = {sized.buffers[i].id: off for i, off in search.best.items()} | empty
    if best_ids is None and outcome is ExactOutcome.OPTIMAL:
        outcome = ExactOutcome.INFEASIBLE
    arena = arena_bytes(problem, best_ids) if best_ids is not None else None
    return ExactResult(outcome, best_ids, arena, search.nodes)
