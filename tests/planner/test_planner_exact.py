"""The exact solver against brute force, with every pruning-switch combination,
plus its distinct outcomes."""

from __future__ import annotations

import itertools
from dataclasses import replace

from hypothesis import given, settings
from planner_helpers import brute_force_arena, problems

from dnn64build.planner.allocate import HEURISTICS
from dnn64build.planner.checker import check_intervals
from dnn64build.planner.exact import NODE_OVERHEAD, ExactOutcome, ExactParams, solve_exact
from dnn64build.planner.problem import Buffer, Problem, lower_bound

SWITCHES = ("canonical_order", "section_bound", "symmetric_buffers", "heuristic_incumbent")
ALL_COMBINATIONS = [
    ExactParams(**dict(zip(SWITCHES, values, strict=True)))
    for values in itertools.product((True, False), repeat=len(SWITCHES))
]


def _valid(problem: Problem, offsets: dict[str, int]) -> bool:
    rows = [(b.id, b.lower, b.upper, b.size, b.alignment, offsets[b.id]) for b in problem.buffers]
    return check_intervals(rows) is None


@settings(max_examples=40, deadline=None)
@given(problems(max_buffers=6, max_units=4, alignments=(16, 32)))
def test_matches_brute_force_with_every_switch_combination(problem: Problem):
    expected = brute_force_arena(problem)
    for params in ALL_COMBINATIONS:
        result = solve_exact(problem, params)
        assert result.outcome is ExactOutcome.OPTIMAL, params
        assert result.arena_bytes == expected, params
        assert _valid(problem, result.offsets)


# Found by a random search for an instance where greedy_by_size, greedy_by_conflicts,
# best_fit and hill_climb all miss the optimum; the optimum is checked by brute force.
HARD = Problem.of(
    Buffer(f"b{i}", lo, up, 16 * units)
    for i, (lo, up, units) in enumerate(
        [(0, 3, 3), (3, 6, 1), (1, 2, 3), (2, 4, 1), (2, 5, 1), (1, 5, 3), (2, 4, 1), (4, 6, 4)]
    )
)


def test_every_switch_reduces_work():
    base = ExactParams(heuristic_incumbent=False)
    all_on = solve_exact(HARD, base)
    assert all_on.outcome is ExactOutcome.OPTIMAL
    assert all_on.arena_bytes == brute_force_arena(HARD)
    for switch in SWITCHES:
        off = solve_exact(HARD, replace(base, **{switch: False}))
        assert off.arena_bytes == all_on.arena_bytes
        on = all_on if switch != "heuristic_incumbent" else solve_exact(HARD, ExactParams())
        reference = off if switch != "heuristic_incumbent" else all_on
        assert on.nodes < reference.nodes, (switch, on.nodes, reference.nodes)


def test_node_budget_exhausted_keeps_the_best_found():
    result = solve_exact(HARD, ExactParams(node_budget=1))
    assert result.outcome is ExactOutcome.BUDGET_EXHAUSTED
    assert result.offsets is not None and _valid(HARD, result.offsets)


def test_work_budget_counts_units_per_node():
    # HARD: 8 buffers, lifetime ends 0..6 make 6 time sections, so a node costs
    # NODE_OVERHEAD + 8 + 6 = 270 units; the node past the budget stops it.
    assert NODE_OVERHEAD == 256
    base = ExactParams(heuristic_incumbent=False)
    assert solve_exact(HARD, base).nodes > 10  # the full proof needs more
    for budget, nodes in ((270 * 5, 6), (270 * 5 - 1, 5), (270 * 10 + 269, 11)):
        result = solve_exact(HARD, replace(base, work_budget=budget))
        assert (result.outcome, result.nodes) == (ExactOutcome.BUDGET_EXHAUSTED, nodes)


def test_deadline_exceeded_keeps_the_best_found():
    result = solve_exact(HARD, ExactParams(deadline_s=0.0))
    assert result.outcome is ExactOutcome.DEADLINE_EXCEEDED
    assert result.offsets is not None and _valid(HARD, result.offsets)


@settings(max_examples=25, deadline=None)
@given(problems(max_buffers=6, max_units=4))
def test_capacity_below_the_optimum_is_infeasible(problem: Problem):
    optimum = brute_force_arena(problem)
    if optimum:
        for params in (ExactParams(), ExactParams(section_bound=False)):
            too_small = solve_exact(problem, params, capacity=optimum - 1)
            assert too_small.outcome is ExactOutcome.INFEASIBLE and too_small.offsets is None
    fits = solve_exact(problem, capacity=optimum)
    assert fits.outcome is ExactOutcome.OPTIMAL and fits.arena_bytes == optimum


# Found by a random search: its optimum (7 units of 16) is above the live-bytes bound (6).
GAP = Problem.of(
    Buffer(f"g{i}", lo, up, 16 * units)
    for i, (lo, up, units) in enumerate(
        [(3, 7, 1), (1, 2, 4), (2, 5, 2), (5, 9, 4), (2, 3, 2), (0, 4, 2), (4, 5, 3), (5, 9, 1)]
    )
)


def test_capacity_between_bound_and_optimum_is_infeasible():
    assert lower_bound(GAP).bytes == 96
    assert brute_force_arena(GAP) == 112
    # Without canonical order the proof takes ~20x the nodes: one such run suffices.
    combinations = [p for p in ALL_COMBINATIONS if p.canonical_order]
    for params in [*combinations, ExactParams(canonical_order=False)]:
        assert solve_exact(GAP, params, capacity=111).outcome is ExactOutcome.INFEASIBLE
        fits = solve_exact(GAP, params, capacity=112)
        assert fits.outcome is ExactOutcome.OPTIMAL and fits.arena_bytes == 112
        assert _valid(GAP, fits.offsets)


def test_heuristics_miss_the_hard_instance():
    # So the outcome tests below start from a non-optimal incumbent.
    optimum = brute_force_arena(HARD)
    for name, heuristic in HEURISTICS.items():
        offsets = heuristic(HARD, None)
        assert max(offsets[b.id] + b.footprint for b in HARD.buffers) > optimum, name


def test_empty_problem():
    result = solve_exact(Problem.of([]), ExactParams(heuristic_incumbent=False))
    assert result.outcome is ExactOutcome.OPTIMAL and result.arena_bytes == 0


def test_empty_buffer_with_a_larger_alignment_costs_nothing():
    # z (0 bytes, alignment 64) overlaps b (16 bytes at 0). Stacked on b it
    # would need offset 64; anywhere aligned it takes no bytes: the arena is 16.
    problem = Problem.of([Buffer("b", 0, 2, 16), Buffer("z", 0, 2, 0, 64)])
    for params in ALL_COMBINATIONS:
        result = solve_exact(problem, params)
        assert result.arena_bytes == 16 and _valid(problem, result.offsets)
