"""The exact search's compiled core (exact_core.c) against the Python search, its
reference: the same nodes, outcome and offsets on the brute-force test set with every
switch combination, and on larger planted problems where restarts and tight windows run.
Without a C compiler the Python search runs and says so once."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import replace

import pytest
from hypothesis import given, settings
from planner_helpers import problems
from test_planner_exact import ALL_COMBINATIONS, GAP, NEW_RULES, TWINS, shared_lifetimes

from dnn64build.planner import native_core
from dnn64build.planner.exact import ExactOutcome, ExactParams, solve_exact
from dnn64build.planner.problem import Problem
from tools.hard_problems import planted_random


@pytest.fixture(scope="module")
def core(host_cc: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The compiled core, built into a cache directory of this test's own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        patch.delenv(native_core.ENGINE_ENV, raising=False)
        native_core.load.cache_clear()
        assert native_core.load() is not None
        yield
    native_core.load.cache_clear()


def _agree(problem: Problem, params: ExactParams, capacity: int | None = None) -> None:
    python = solve_exact(problem, params, capacity, compiled=False)
    compiled = solve_exact(problem, params, capacity, compiled=True)
    assert (compiled.outcome, compiled.nodes, compiled.offsets, compiled.lower_bound_bytes) == (
        python.outcome, python.nodes, python.offsets, python.lower_bound_bytes), params


@settings(max_examples=12, deadline=None)
@given(problems(max_buffers=6, max_units=4, alignments=(16, 32)))
def test_core_agrees_with_every_switch_combination(core: None, problem: Problem):
    for params in [*ALL_COMBINATIONS, ExactParams()]:
        _agree(problem, params)


@settings(max_examples=40, deadline=None)
@given(shared_lifetimes())
def test_core_agrees_on_shared_lifetimes(core: None, problem: Problem):
    for values in itertools.product((True, False), repeat=len(NEW_RULES)):
        params = ExactParams(heuristic_incumbent=False, **dict(zip(NEW_RULES, values, strict=True)))
        for capacity in (None, 96, 128):
            _agree(problem, params, capacity)


def test_core_agrees_on_exhaustive_proofs(core: None):
    # Infeasible one unit below the optimum: every node of the proof is visited.
    # Every 16th combination with canonical order (the others take ~20x the nodes).
    canonical = [p for p in ALL_COMBINATIONS if p.canonical_order][::16]
    for problem in (GAP, TWINS):
        for params in [*canonical, replace(canonical[0], canonical_order=False)]:
            _agree(problem, params, capacity=111)


@pytest.mark.parametrize("seed", [36, 7])
def test_core_agrees_on_planted_problems_with_restarts_and_windows(core: None, seed: int):
    # 40 buffers at their planted optimum: restart rounds, shuffled preorders,
    # tight windows' relaxations; and the same under a budget that runs out.
    planted = planted_random(seed, 40, capacity=4096, drop=0.3)
    base = ExactParams(heuristic_incumbent=False)
    for params in (base, replace(base, alternate_windows=False), replace(base, node_budget=300),
                   replace(base, work_budget=50_000)):
        _agree(planted.problem, params, capacity=planted.optimum)
        _agree(planted.problem, params, capacity=planted.optimum - 16)


def test_without_a_compiler_the_python_search_runs_and_says_so_once(
        monkeypatch: pytest.MonkeyPatch, tmp_path, capsys: pytest.CaptureFixture[str]):
    monkeypatch.setenv("DNN64_HOST_BINDIR", str(tmp_path))  # a directory without cc
    monkeypatch.delenv(native_core.ENGINE_ENV, raising=False)
    native_core.load.cache_clear()
    try:
        results = [solve_exact(GAP, ExactParams()) for _ in range(2)]
    finally:
        native_core.load.cache_clear()
    assert [(r.outcome, r.arena_bytes) for r in results] == [(ExactOutcome.OPTIMAL, 112)] * 2
    notes = capsys.readouterr().err.splitlines()
    assert len(notes) == 1 and "Python search" in notes[0] and "no C compiler" in notes[0]
