"""The search for the plan that fits a memory budget: the options of the ladder
(ladder.py) planned one after another, fastest first, until one fits; the plan stage's
one call (``plan_to_fit``), which it gives the code-shaped pieces (planning one option,
shrinking a plan's weight staging) and whose outcome, a plan or the smallest of those
that do not fit, it turns into its outputs or its refusal.

Retries: an option at the shrunk staging shrinks the plan of the same option at the
minimum staging; an option without its quantize_stem pairs takes the paired option's
plan (or refusal) when that plan dropped every pair; the dag options share the row
programs of their groups.

Cost among fitting plans (``Cost``, ``PLAN_COST``, planner/cartridge.py): a plan's compute
estimate plus the weight bytes it reads from the cartridge per inference at a Game Pak's
5 MB/s. ``search`` takes the first option that fits unless that plan re-reads weight
tiles (a dag group reads its members' tiles once per firing): then it plans the options
after it too and takes the fitting one of least cost, so a dag plan that re-reads 100 MB
loses to a later plan with less traffic. A plan that reads each tile once is final: the
options after it are no faster by the ladder's order and read at least as much.

Planning time: ``search`` plans options one at a time and stops at the first that fits
(and reads its weights once); a refusal plans them all (to name the smallest).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from dnn64build.errors import UserError
from dnn64build.planner.fusion.cost import DagPrograms
from dnn64build.planner.fusion.ladder import Option, Settings, ladder

# Plans one option at the minimum weight staging, with its quantize_stem pairs, keeping
# the row programs of dag groups in the DagPrograms given: the plan and its needs.
PlanOption = Callable[[Option, DagPrograms], tuple[dict, int]]
# A plan with its weight staging shrunk below the minimum, and its needs.
ShrinkStaging = Callable[[dict], tuple[dict, int]]


@dataclass(frozen=True)
class Cost:
    """How ``search`` ranks fitting plans: ``seconds(plan)``, the estimated time of an
    inference; ``final(plan)``: no option after this plan's can cost less (it re-reads
    nothing)."""

    seconds: Callable[[dict], float]
    final: Callable[[dict], bool]


@dataclass(frozen=True)
class Tried:
    """What the search learnt of one option: its needs, or why it cannot apply."""

    option: Option
    needs: int | None  # None: the option cannot apply to the model
    why: str  # why it was not taken ("" for the chosen one)
    cost: float | None = None  # estimated seconds, for a plan that fits (Cost)

    def record(self) -> dict[str, Any]:
        record = {"option": self.option.describe(), "needs_bytes": self.needs,
                  "outcome": self.why or "chosen"}
        if self.cost is not None:
            record["cost_seconds"] = self.cost
        return record


@dataclass(frozen=True)
class Found:
    """The search's outcome: the chosen plan (None: nothing fits) and its option, and
    every option tried, in ladder order. ``smallest``: the plan with the least needs among
    them."""

    plan: dict[str, Any] | None
    tried: list[Tried]
    smallest: dict[str, Any] | None
    chosen: Option | None = None

    def searched_lines(self) -> list[str]:
        """The refusal's lines on the options tried: each one's needs or why it cannot
        apply (once per reason; a staging that shrinks nothing left out)."""
        lines: list[str] = []
        reasons: set[str] = set()
        for t in self.tried:
            if t.needs is None and (t.why in reasons or t.option.staging == "shrunk"):
                continue
            reasons.add(t.why)
            lines.append(f"{t.option.describe()}: " + (f"needs {t.needs} bytes"
                                                       if t.needs is not None else t.why))
        return lines


def search(options: Sequence[Option], plan_option: Callable[[Option], tuple[dict, int]],
           memory: int, cost: Cost | None = None) -> Found:
    """The option whose plan fits ``memory``: the first, or with ``cost`` the least costly
    of those from the first on (see the module doc). ``plan_option(option)`` gives the
    option's plan and its needs, or raises UserError when the option cannot apply to the
    model; an error that every option raises is raised (a hand-set mode the model does not
    allow). Options after the chosen one's search ends are not planned."""
    tried: list[Tried] = []
    errors: list[UserError] = []
    smallest: tuple[int, dict] | None = None
    best: tuple[float, int] | None = None  # the least cost so far and its index in tried
    fits: dict[int, dict] = {}
    for option in options:
        try:
            plan, needs = plan_option(option)
        except UserError as exc:
            errors.append(exc)
            tried.append(Tried(option, None, f"cannot apply: {exc.message}"))
            continue
        if needs <= memory:
            seconds = None if cost is None else cost.seconds(plan)
            tried.append(Tried(option, needs, "", seconds))
            fits[len(tried) - 1] = plan
            if seconds is None or best is None or seconds < best[0]:
                best = (seconds or 0.0, len(tried) - 1)
                if cost is None or cost.final(plan):
                    break
            continue
        if smallest is None or needs < smallest[0]:
            smallest = (needs, plan)
        tried.append(Tried(option, needs, f"needs {needs} bytes, more than the memory's "
                                          f"{memory}"))
    if best is not None:
        chosen = best[1]
        for k in fits:
            if k != chosen:
                tried[k] = replace(tried[k], why=(
                    f"fits, but costs {tried[k].cost:.3f} s an inference (compute and "
                    f"cartridge), more than the chosen plan's {best[0]:.3f} s"))
        return Found(fits[chosen], tried, fits[chosen], tried[chosen].option)
    if smallest is None:
        raise errors[0]
    return Found(None, tried, smallest[1])


