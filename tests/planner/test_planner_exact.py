"""The exact solver against brute force, with every pruning-switch combination,
plus its distinct outcomes."""

from __future__ import annotations

import itertools
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st
from planner_helpers import brute_force_arena, problems

from dnn64build.planner import exact
from dnn64build.planner.allocate import HEURISTICS
from dnn64build.planner.checker import check_intervals
from dnn64build.planner.exact import (
    NODE_OVERHEAD,
    SWITCHES,
    ExactOutcome,
    ExactParams,
    maximal_cliques,
    solve_exact,
)
from dnn64build.planner.problem import Buffer, Problem, lower_bound
from tools.hard_problems import planted_random

# The pruning rules and the incumbent: every combination must agree with brute
# force. ``restarts``, and ``alternate_windows`` and ``distinct_orders`` (which
# need restarts), change only the order of the search (tested below).
PRUNING = tuple(s for s in SWITCHES
                if s not in ("restarts", "alternate_windows", "distinct_orders"))
ALL_COMBINATIONS = [
    ExactParams(restarts=False, **dict(zip(PRUNING, values, strict=True)))
    for values in itertools.product((True, False), repeat=len(PRUNING))
]


def _valid(problem: Problem, offsets: dict[str, int]) -> bool:
    rows = [(b.id, b.lower, b.upper, b.size, b.alignment, offsets[b.id]) for b in problem.buffers]
    return check_intervals(rows) is None


@settings(max_examples=12, deadline=None)
@given(problems(max_buffers=6, max_units=4, alignments=(16, 32)))
def test_matches_brute_force_with_every_switch_combination(problem: Problem):
    expected = brute_force_arena(problem)
    for params in [*ALL_COMBINATIONS, ExactParams()]:
        result = solve_exact(problem, params)
        assert result.outcome is ExactOutcome.OPTIMAL, params
        assert result.arena_bytes == expected, params
        assert _valid(problem, result.offsets)


@st.composite
def shared_lifetimes(draw) -> Problem:
    """Small problems whose buffers share a few lifetimes (stacked twins, many
    transpositions for the failure memo, tight sections at the optimum)."""
    pool = draw(st.lists(st.tuples(st.integers(0, 4), st.integers(1, 3)), min_size=1, max_size=3))
    n = draw(st.integers(2, 7))
    return Problem.of(
        Buffer(f"s{i}", lo, lo + width, 16 * draw(st.integers(1, 4)),
               draw(st.sampled_from((16, 32))))
        for i, (lo, width) in enumerate(draw(st.lists(st.sampled_from(pool), min_size=n,
                                                      max_size=n)))
    )


NEW_RULES = ("stacked_twins", "failure_memo", "tight_windows", "floor_profile",
             "alternate_windows", "distinct_orders")


@settings(max_examples=40, deadline=None)
@given(shared_lifetimes())
def test_inference_rules_agree_with_brute_force_on_shared_lifetimes(problem: Problem):
    # Every combination of the three newest rules, with the others on; at the
    # optimum (a plan) and one alignment unit below it (infeasible).
    optimum = brute_force_arena(problem)
    for values in itertools.product((True, False), repeat=len(NEW_RULES)):
        params = ExactParams(heuristic_incumbent=False, **dict(zip(NEW_RULES, values, strict=True)))
        fits = solve_exact(problem, params, capacity=optimum)
        assert fits.outcome is ExactOutcome.OPTIMAL and fits.arena_bytes == optimum, params
        assert _valid(problem, fits.offsets)
        below = solve_exact(problem, params, capacity=optimum - 16)
        assert below.outcome is ExactOutcome.INFEASIBLE, params


def test_failure_memo_key_is_kept_in_step_with_the_state(monkeypatch):
    # The memo's key is updated incrementally by place/unplace; at every node it
    # must equal its definition (a sum over the unplaced buffers' floors), or
    # two different states could share a key and a subtree be skipped wrongly.
    checked = []

    class Checked(exact.Search):
        def _search(self, part, lo, hi, capacity, last_at, last_rank):
            expected = sum(z * (f + 1) for z, f, o in zip(self.zobrist, self.floor, self.offset,
                                                          strict=True) if o is None)
            assert self.state_key == expected
            checked.append(len(self.history))
            return super()._search(part, lo, hi, capacity, last_at, last_rank)

    monkeypatch.setattr(exact, "Search", Checked)
    planted = planted_random(36, 40, capacity=4096, drop=0.3)
    result = solve_exact(planted.problem, ExactParams(heuristic_incumbent=False),
                         capacity=planted.optimum)
    assert result.outcome is ExactOutcome.OPTIMAL and _valid(planted.problem, result.offsets)
    assert len(checked) > 100 and max(checked) > 20


def test_a_piece_is_ranked_by_the_bytes_still_unplaced():
    # Sections (maximal cliques): t=0 {p, y, c}, t=1 {y, d, z}, t=2 {z, e}. With p and
    # z placed, no unplaced buffer crosses t=1|2: the piece {y, c, d} is left, with
    # y + c = 32 bytes unplaced at t=0 and y + d = 64 at t=1. By those (T), then
    # lifetime (W): y (64, 2 steps), d (64), c (32); the static totals (132 at t=0, 80
    # at t=1) ranked c before d.
    names = ("p", "y", "c", "d", "z", "e")
    problem = Problem.of(Buffer(name, lo, up, size) for name, (lo, up, size) in zip(
        names, [(0, 1, 100), (0, 2, 16), (0, 1, 16), (1, 2, 48), (1, 3, 16), (2, 3, 16)],
        strict=True))
    p, y, c, d, z, _ = range(len(names))
    search = exact.Search(problem, ExactParams(), None)
    search.use_preorder("TWA")
    assert search.rank[c] < search.rank[d]
    search.place(p, 0)
    assert search.place(z, 0)  # a decomposition point
    search._rank_piece([y, c, d])
    assert sorted((y, c, d), key=search.rank.__getitem__) == [y, d, c]


