"""Apache TVM USMP's hill climb (tir/usmp/algo/hill_climb.cc, v0.19), rewritten.

Repeats a first-fit greedy over a buffer order and perturbs the order by
swapping two buffers near the top of the arena:

1. Start from greedy_by_size's order (size, conflicts, name; descending).
2. Greedy: for each buffer in order, walk its already-placed conflicting
   buffers by ascending offset; whenever the candidate overlaps one, move the
   candidate just above it. Unlike greedy.py this reuses holes.
3. Accept the new placement if it is the first, or fits and is smaller, or
   fits and wins a lottery: ``rand() % 100 < 50 * (total - best) / total /
   attempt`` (integer arithmetic). Otherwise undo the last swap. Stop after 500
   attempts or when the arena reaches the desired size (the live-bytes bound).
4. Pick a buffer reaching the top (``rand() % count``, in order position), a
   first-level neighbour (conflicts earlier in the order) and, with
   probability 74/100, a second-level one (conflicts of conflicts, each earlier
   than its first-level buffer); swap them.

The random numbers are glibc's ``rand_r`` seeded with 0, as TVM uses on Linux,
so a run is deterministic and follows TVM's choices. What TVM does and this
keeps: the result is the *last accepted* placement, which may be worse than an
earlier one (``auto`` compares every strategy anyway); "total" is the raw top
``max(offset + size)``. Deviations: where TVM would loop forever (every swap
candidate is the picked buffer itself) the attempt is skipped; the greedy only
re-places the buffers a swap can affect (same result, less work).
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping

from dnn64build.planner.greedy import size_key
from dnn64build.planner.problem import BufferId, Offset, Problem, align_up, conflict_lists

MAX_ATTEMPTS = 500
_MASK32 = 0xFFFFFFFF


class GlibcRandR:
    """glibc's ``rand_r``: three steps of the ANSI C LCG, 11+10+10 result bits."""

    def __init__(self, seed: int = 0):
        self.state = seed & _MASK32

    def _step(self) -> int:
        self.state = (self.state * 1103515245 + 12345) & _MASK32
        return self.state >> 16

    def __call__(self) -> int:
        result = self._step() % 2048
        result = (result << 10) ^ (self._step() % 1024)
        return (result << 10) ^ (self._step() % 1024)


class IncrementalFirstFit:
    """Step 2, recomputing only what an order change can affect.

    A buffer's placement depends only on which of its conflicts come before it
    and where those sit. So after a change of order, a buffer is re-placed
    only if it moved, or a conflict of it moved or got a new offset; the
    result is the same as placing everything again. ``offset[i]`` is None when
    buffer i did not fit under the capacity."""

    def __init__(self, problem: Problem, conflicts: list[list[int]], capacity: int | None):
        self.conflicts = conflicts
        self.capacity = capacity
        self.footprint = [b.footprint for b in problem.buffers]
        self.alignment = [b.alignment for b in problem.buffers]
        self.uniform = len(set(self.alignment)) <= 1  # tops need no extra rounding
        self.order: list[int] = []
        self.offset: list[Offset | None] = [None] * len(problem)

    def run(self, order: list[int]) -> list[Offset | None]:
        pos = [0] * len(order)
        for p, b in enumerate(order):
            pos[b] = p
        conflicts, offsets = self.conflicts, self.offset
        if self.order:
            moved = [p for p in range(len(order)) if order[p] != self.order[p]]
            # A moved buffer may now precede a different set of its conflicts.
            start = moved[0] if moved else 0
            queued = {pos[c] for p in moved for c in conflicts[order[p]] if pos[c] > start}
            queued.update(moved)
        else:
            queued = set(range(len(order)))
        # Re-place by position; a buffer that gets a new offset queues its
        # conflicts after it.
        heap = sorted(queued)
        while heap:
            p = heapq.heappop(heap)
            k = order[p]
            offset = self._place(k, pos)
            if offset == offsets[k]:
                continue
            offsets[k] = offset
            for c in conflicts[k]:
                q = pos[c]
                if q > p and q not in queued:
                    queued.add(q)
                    heapq.heappush(heap, q)
        self.order = list(order)
        return list(offsets)

    def _place(self, i: int, pos: list[int]) -> Offset | None:
        cap, fp, need, align = self.capacity, self.footprint, self.footprint[i], self.alignment[i]
        if cap is not None and need > cap:
            return None
        offset, here = self.offset, pos[i]
        # A placed buffer's top, offset + size rounded to its alignment, is
        # offset + footprint since its offset is aligned.
        below = sorted([
            (off, off + fp[j])
            for j in self.conflicts[i]
            if pos[j] < here and (off := offset[j]) is not None
        ])
        candidate = 0
        for off, top in below:
            if cap is None and candidate + need <= off:
                break  # a gap: no later buffer (higher offset) can move the candidate
            if not self.uniform:
                top = align_up(top, align)
            # TVM rejects the pool as soon as any conflict's top leaves no room.
            if cap is not None and top + need > cap:
                return None
            if top > candidate and candidate + need > off:
                candidate = top
        return candidate


