"""Apache TVM USMP's greedy allocators (tir/usmp/algo/greedy.cc, v0.19), rewritten.

Both sort the buffers, then place each one *with no gap search*: at the lowest
offset above every already-placed buffer whose lifetime overlaps it, i.e.
``max(align_up(offset_c + size_c, alignment_c))`` over those buffers, or 0.
A hole below the highest conflicting buffer is never reused.

Sort keys (all descending), as in TVM:

- ``greedy_by_size``: size, then number of conflicts, then name;
- ``greedy_by_conflicts``: number of conflicts, then size, then name.

Names compare as byte strings (``std::string``'s ``>``). Deviations, both
no-ops when every buffer has the same alignment: the candidate is also rounded
up to the buffer's *own* alignment (TVM assumes uniform alignment), and a
capacity is checked against the footprint rather than the raw size.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from dnn64build.planner.problem import BufferId, Offset, Problem, align_up, conflict_lists

SortKey = Callable[[int], tuple]


def size_key(problem: Problem, conflicts: list[list[int]]) -> SortKey:
    """greedy_by_size's order, as an ascending key (every field negated)."""
    return lambda i: (
        -problem.buffers[i].size,
        -len(conflicts[i]),
        _descending_name(problem.buffers[i].id),
    )


def conflicts_key(problem: Problem, conflicts: list[list[int]]) -> SortKey:
    """greedy_by_conflicts' order, as an ascending key."""
    return lambda i: (
        -len(conflicts[i]),
        -problem.buffers[i].size,
        _descending_name(problem.buffers[i].id),
    )


def _descending_name(name: str) -> tuple[int, ...]:
    # Negated bytes, then a sentinel so that a longer name with the same
    # prefix sorts first, as "ab" > "a" does in std::string.
    return tuple(-b for b in name.encode()) + (1,)


def place_no_gap(
    problem: Problem,
    conflicts: list[list[int]],
    order: Sequence[int],
    capacity: int | None = None,
) -> dict[BufferId, Offset] | None:
    """TVM's PostSortAllocation on one pool; None when a buffer does not fit
    under ``capacity``."""
    offsets: dict[int, Offset] = {}
    bufs = problem.buffers
    for i in order:
        buf = bufs[i]
        offset = 0
        for j in conflicts[i]:
            if j in offsets:
                top = align_up(offsets[j] + bufs[j].size, bufs[j].alignment)
                offset = max(offset, top)
        offset = align_up(offset, buf.alignment)
        if capacity is not None and offset + buf.footprint > capacity:
            return None
        offsets[i] = offset
    return {bufs[i].id: off for i, off in offsets.items()}


def greedy_by_size(problem: Problem, capacity: int | None = None) -> dict[BufferId, Offset] | None:
    conflicts = conflict_lists(problem)
    order = sorted(range(len(problem)), key=size_key(problem, conflicts))
    return place_no_gap(problem, conflicts, order, capacity)


def greedy_by_conflicts(
    problem: Problem, capacity: int | None = None
) -> dict[BufferId, Offset] | None:
    conflicts = conflict_lists(problem)
    order = sorted(range(len(problem)), key=conflicts_key(problem, conflicts))
    return place_no_gap(problem, conflicts, order, capacity)
