"""best_fit (TFLite Micro style) against a hand-worked example."""

from __future__ import annotations

from dnn64build.planner.best_fit import best_fit
from dnn64build.planner.problem import Buffer, Problem, arena_bytes


def test_smallest_hole_wins_over_the_lowest():
    # Largest first, input order on ties: P, A, B, E, C, N.
    # P [0,3) 64 -> 0.  A [0,2) 48: above P -> 64.  B [0,3) 32: above A -> 112.
    # E [0,2) 16: above B -> 144.  C [0,3) 16: above E -> 160.
    # N [2,3) 16 overlaps only P [0,64), B [112,144), C [160,176): holes are
    # [64,112) (48 bytes) and [144,160) (16 bytes); the smaller one wins: 144.
    problem = Problem.of([
        Buffer("P", 0, 3, 64), Buffer("A", 0, 2, 48), Buffer("B", 0, 3, 32),
        Buffer("E", 0, 2, 16), Buffer("C", 0, 3, 16), Buffer("N", 2, 3, 16),
    ])
    offsets = best_fit(problem)
    assert offsets == {"P": 0, "A": 64, "B": 112, "E": 144, "C": 160, "N": 144}
    assert arena_bytes(problem, offsets) == 176

