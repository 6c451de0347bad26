"""One interface over every allocation strategy.

``allocate(problem, algorithm)`` returns an :class:`Allocation`. Strategies:
``greedy_by_size``, ``greedy_by_conflicts``, ``hill_climb`` (Apache TVM USMP),
``best_fit`` (largest first, smallest hole), ``exact`` (branch and bound) and ``auto``: every
heuristic, then the exact search seeded with the best of them; the smallest
arena wins, so auto is never worse than any heuristic. The heuristics do a
fixed amount of work; the exact search stops at its work budget
(``ExactParams.work_budget``), so the result depends only on the problem and
the parameters. ``deadline_s`` (opt-in) also stops the exact search at a
wall-clock time, which makes the result depend on the machine's speed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from dnn64build.planner.best_fit import best_fit
from dnn64build.planner.exact import ExactOutcome, ExactParams, solve_exact
from dnn64build.planner.greedy import greedy_by_conflicts, greedy_by_size
from dnn64build.planner.hill_climb import hill_climb
from dnn64build.planner.problem import BufferId, Offset, Problem, arena_bytes, lower_bound

Offsets = dict[BufferId, Offset]

HEURISTICS: dict[str, Callable[[Problem, int | None], Offsets | None]] = {
    "greedy_by_size": greedy_by_size,
    "greedy_by_conflicts": greedy_by_conflicts,
    "hill_climb": lambda p, cap: hill_climb(p, cap, desired_bytes=lower_bound(p).bytes),
    "best_fit": best_fit,
}
ALGORITHMS = (*HEURISTICS, "exact", "auto")


@dataclass(frozen=True)
class Trial:
    """One strategy's run. ``outcome``: "ok" for a heuristic that fitted, an
    :class:`ExactOutcome` value for the exact search, "infeasible" otherwise."""

    algorithm: str
    arena_bytes: int | None
    seconds: float
    outcome: str
    nodes: int | None = None


@dataclass(frozen=True)
class Allocation:
    """The chosen placement (None when nothing fitted the capacity)."""

    algorithm: str  # the strategy that produced the offsets
    offsets: Offsets | None
    arena_bytes: int | None
    lower_bound_bytes: int
    outcome: str
    trials: tuple[Trial, ...] = field(default=())


def allocate(
    problem: Problem,
    algorithm: str = "auto",
    *,
    capacity: int | None = None,
    exact_params: ExactParams | None = None,
    deadline_s: float | None = None,
) -> Allocation:
    """Place every buffer of ``problem`` with ``algorithm``. ``deadline_s``
    (seconds from now, opt-in) overrides ``exact_params.deadline_s``."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r}; choose one of {', '.join(ALGORITHMS)}")
    bound = lower_bound(problem).bytes
    if algorithm in HEURISTICS:
        offsets, trial = _run_heuristic(problem, algorithm, capacity)
        return Allocation(algorithm, offsets, trial.arena_bytes, bound, trial.outcome, (trial,))
    params = exact_params or ExactParams()
    if deadline_s is not None:
        params = replace(params, deadline_s=deadline_s)
    if algorithm == "exact":
        offsets, trial = _run_exact(problem, params, capacity, None)
        return Allocation("exact", offsets, trial.arena_bytes, bound, trial.outcome, (trial,))
    return _auto(problem, capacity, params, bound)


def _run_heuristic(
    problem: Problem, name: str, capacity: int | None
) -> tuple[Offsets | None, Trial]:
    start = time.perf_counter()
    offsets = HEURISTICS[name](problem, capacity)
    seconds = time.perf_counter() - start
    if offsets is None:
        return None, Trial(name, None, seconds, "infeasible")
    return offsets, Trial(name, arena_bytes(problem, offsets), seconds, "ok")


def _run_exact(
    problem: Problem, params: ExactParams, capacity: int | None, incumbent: Offsets | None
) -> tuple[Offsets | None, Trial]:
    start = time.perf_counter()
    result = solve_exact(problem, params, capacity, incumbent)
    seconds = time.perf_counter() - start
    trial = Trial("exact", result.arena_bytes, seconds, result.outcome.value, result.nodes)
    return result.offsets, trial


def _auto(
    problem: Problem, capacity: int | None, params: ExactParams, bound: int
) -> Allocation:
    start = time.perf_counter()
    trials: list[Trial] = []
    best: tuple[int, str, Offsets] | None = None
    for name in HEURISTICS:
        offsets, trial = _run_heuristic(problem, name, capacity)
        trials.append(trial)
        if offsets is not None and (best is None or trial.arena_bytes < best[0]):
            best = (trial.arena_bytes, name, offsets)
    if best is not None and best[0] <= bound:
        outcome = ExactOutcome.OPTIMAL.value  # a heuristic met the lower bound
    else:
        if params.deadline_s is not None:  # the heuristics' time counts against it
            params = replace(params, deadline_s=params.deadline_s - (time.perf_counter() - start))
        params = replace(params, heuristic_incumbent=False)
        offsets, trial = _run_exact(problem, params, capacity, best and best[2])
        trials.append(trial)
        outcome = trial.outcome
        if offsets is not None and (best is None or trial.arena_bytes < best[0]):
            best = (trial.arena_bytes, "exact", offsets)
    if best is None:
        return Allocation("auto", None, None, bound, outcome, tuple(trials))
    return Allocation(best[1], best[2], best[0], bound, outcome, tuple(trials))