# The ranking of fitting plans: the plan stage records each plan's cartridge cost.
PLAN_COST = Cost(seconds=lambda plan: plan["cartridge"]["cost_seconds"],
                 final=lambda plan: plan["cartridge"]["reread_bytes"] == 0)


def plan_to_fit(settings: Settings, memory: int, plan: PlanOption, shrink: ShrinkStaging,
                progress: Callable[[str], None] | None = None) -> Found:
    """The search (by PLAN_COST) over the options ``settings`` allow for the plan that
    fits ``memory``. ``plan`` plans an option, ``shrink`` a plan's staging (either raises
    UserError when it cannot apply); each option is planned once. The chosen plan
    carries ``fit_search`` (why each faster option was not taken) and the fusion and
    quantize_stem notes on why its option won. With ``memory`` 0 every option is planned
    and ``smallest`` is the least memory the tool can reach (tools/bench/bench_footprint.py).
    ``progress(line)`` is told of each option planned: its needs or why it cannot apply."""
    options = ladder(settings)
    planned: dict[Option, tuple[dict, int] | UserError] = {}
    programs: DagPrograms = {}  # the dag options share their groups' row programs

    def plan_option(option: Option) -> tuple[dict, int]:
        if option not in planned:
            try:
                planned[option] = plan_afresh(option)
            except UserError as exc:
                planned[option] = exc
            if progress is not None:
                got = planned[option]
                progress(f"{option.describe()}: " + (f"cannot apply ({got.message})"
                                                     if isinstance(got, UserError)
                                                     else f"needs {got[1]} bytes"))
        result = planned[option]
        if isinstance(result, UserError):
            raise result
        return result

    def plan_afresh(option: Option) -> tuple[dict, int]:
        if option.staging == "shrunk":
            return shrink(plan_option(replace(option, staging="minimum"))[0])
        paired = planned.get(replace(option, pairs=True))
        if not option.pairs and paired is not None:
            if isinstance(paired, UserError):
                raise paired  # the pairs change no fusion choice: the same refusal
            if not paired[0]["quantize_stem"]["pairs"]:
                return paired  # every pair was dropped: the same plan
        return plan(option, programs)

    found = search(options, plan_option, memory, PLAN_COST)
    if found.plan is not None:
        _explain(found, options, settings.kernels, memory)
        found.plan["fit_search"] = [t.record() for t in found.tried]
    return found


def _explain(found: Found, options: Sequence[Option], kernels: str, memory: int) -> None:
    """The notes of the fusion and quantize_stem records on why the chosen option won."""
    plan, chosen = found.plan, found.chosen
    if chosen.fusion == "none" and kernels != "cpu" and any(o.fusion != "none" for o in options):
        plan["fusion"]["notes"].append(
            "not fused: the model fits without fused groups, whose Convs would run on "
            "the CPU (kernels: " + kernels + ")")
    paired = [t for t in found.tried if t.option.pairs and t.needs is not None
              and t.needs > memory]
    if not chosen.pairs and paired:
        plan["quantize_stem"]["notes"].append(
            f"not paired: with the float input alive through the stem Conv the model needs "
            f"{paired[-1].needs} bytes, more than the target's {memory}")