def accept(best: int, total: int, could_not_fit: bool, attempt: int, rand: GlibcRandR) -> bool:
    """Step 3. ``best`` is 0 before the first fitting placement. Draws a random
    number only when the placement fits and is not smaller, as TVM does."""
    if not best:
        return True
    if could_not_fit:
        return False
    return best > total or rand() % 100 < 50 * (total - best) // total // attempt


def neighbours(
    node: int, conflicts: list[list[int]], pos: Mapping[int, int] | list[int]
) -> tuple[list[int], list[int]]:
    """Step 4's candidates: conflicts of ``node`` earlier in the order, and
    conflicts of each conflict c earlier than c (repeats kept), by position
    (``pos[buffer]``)."""
    here = pos[node]
    first = [c for c in conflicts[node] if here > pos[c]]
    second = []
    for c1 in conflicts[node]:
        p1 = pos[c1]
        second += [c2 for c2 in conflicts[c1] if p1 > pos[c2]]
    key = pos.__getitem__
    return sorted(first, key=key), sorted(second, key=key)


def hill_climb(
    problem: Problem,
    capacity: int | None = None,
    desired_bytes: int = 0,
) -> dict[BufferId, Offset] | None:
    """TVM's hill climb; None when its last accepted placement does not fit."""
    n = len(problem)
    if n == 0:
        return {}
    bufs = problem.buffers
    sizes = [b.size for b in bufs]
    conflicts = conflict_lists(problem)
    rand = GlibcRandR(0)
    order = sorted(range(n), key=size_key(problem, conflicts))
    pos = [0] * n  # buffer -> position in order
    for p, b in enumerate(order):
        pos[b] = p
    first_fit = IncrementalFirstFit(problem, conflicts, capacity)

    def swap(p1: int, p2: int) -> None:
        if p1 == p2:
            return
        b1, b2 = order[p1], order[p2]
        order[p1], order[p2] = b2, b1
        pos[b1], pos[b2] = p2, p1

    def top_of(alloc: list[Offset | None]) -> int | None:
        return max([off + size for off, size in zip(alloc, sizes, strict=True) if off is not None],
                   default=None)

    total_size = 0
    swap_p1 = swap_p2 = -1
    allocation: list[Offset | None] = []
    result: list[Offset | None] = []
    for attempt in range(MAX_ATTEMPTS):
        rollback = allocation
        allocation = first_fit.run(order)
        could_not_fit = None in allocation
        top = top_of(allocation)
        if top is None:
            return None
        if accept(total_size, top, could_not_fit, attempt, rand):
            result = allocation
            if not could_not_fit:
                total_size = top
                if total_size <= desired_bytes:
                    break
        else:
            swap(swap_p2, swap_p1)
            allocation = rollback
            top = top_of(allocation)

        at_top = sorted(
            (i for i, (off, size) in enumerate(zip(allocation, sizes, strict=True))
             if off is not None and off + size == top),
            key=pos.__getitem__,
        )
        node = at_top[rand() % len(at_top)]
        first, second = neighbours(node, conflicts, pos)
        if not first:
            continue
        pick1 = first[rand() % len(first)]
        pick2 = pick1
        endless = (len(first) >= 2 or len(second) >= 2) and set(first + second) == {pick1}
        while pick2 == pick1 and not endless:
            if second and rand() % 100 > 25:
                pick2 = second[rand() % len(second)]
            else:
                pick2 = first[rand() % len(first)]
            if len(second) < 2 and len(first) < 2:
                break
        if pick1 == pick2:
            continue
        swap_p1, swap_p2 = pos[pick1], pos[pick2]
        swap(swap_p1, swap_p2)

    if None in result:
        return None
    return {bufs[i].id: off for i, off in enumerate(result) if off is not None}
