"""TVM USMP baselines against hand-worked examples of their rules.

The running example (alignment 16, half-open lifetimes):

    A [0,2) 32 bytes   B [1,3) 48 bytes   C [2,4) 16 bytes   D [0,4) 16 bytes

Overlaps: A-B, A-D, B-C, B-D, C-D (A and C do not: A ends where C starts).
Conflict counts: A 2, B 3, C 2, D 3. Live bytes per step: 48, 96, 80, 32, so
the lower bound is 96.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from planner_helpers import problems

from dnn64build.planner.greedy import greedy_by_conflicts, greedy_by_size
from dnn64build.planner.hill_climb import (
    GlibcRandR,
    IncrementalFirstFit,
    accept,
    hill_climb,
    neighbours,
)
from dnn64build.planner.problem import Buffer, Problem, arena_bytes, conflict_lists, lower_bound

EXAMPLE = Problem.of([
    Buffer("A", 0, 2, 32), Buffer("B", 1, 3, 48), Buffer("C", 2, 4, 16), Buffer("D", 0, 4, 16),
])


def test_example_lower_bound():
    assert lower_bound(EXAMPLE).bytes == 96
    assert lower_bound(EXAMPLE).step == 1


def test_greedy_by_size_places_on_top_without_reusing_holes():
    # Order by size desc, then conflicts desc: B(48), A(32), D(16, 3 conflicts), C(16, 2).
    # B: nothing placed -> 0.        A: above B (0+48) -> 48.
    # D: above B (48) and A (48+32=80) -> 80.
    # C: above B (48) and D (80+16=96) -> 96, although [48, 80) is free during
    #    C's lifetime (A is dead): the greedy never looks below its highest conflict.
    offsets = greedy_by_size(EXAMPLE)
    assert offsets == {"B": 0, "A": 48, "D": 80, "C": 96}
    assert arena_bytes(EXAMPLE, offsets) == 112


def test_greedy_by_conflicts_order():
    # Order by conflicts desc, then size desc: B(3, 48), D(3, 16), A(2, 32), C(2, 16).
    # B -> 0; D above B -> 48; A above B (48) and D (48+16=64) -> 64;
    # C above B (48) and D (64) -> 64 (A is not a conflict of C).
    offsets = greedy_by_conflicts(EXAMPLE)
    assert offsets == {"B": 0, "D": 48, "A": 64, "C": 64}
    assert arena_bytes(EXAMPLE, offsets) == 96


def test_names_break_ties_descending_as_std_string():
    # Same size, same conflicts: the greater name goes first ("b" > "ab" > "a").
    problem = Problem.of([Buffer("a", 0, 1, 16), Buffer("ab", 0, 1, 16), Buffer("b", 0, 1, 16)])
    for algorithm in (greedy_by_size, greedy_by_conflicts):
        assert algorithm(problem) == {"b": 0, "ab": 16, "a": 32}


def test_conflict_top_is_rounded_to_its_alignment():
    # P: 20 bytes at 0, its top 20 rounds up to 32 (alignment 16); Q goes there.
    problem = Problem.of([Buffer("P", 0, 2, 20), Buffer("Q", 1, 2, 8)])
    assert greedy_by_size(problem) == {"P": 0, "Q": 32}


def test_capacity_that_a_greedy_cannot_meet():
    assert greedy_by_size(EXAMPLE, capacity=111) is None
    assert greedy_by_size(EXAMPLE, capacity=112) is not None


def test_glibc_rand_r_sequence():
    # Printed by a C program calling glibc's rand_r(&seed) with seed 0, then 12345.
    rand = GlibcRandR(0)
    assert [rand() for _ in range(5)] == [1012484, 1716955679, 1792309082, 229610924, 1639479903]
    assert GlibcRandR(12345)() == 1036784229


def test_hill_climb_first_fit_reuses_holes_and_stops_at_the_bound():
    # Attempt 0 uses greedy_by_size's order B, A, D, C with first fit over
    # conflicts by ascending offset:
    # B -> 0; A: overlaps B at 0 -> 48; D: B -> 48, A [48,80) -> 80;
    # C: B -> 48, D at 80 does not overlap [48, 64) -> 48 (the hole A left).
    # The top is 96 = the lower bound, so the climb stops there.
    offsets = hill_climb(EXAMPLE, desired_bytes=96)
    assert offsets == {"B": 0, "A": 48, "D": 80, "C": 48}


class _Fixed:
    """A stand-in for the random generator returning given values."""

    def __init__(self, *values: int):
        self.values = list(values)

    def __call__(self) -> int:
        return self.values.pop(0)


def test_acceptance_rule():
    # The first fitting placement is always taken (best == 0), without a draw.
    rand = _Fixed()
    assert accept(0, 500, False, 0, rand)
    assert accept(0, 500, True, 0, rand)
    # A smaller arena is taken without a draw; one that does not fit never is.
    assert accept(100, 90, False, 3, rand)
    assert not accept(100, 90, True, 3, rand)
    # A larger one wins a lottery: 50 * (120 - 100) // 120 // 2 = 1000 // 120 // 2 = 8 // 2 = 4,
    # so a draw of 1003 (% 100 = 3) accepts and 1004 (% 100 = 4) rejects.
    assert accept(100, 120, False, 2, _Fixed(1003))
    assert not accept(100, 120, False, 2, _Fixed(1004))
    # Late attempts shrink the threshold to 0: 8 // 9 = 0, nothing is below 0.
    assert not accept(100, 120, False, 9, _Fixed(0))
    # An equal arena draws and needs a value below 0: rejected.
    assert not accept(100, 100, False, 1, _Fixed(0))


def test_neighbour_lists():
    # Positions in greedy_by_size order: B 0, A 1, D 2, C 3 (indices A0 B1 C2 D3).
    conflicts = [[1, 3], [0, 2, 3], [1, 3], [0, 1, 2]]
    pos = {1: 0, 0: 1, 3: 2, 2: 3}
    # Node C (index 2, position 3): first level = its conflicts earlier in the
    # order: B (pos 0), D (pos 2). Second level: for B, its conflicts earlier
    # than B: none; for D (pos 2): B (0), A (1), its conflicts before it.
    first, second = neighbours(2, conflicts, pos)
    assert first == [1, 3]
    assert second == [1, 0]


@settings(max_examples=30, deadline=None)
@given(problems(max_buffers=24, alignments=(16, 64)), st.randoms(use_true_random=False))
def test_incremental_first_fit_equals_placing_everything_again(problem: Problem, rng):
    # The hill climb re-places only what an order change can affect; compare
    # with a fresh run after every random swap.
    conflicts = conflict_lists(problem)
    incremental = IncrementalFirstFit(problem, conflicts, None)
    order = list(range(len(problem)))
    for _ in range(20):
        i, j = rng.randrange(len(order)), rng.randrange(len(order))
        order[i], order[j] = order[j], order[i]
        assert incremental.run(order) == IncrementalFirstFit(problem, conflicts, None).run(order)
