"""Best fit: largest buffer first, each into the smallest hole that fits.

Buffers are taken by footprint, largest first (input order breaks ties). Each
one goes into the *smallest* hole that fits it among the already-placed buffers
whose lifetimes overlap its own (holes scanned by ascending offset; the lowest
of equally small holes wins), or on top of them all when no hole fits.
Guarantees nothing beyond validity; it is fast and usually tight. TFLite Micro's
greedy memory planner takes buffers in the same order but puts each into the *first*
(lowest) hole that fits, so this is not its algorithm.
"""

from __future__ import annotations

from dnn64build.planner.problem import BufferId, Offset, Problem, align_up, conflict_lists


def best_fit(problem: Problem, capacity: int | None = None) -> dict[BufferId, Offset] | None:
    bufs = problem.buffers
    conflicts = conflict_lists(problem)
    order = sorted(range(len(bufs)), key=lambda i: -bufs[i].footprint)
    offsets: dict[int, Offset] = {}
    for i in order:
        need, align = bufs[i].footprint, bufs[i].alignment
        occupied = sorted(
            (offsets[j], offsets[j] + bufs[j].footprint) for j in conflicts[i] if j in offsets
        )
        best: tuple[int, Offset] | None = None  # (hole size, offset)
        cursor = 0  # lowest byte not covered by the placed buffers seen so far
        for start, end in occupied:
            candidate = align_up(cursor, align)
            hole = start - candidate
            if hole >= need and (best is None or hole < best[0]):
                best = (hole, candidate)
            cursor = max(cursor, end)
        offset = best[1] if best is not None else align_up(cursor, align)
        if capacity is not None and offset + need > capacity:
            return None
        offsets[i] = offset
    return {bufs[i].id: off for i, off in offsets.items()}
