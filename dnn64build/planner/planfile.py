"""plan.json: the plan of one graph, checkable on its own.

Top-level keys::

    format             "dnn64build-plan/1"
    arena_bytes        bytes the arena needs (highest footprint end)
    lower_bound_bytes  max over steps of live footprint bytes (no plan is smaller)
    op_bound_bytes     the operator-level (whole-tensor) bound: the same maximum
                       with every tensor held whole, as if nothing were fused;
                       equal to lower_bound_bytes for a plan without fused groups
    alignment          the default buffer alignment
    schedule           node names in execution order
    buffers            one entry per activation tensor:
                       name, size, offset, alignment, first, last (INCLUSIVE
                       schedule steps), and for a tensor sharing another's
                       memory alias_of (the group root) + alias_offset
    peak               {"step", "node", "live": buffers live there} at the bound
    algorithm          the strategy whose offsets these are
    outcome            "ok" (a heuristic alone) | "optimal" (proven, or the lower
                       bound met) | "budget_exhausted" | "deadline_exceeded"
    trials             every strategy tried: algorithm, arena_bytes, seconds, outcome, nodes
    scheduler          {"method", "optimal", "outcome", "peaks": {order: peak bytes}};
                       outcome: "optimal" | "beam_truncated" | "budget_exhausted"
                       | "deadline_exceeded" | "not_searched"

A group root's first/last cover its whole group. Model inputs are live from
step 0, model outputs to the last step. This module is the one place where
half-open ``[lower, upper)`` lifetimes become inclusive ``first``/``last``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dnn64build.planner.aliasing import Aliases
from dnn64build.planner.allocate import Allocation
from dnn64build.planner.problem import Buffer, Problem, Step, lower_bound
from dnn64build.planner.schedule import Schedule

FORMAT = "dnn64build-plan/1"


def to_inclusive(lower: Step, upper: Step) -> tuple[Step, Step]:
    """Half-open ``[lower, upper)`` to plan.json's inclusive ``(first, last)``."""
    return lower, upper - 1


def group_problem(
    sizes: Mapping[str, int],
    spans: Mapping[str, tuple[Step, Step]],
    aliases: Aliases,
    alignment: int,
) -> Problem:
    """One buffer per group root, over the union of its members' lifetimes."""
    union: dict[str, tuple[Step, Step]] = {}
    for t, (lower, upper) in spans.items():
        top = aliases[t][0] if t in aliases else t
        lo, up = union.get(top, (lower, upper))
        union[top] = (min(lo, lower), max(up, upper))
    return Problem.of(
        Buffer(t, lower, upper, sizes[t], alignment) for t, (lower, upper) in union.items()
    )


def build_plan(
    *,
    problem: Problem,
    allocation: Allocation,
    sched: Schedule,
    sizes: Mapping[str, int],
    spans: Mapping[str, tuple[Step, Step]],
    aliases: Aliases,
    alignment: int,
    timings: bool,
) -> dict[str, Any]:
    """Assemble plan.json content. ``allocation`` must be feasible."""
    if allocation.offsets is None:
        raise ValueError("build_plan needs a feasible allocation")
    roots = {b.id: b for b in problem.buffers}
    entries = []
    for t in sorted(spans, key=lambda t: (spans[t][0], t)):
        top, shift = aliases.get(t, (t, 0))
        lower, upper = (roots[t].lower, roots[t].upper) if t in roots else spans[t]
        first, last = to_inclusive(lower, upper)
        entry: dict[str, Any] = {
            "name": t,
            "size": sizes[t],
            "offset": allocation.offsets[top] + shift,
            "alignment": alignment,
            "first": first,
            "last": last,
        }
        if t in aliases:
            entry["alias_of"], entry["alias_offset"] = top, shift
        entries.append(entry)
    peak = lower_bound(problem)
    trials = []
    for trial in allocation.trials:
        row: dict[str, Any] = {
            "algorithm": trial.algorithm,
            "arena_bytes": trial.arena_bytes,
            "outcome": trial.outcome,
        }
        if trial.nodes is not None:
            row["nodes"] = trial.nodes
        if timings:
            row["seconds"] = round(trial.seconds, 4)
        trials.append(row)
    return {
        "format": FORMAT,
        "arena_bytes": allocation.arena_bytes,
        "lower_bound_bytes": allocation.lower_bound_bytes,
        "op_bound_bytes": allocation.lower_bound_bytes,  # every buffer here is a whole tensor
        "alignment": alignment,
        "schedule": list(sched.order),
        "buffers": entries,
        "peak": {
            "step": peak.step,
            "node": sched.order[peak.step] if peak.step < len(sched.order) else None,
            "live": sorted(peak.live),
        },
        "algorithm": allocation.algorithm,
        "outcome": allocation.outcome,
        "trials": trials,
        "scheduler": {
            "method": sched.method,
            "optimal": sched.optimal,
            "outcome": sched.outcome,
            "peaks": dict(sched.peaks),
        },
    }

