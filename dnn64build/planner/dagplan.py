"""Plan a DAG of ops end to end: schedule, alias groups, allocation, plan.json."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from dnn64build.planner.aliasing import Aliases, find_aliases
from dnn64build.planner.allocate import allocate
from dnn64build.planner.exact import ExactParams
from dnn64build.planner.planfile import build_plan, group_problem
from dnn64build.planner.problem import Peak, Problem, lower_bound
from dnn64build.planner.schedule import EXPANSION_BUDGET, Dag, Schedule, lifetimes, schedule

ALL_KINDS = frozenset({"view", "inplace", "concat"})


class PlanError(Exception):
    """No plan fits the capacity (the caller turns this into a UserError)."""


def order_problem(
    dag: Dag, order: Sequence[int], alignment: int
) -> tuple[dict[str, tuple[int, int]], Aliases, Problem]:
    """Lifetimes, alias groups and the allocation problem of ``dag`` run in
    ``order`` (op indices)."""
    spans = lifetimes(dag, order)

    def grouped(kinds: frozenset[str], copied: frozenset[tuple[str, str]]) -> Candidate:
        aliases = find_aliases(dag, order, spans, alignment, kinds, copied)
        problem = group_problem(dag.sizes, spans, aliases, alignment)
        return Candidate(lower_bound(problem), copied, aliases, problem)

    # A copy-free concat makes its output live from its first input's birth (a U-Net's
    # skip holds its whole concat buffer through the network below it). So, while that
    # lowers the live-bytes bound, copy instead the first-born input of the concat (among
    # those whose groups are live at the peak) that lowers it most; and keep no concat
    # alias at all when that is lower still.
    best = grouped(ALL_KINDS, frozenset())
    while True:
        trials = [grouped(ALL_KINDS, best.copied | {part})
                  for part in _concat_parts(dag, spans, best.aliases, set(best.peak.live))]
        trial = min(trials, key=lambda c: c.peak.bytes, default=None)
        if trial is None or trial.peak.bytes >= best.peak.bytes:
            break
        best = trial
    plain = grouped(ALL_KINDS - {"concat"}, frozenset())
    if plain.peak.bytes < best.peak.bytes:
        best = plain
    return spans, best.aliases, best.problem


class Candidate(NamedTuple):
    peak: Peak
    copied: frozenset[tuple[str, str]]
    aliases: Aliases
    problem: Problem


def _concat_parts(dag: Dag, spans: dict[str, tuple[int, int]], aliases: Aliases,
                  roots: set[str]) -> list[tuple[str, str]]:
    """Per concat whose group root is in ``roots``, the earliest-born input placed inside
    its output, as a (concat op, input) pair, in op order: copying it is what moves the
    group's birth later. Trying one input per concat keeps planning fast (DenseNet's
    concats have up to 32 inputs)."""
    def root(t: str) -> str:
        return aliases[t][0] if t in aliases else t

    parts = []
    for op in dag.ops:
        if op.alias != "concat" or not op.outputs or root(op.outputs[0]) not in roots:
            continue
        inside = [t for t in op.inputs if t in aliases and root(t) == root(op.outputs[0])]
        if inside:
            parts.append((op.name, min(inside, key=lambda t: spans[t][0])))
    return parts


@dataclass(frozen=True)
class PlanParams:
    """How ``plan_dag`` plans. The searches stop on work budgets (``expansion_budget`` for
    the schedule, ``exact_params.work_budget`` for the exact placement), so the plan
    depends only on the DAG and these. ``deadline_s`` is opt-in and makes it depend on the
    machine's speed: a fifth of it for the schedule search, what is left for allocation.
    ``timings=True`` adds each trial's seconds to the plan, which then differs from run to
    run; by default plans of one DAG and params are byte-identical."""

    algorithm: str = "auto"
    scheduler: str = "auto"
    alignment: int = 16
    capacity: int | None = None
    exact_params: ExactParams | None = None  # None: ExactParams()
    expansion_budget: int = EXPANSION_BUDGET
    deadline_s: float | None = None
    timings: bool = False  # True: each trial's seconds in the plan (differs run to run)


def scheduled_problem(
    dag: Dag, params: PlanParams, deadline_s: float | None = None
) -> tuple[Schedule, dict[str, tuple[int, int]], Aliases, Problem]:
    """The schedule ``params`` choose for ``dag`` (searching at most ``deadline_s``
    seconds, if given), and the lifetimes, alias groups and allocation problem of that
    order."""
    sched = schedule(dag, params.scheduler, alignment=params.alignment,
                     expansion_budget=params.expansion_budget, deadline_s=deadline_s)
    index = {op.name: i for i, op in enumerate(dag.ops)}
    return (sched,
            *order_problem(dag, [index[name] for name in sched.order], params.alignment))


def plan_dag(dag: Dag, params: PlanParams | None = None) -> dict[str, Any]:
    """plan.json content for ``dag`` (default PlanParams()); PlanError if no plan fits
    ``params.capacity``."""
    params = params or PlanParams()
    start = time.perf_counter()
    deadline_s = params.deadline_s
    sched, spans, aliases, problem = scheduled_problem(
        dag, params, None if deadline_s is None else deadline_s / 5)
    left = None if deadline_s is None else max(deadline_s - (time.perf_counter() - start), 0.0)
    allocation = allocate(problem, params.algorithm, capacity=params.capacity,
                          exact_params=params.exact_params, deadline_s=left)
    if allocation.offsets is None:
        raise PlanError(
            f"no plan within {params.capacity} bytes ({params.algorithm}: "
            f"{allocation.outcome}); the live-bytes lower bound is "
            f"{allocation.lower_bound_bytes}"
        )
    return build_plan(
        problem=problem,
        allocation=allocation,
        sched=sched,
        sizes=dag.sizes,
        spans=spans,
        aliases=aliases,
        alignment=params.alignment,
        timings=params.timings,
    )
