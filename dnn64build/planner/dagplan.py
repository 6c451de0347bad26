"""Plan a DAG of ops end to end: schedule, alias groups, allocation, plan.json."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from dnn64build.planner.aliasing import Aliases, find_aliases
from dnn64build.planner.allocate import allocate
from dnn64build.planner.exact import ExactParams
from dnn64build.planner.planfile import build_plan, group_problem
from dnn64build.planner.problem import Problem, lower_bound
from dnn64build.planner.schedule import EXPANSION_BUDGET, Dag, lifetimes, schedule

ALL_KINDS = frozenset({"view", "inplace", "concat"})


class PlanError(Exception):
    """No plan fits the capacity (the caller turns this into a UserError)."""


def order_problem(
    dag: Dag, order: Sequence[int], alignment: int
) -> tuple[dict[str, tuple[int, int]], Aliases, Problem]:
    """Lifetimes, alias groups and the allocation problem of ``dag`` run in
    ``order`` (op indices)."""
    spans = lifetimes(dag, order)
    # A copy-free concat makes its output live from its first input's birth;
    # keep that only when it does not raise the live-bytes bound.
    candidates = []
    for kinds in (ALL_KINDS, ALL_KINDS - {"concat"}):
        aliases = find_aliases(dag, order, spans, alignment, kinds)
        problem = group_problem(dag.sizes, spans, aliases, alignment)
        candidates.append((lower_bound(problem).bytes, len(candidates), aliases, problem))
    _, _, aliases, problem = min(candidates)
    return spans, aliases, problem


def plan_dag(
    dag: Dag,
    *,
    algorithm: str = "auto",
    scheduler: str = "auto",
    alignment: int = 16,
    capacity: int | None = None,
    exact_params: ExactParams | None = None,
    expansion_budget: int = EXPANSION_BUDGET,
    deadline_s: float | None = None,
    timings: bool = True,
) -> dict[str, Any]:
    """plan.json content for ``dag``. The searches stop on work budgets
    (``expansion_budget`` for the schedule, ``exact_params.work_budget`` for the
    exact placement), so the plan depends only on the arguments. ``deadline_s``
    is opt-in and makes it depend on the machine's speed: a fifth of it for the
    schedule search, what is left for allocation."""
    start = time.perf_counter()
    sched = schedule(dag, scheduler, alignment=alignment, expansion_budget=expansion_budget,
                     deadline_s=None if deadline_s is None else deadline_s / 5)
    index = {op.name: i for i, op in enumerate(dag.ops)}
    spans, aliases, problem = order_problem(dag, [index[name] for name in sched.order], alignment)
    left = None if deadline_s is None else max(deadline_s - (time.perf_counter() - start), 0.0)
    allocation = allocate(
        problem, algorithm, capacity=capacity, exact_params=exact_params, deadline_s=left
    )
    if allocation.offsets is None:
        raise PlanError(
            f"no plan within {capacity} bytes ({algorithm}: {allocation.outcome}); "
            f"the live-bytes lower bound is {allocation.lower_bound_bytes}"
        )
    return build_plan(
        problem=problem,
        allocation=allocation,
        sched=sched,
        sizes=dag.sizes,
        spans=spans,
        aliases=aliases,
        alignment=alignment,
        timings=timings,
    )
