"""Schedulers: an execution order for a DAG of ops over tensors.

- ``graph``: the order the ops are given in (the graph's topological order);
- ``search``: memory-aware, minimising peak live bytes. The tensors live after
  a set S of ops has run depend only on S, so the best peak to reach S is all
  that matters about how S was reached (Serenity's dynamic programme over
  scheduled sets). States are expanded level by level; when a level holds more
  than ``beam_width`` sets only the best are kept (HMCOS-style beam), and the
  result says whether that ever happened (if not, the order is optimal).
  The search is bounded by *work*, not time, so the same DAG gets the same
  order on any machine: each level's beam is narrowed to what the rest of
  ``expansion_budget`` ((state, op) pairs scanned) can expand at every level
  still to come, down to 1 (a greedy order: ops² pairs however small the
  budget). An optional wall-clock ``deadline_s`` narrows the beam to 1 once
  it passes (opt-in: it makes the order depend on the machine's speed);
- ``auto``: the better of the two (graph order on a tie).

Live bytes count every activation's footprint from the step that produces it
(step 0 for model inputs) to its last consumer (the last step for model
outputs), aliasing ignored.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dnn64build.planner.problem import align_up

SCHEDULERS = ("graph", "search", "auto")
# (state, op) pairs the search scans at full beam width: 0.2-0.5 s on the
# reference machine (2 shared cores); every zoo model needs under 2% of it.
EXPANSION_BUDGET = 1_000_000

# Schedule.outcome: how the search ended.
OPTIMAL = "optimal"  # nothing was cut: the order has the least peak
BEAM_TRUNCATED = "beam_truncated"  # the beam dropped sets; the order is a heuristic
BUDGET_EXHAUSTED = "budget_exhausted"  # the expansion budget narrowed the beam and it cut
DEADLINE_EXCEEDED = "deadline_exceeded"  # the opt-in deadline passed; greedy from there
NOT_SEARCHED = "not_searched"  # scheduler "graph"


@dataclass(frozen=True)
class Op:
    """One op. ``alias`` says how its first output may share memory (see
    aliasing.py): "view" (it is its first input), "inplace" (it may overwrite an
    input that dies here), "concat" (its inputs may be laid out inside it, in
    order, without copies), or "" (its own buffer)."""

    name: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    alias: str = ""
    # For "inplace": the inputs it may overwrite (None: any of the same size).
    inplace_inputs: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Dag:
    """Ops in a topological order. ``sizes`` holds the activations (tensors in
    the arena); any other tensor named by an op (a constant) is ignored."""

    ops: tuple[Op, ...]
    sizes: Mapping[str, int]
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Schedule:
    order: tuple[str, ...]  # op names in execution order
    peak_bytes: int
    method: str  # "graph" or "search"
    optimal: bool  # proven minimal peak (search without truncation)
    peaks: Mapping[str, int]  # peak of every order that was tried
    outcome: str = NOT_SEARCHED  # how the search ended (see the constants above)


def schedule(
    dag: Dag,
    scheduler: str = "auto",
    *,
    alignment: int = 16,
    beam_width: int = 64,
    expansion_budget: int = EXPANSION_BUDGET,
    deadline_s: float | None = None,
) -> Schedule:
    """An order for ``dag``. ``deadline_s`` (seconds from now) is opt-in; without
    it the result depends only on the arguments."""
    if scheduler not in SCHEDULERS:
        raise ValueError(f"unknown scheduler {scheduler!r}; choose one of {', '.join(SCHEDULERS)}")
    graph_order = tuple(range(len(dag.ops)))
    graph_peak = peak_bytes(dag, graph_order, alignment)
    names = tuple(op.name for op in dag.ops)
    if scheduler == "graph":
        return Schedule(names, graph_peak, "graph", False, {"graph": graph_peak})
    deadline = None if deadline_s is None else time.perf_counter() + deadline_s
    order, peak, outcome = _search(dag, alignment, beam_width, expansion_budget, deadline)
    exact = outcome == OPTIMAL
    peaks = {"graph": graph_peak, "search": peak}
    if scheduler == "auto" and graph_peak <= peak:
        return Schedule(names, graph_peak, "graph", exact and graph_peak == peak, peaks, outcome)
    return Schedule(tuple(names[i] for i in order), peak, "search", exact, peaks, outcome)


def lifetimes(dag: Dag, order: Sequence[int]) -> dict[str, tuple[int, int]]:
    """Half-open ``[lower, upper)`` step range of every activation under ``order``."""
    step_of = {op: step for step, op in enumerate(order)}
    last_step = len(order) - 1
    first: dict[str, int] = {t: 0 for t in dag.inputs if t in dag.sizes}
    last: dict[str, int] = dict(first)
    for i, op in enumerate(dag.ops):
        for t in op.outputs:
            if t in dag.sizes:
                first[t] = step_of[i]
                last[t] = max(last.get(t, step_of[i]), step_of[i])
    for i, op in enumerate(dag.ops):
        for t in op.inputs:
            if t in first:
                last[t] = max(last[t], step_of[i])
    for t in dag.outputs:
        if t in first:
            last[t] = max(last_step, 0)
    return {t: (first[t], last[t] + 1) for t in first}


def peak_bytes(dag: Dag, order: Sequence[int], alignment: int = 16) -> int:
    """Peak live footprint bytes of ``order`` (0 for an empty graph)."""
    delta = [0] * (len(order) + 2)
    for t, (lower, upper) in lifetimes(dag, order).items():
        size = align_up(dag.sizes[t], alignment)
        delta[lower] += size
        delta[upper] -= size
    peak = running = 0
    for d in delta:
        running += d
        peak = max(peak, running)
    return peak


def _search(
    dag: Dag, alignment: int, beam_width: int, budget: int, deadline: float | None
) -> tuple[tuple[int, ...], int, str]:
    n = len(dag.ops)
    producer = {t: i for i, op in enumerate(dag.ops) for t in op.outputs}
    size = {t: align_up(s, alignment) for t, s in dag.sizes.items()}
    kept = set(dag.outputs)
    needs = [0] * n  # ops whose outputs op i reads
    consumers: dict[str, int] = {}  # tensor -> bit mask of ops reading it
    for i, op in enumerate(dag.ops):
        for t in op.inputs:
            if t in producer and producer[t] != i:
                needs[i] |= 1 << producer[t]
            consumers[t] = consumers.get(t, 0) | (1 << i)
    out_bytes = [sum(size.get(t, 0) for t in op.outputs) for op in dag.ops]
    start_live = sum(size[t] for t in dag.inputs if t in size)
    # model inputs nobody reads live at step 0 only
    idle = sum(size[t] for t in dag.inputs if t in size and t not in consumers and t not in kept)

    def freed(i: int, mask: int) -> int:
        """Bytes that die once op i has run and ``mask`` (including i) is done."""
        dead = 0
        for t in set(dag.ops[i].inputs) | set(dag.ops[i].outputs):
            if t in size and t not in kept and consumers.get(t, 0) & ~mask == 0:
                dead += size[t]
        return dead

    # level: mask -> (peak, live, parent mask, op)
    level: dict[int, tuple[int, int, int, int]] = {0: (start_live, start_live, -1, -1)}
    history = []
    outcome = OPTIMAL
    late = False  # the deadline has passed
    work = 0  # (state, op) pairs scanned
    for depth in range(n):
        late = late or (deadline is not None and time.perf_counter() > deadline)
        work += n * len(level)
        nxt: dict[int, tuple[int, int, int, int]] = {}
        for mask, (peak, live, _, _) in level.items():
            for i in range(n):
                bit = 1 << i
                if mask & bit or needs[i] & ~mask:
                    continue
                new_mask = mask | bit
                step = live + out_bytes[i]
                after = step - freed(i, new_mask) - (idle if mask == 0 else 0)
                entry = (max(peak, step), after, mask, i)
                old = nxt.get(new_mask)
                if old is None or entry[:2] < old[:2]:
                    nxt[new_mask] = entry
        # Keep no more sets than the rest of the budget can expand at every
        # remaining level; a budget or deadline cut outranks a beam cut.
        affordable = max((budget - work) // (n * max(n - depth - 1, 1)), 1)
        width, reason = beam_width, BEAM_TRUNCATED
        if late:
            width, reason = 1, DEADLINE_EXCEEDED
        elif affordable < beam_width:
            width, reason = affordable, BUDGET_EXHAUSTED
        if len(nxt) > width:
            if outcome in (OPTIMAL, BEAM_TRUNCATED):
                outcome = reason
            best = sorted(nxt.items(), key=lambda kv: (kv[1][0], kv[1][1], kv[0]))[:width]
            nxt = dict(best)
        history.append(level)
        level = nxt
    history.append(level)
    if not level:
        raise ValueError("the op graph has a cycle or an input no op produces")
    (peak, _, mask, op), = level.values()
    order = [op]
    for depth in range(n - 1, 0, -1):
        _, _, mask, op = history[depth][mask]
        order.append(op)
    return tuple(reversed(order)) if n else (), peak, outcome