# Found by a random search for an instance where greedy_by_size, greedy_by_conflicts,
# best_fit and hill_climb all miss the optimum; the optimum is checked by brute force.
HARD = Problem.of(
    Buffer(f"b{i}", lo, up, 16 * units)
    for i, (lo, up, units) in enumerate(
        [(0, 3, 3), (3, 6, 1), (1, 2, 3), (2, 4, 1), (2, 5, 1), (1, 5, 3), (2, 4, 1), (4, 6, 4)]
    )
)


# GAP (below) with its 2-unit buffer (0, 4) split in two identical halves: the
# optimum (checked by brute force) is still 112, above the bound.
TWINS = Problem.of(
    Buffer(f"t{i}", lo, up, 16 * units)
    for i, (lo, up, units) in enumerate(
        [(3, 7, 1), (1, 2, 4), (2, 5, 2), (5, 9, 4), (2, 3, 2), (0, 4, 1), (4, 5, 3), (5, 9, 1),
         (0, 4, 1)]
    )
)


def test_every_pruning_rule_reduces_work():
    # Proving that no plan fits one unit below the optimum is an exhaustive
    # search, where each rule has to earn its keep: each one alone cuts nodes
    # from canonical order alone, and canonical order cuts them from all rules.
    assert brute_force_arena(GAP) == brute_force_arena(TWINS) == 112
    only_canonical = ExactParams(
        restarts=False, heuristic_incumbent=False,
        **{s: s == "canonical_order" for s in PRUNING if s != "heuristic_incumbent"},
    )
    for switch in PRUNING:
        if switch in ("canonical_order", "heuristic_incumbent"):
            continue
        problem = TWINS if switch == "symmetric_buffers" else GAP
        # floor_profile strengthens unplaced_floor's check: it needs it on.
        base = (replace(only_canonical, unplaced_floor=True) if switch == "floor_profile"
                else only_canonical)
        without = solve_exact(problem, base, capacity=111)
        with_it = solve_exact(problem, replace(base, **{switch: True}), capacity=111)
        assert without.outcome is with_it.outcome is ExactOutcome.INFEASIBLE
        assert with_it.nodes < without.nodes, (switch, with_it.nodes, without.nodes)
    everything = ExactParams(restarts=False, heuristic_incumbent=False)
    unordered = replace(everything, canonical_order=False)
    assert (solve_exact(GAP, everything, capacity=111).nodes
            < solve_exact(GAP, unordered, capacity=111).nodes)


def test_restarts_reduce_work_and_the_incumbent_is_a_fallback():
    # A planted 40-buffer instance where the first preorder goes astray early.
    planted = planted_random(36, 40, capacity=4096, drop=0.3)
    capacity = planted.optimum
    base = ExactParams(heuristic_incumbent=False, node_budget=20_000)
    with_restarts = solve_exact(planted.problem, base, capacity=capacity)
    without = solve_exact(planted.problem, replace(base, restarts=False), capacity=capacity)
    assert with_restarts.outcome is ExactOutcome.OPTIMAL
    assert with_restarts.arena_bytes == capacity == lower_bound(planted.problem).bytes
    assert _valid(planted.problem, with_restarts.offsets)
    assert with_restarts.nodes < without.nodes
    # The incumbent is the fallback when the search stops at once.
    seeded = solve_exact(GAP, ExactParams(node_budget=1))
    unseeded = solve_exact(GAP, ExactParams(node_budget=1, heuristic_incumbent=False))
    assert seeded.outcome is unseeded.outcome is ExactOutcome.BUDGET_EXHAUSTED
    assert _valid(GAP, seeded.offsets) and unseeded.offsets is None


def test_node_budget_exhausted_keeps_the_best_found():
    result = solve_exact(HARD, ExactParams(node_budget=1))
    assert result.outcome is ExactOutcome.BUDGET_EXHAUSTED
    assert result.offsets is not None and _valid(HARD, result.offsets)


def test_work_budget_counts_units_per_node():
    # GAP: 8 buffers in 5 sections (maximal cliques). Without decomposition
    # every node works on the whole problem: NODE_OVERHEAD + 8 + 5 = 269
    # units; the node past the budget stops the search.
    assert NODE_OVERHEAD == 256
    assert maximal_cliques([b.lower for b in GAP.buffers], [b.upper for b in GAP.buffers])[2] == 5
    base = ExactParams(heuristic_incumbent=False, decomposition=False, restarts=False)
    assert solve_exact(GAP, base, capacity=111).nodes > 12  # the full proof needs more
    for budget, nodes in ((269 * 5, 6), (269 * 5 - 1, 5), (269 * 10 + 268, 11)):
        result = solve_exact(GAP, replace(base, work_budget=budget), capacity=111)
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
