"""Property tests: random interval sets and random op DAGs, every plan checked
by the independent checker."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from planner_helpers import brute_force_peak, dags, memory_hazards, problems

from dnn64build.planner.allocate import ALGORITHMS, HEURISTICS, allocate
from dnn64build.planner.checker import check_intervals, check_plan
from dnn64build.planner.dagplan import PlanParams, plan_dag
from dnn64build.planner.exact import ExactParams
from dnn64build.planner.problem import Problem, lower_bound
from dnn64build.planner.schedule import Dag, peak_bytes, schedule

SMALL = ExactParams(work_budget=300_000)  # a few tens of ms at most


def _rows(problem: Problem, offsets: dict[str, int]):
    return [(b.id, b.lower, b.upper, b.size, b.alignment, offsets[b.id]) for b in problem.buffers]


@settings(max_examples=60, deadline=None)
@given(problems(max_buffers=14, alignments=(4, 16, 64)))
def test_every_algorithm_gives_a_valid_plan_and_auto_is_never_worse(problem: Problem):
    bound = lower_bound(problem).bytes
    arenas = {}
    for algorithm in ALGORITHMS:
        allocation = allocate(problem, algorithm, exact_params=SMALL)
        assert allocation.offsets is not None
        assert check_intervals(_rows(problem, allocation.offsets)) is None, algorithm
        assert allocation.arena_bytes >= bound
        assert allocation.lower_bound_bytes == bound
        arenas[algorithm] = allocation.arena_bytes
    assert arenas["auto"] <= min(arenas[name] for name in HEURISTICS)


@settings(max_examples=40, deadline=None)
@given(problems(max_buffers=10))
def test_a_capacity_met_by_auto_is_met_again(problem: Problem):
    arena = allocate(problem, "auto", exact_params=SMALL).arena_bytes
    again = allocate(problem, "auto", capacity=arena, exact_params=SMALL)
    assert again.arena_bytes is not None and again.arena_bytes <= arena
    for name in HEURISTICS:  # a heuristic either fits or says it cannot
        result = allocate(problem, name, capacity=arena)
        assert result.offsets is None or result.arena_bytes <= arena


@settings(max_examples=50, deadline=None)
@given(dags(max_ops=6))
def test_searched_schedule_is_optimal_on_small_dags(dag: Dag):
    found = schedule(dag, "search", alignment=16)
    index = {op.name: i for i, op in enumerate(dag.ops)}
    order = [index[name] for name in found.order]
    assert sorted(order) == list(range(len(dag.ops)))
    assert peak_bytes(dag, order, 16) == found.peak_bytes
    assert found.optimal
    assert found.peak_bytes == brute_force_peak(dag, 16)
    auto = schedule(dag, "auto", alignment=16)
    assert auto.peak_bytes <= schedule(dag, "graph", alignment=16).peak_bytes
    assert auto.peak_bytes <= found.peak_bytes


@settings(max_examples=40, deadline=None)
@given(dags(max_ops=7), st.integers(0, 400))
def test_any_expansion_budget_gives_a_full_order(dag: Dag, budget: int):
    found = schedule(dag, "search", alignment=16, beam_width=3, expansion_budget=budget)
    index = {op.name: i for i, op in enumerate(dag.ops)}
    order = [index[name] for name in found.order]
    assert sorted(order) == list(range(len(dag.ops)))
    assert peak_bytes(dag, order, 16) == found.peak_bytes
    assert found.outcome in ("optimal", "beam_truncated", "budget_exhausted")
    assert found.optimal == (found.outcome == "optimal")
    if found.optimal:
        assert found.peak_bytes == brute_force_peak(dag, 16)
    if budget >= 3 * len(dag.ops) ** 2:  # the beam can be kept at every level
        assert found.outcome != "budget_exhausted"


@settings(max_examples=40, deadline=None)
@given(dags(max_ops=10))
def test_every_graph_plan_passes_the_checker(dag: Dag):
    for algorithm in ALGORITHMS:
        for scheduler in ("graph", "search"):
            plan = plan_dag(dag, PlanParams(algorithm=algorithm, scheduler=scheduler,
                                            exact_params=SMALL))
            assert check_plan(plan) is None, (algorithm, scheduler, check_plan(plan))
            assert memory_hazards(dag, plan) == [], (algorithm, scheduler)
            names = {b["name"] for b in plan["buffers"]}
            assert names == set(dag.sizes)
            assert sorted(plan["schedule"]) == sorted(op.name for op in dag.ops)
