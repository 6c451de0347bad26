"""The plan that fits a memory budget: the options the settings leave to the tool, in cost
order, and the search for the first (fastest) one whose plan fits.

Vocabulary:

- an *option* (``Option``) is one way to plan a model: a fusion mode (``none``; ``auto``:
  the stream groups with the least activation + staging bytes; ``stream``: every chain;
  ``dag``; ``patch``, see fusion.py), whether a dag group streams the graph input and
  hands out the graph output, whether QuantizeLinear + stem pairs run as one call
  (``quantize_stem``), and whether the weight staging is the minimum (every layer tiled
  to at most 32 KiB a half) or shrunk below it (smaller tiles, more calls: the staging
  below the minimum that needs least);
- an option's *needs* are the RDRAM bytes of its plan at its weight staging (low memory
  + arena + staging + program estimate + stack, fit.needed_bytes);
- the *ladder* (``ladder``) is the list of options the settings allow, the fastest first.

Invariants:

- an option's plan and needs depend on the model and the settings, never on the memory:
  so the search meets a memory exactly when it is at least the smallest needs among the
  options (monotonic in the memory), and a refusal names that smallest needs;
- a setting the user fixes (``fusion: dag``, ``input: whole``, ...) only removes options:
  the ladder of the defaults holds every option a hand-set combination of fusion, input
  and output plans, so the defaults never refuse a memory that such a combination meets
  (an explicit ``staging_bytes`` also cuts chains at half of it, groups the shrunk
  staging keeps as they are).

Cost order (``LADDER``): the existing cost notions, not a cost model. RSP kernels make
no fusion fastest (a fused Conv runs the CPU's region kernel); then stream groups (no
extra MACs; a call per band and channel), dag groups (weights re-read from the cartridge
for every firing), dag groups with the graph input streamed, with the output handed out,
with both, and patch groups (extra MACs) last; each at the minimum weight staging, then
shrunk (a few more kernel calls and ROM reads cost less than the next fusion mode, more
than a lost pair: a tile is an RSP call of its own that packs its im2col again); and
each of those with its quantize_stem pairs first (the CPU quantizes while the RSP
computes the stem), then without.

Cost among fitting plans (``Cost``, planner/cartridge.py): a plan's compute estimate plus
the weight bytes it reads from the cartridge per inference at a Game Pak's 5 MB/s.
``search`` takes the first option that fits unless that plan re-reads weight tiles (a dag
group reads its members' tiles once per firing): then it plans the options after it too
and takes the fitting one of least cost, so a dag plan that re-reads 100 MB loses to a
later plan with less traffic. A plan that reads each tile once is final: the options
after it are no faster by the order above and read at least as much.

Planning time: ``search`` plans options one at a time and stops at the first that fits
(and reads its weights once); a refusal plans them all (to name the smallest).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from dnn64build.errors import UserError


@dataclass(frozen=True)
class Option:
    """One way to plan the model (see the module doc)."""

    fusion: str  # a fusion mode of fusion.FUSION_MODES; "auto": the cheapest stream groups
    input: str = "whole"  # "stream": the first dag group reads the graph input row by row
    output: str = "whole"  # "stream": the last dag group hands the graph output out by rows
    pairs: bool = False  # QuantizeLinear + stem pairs as one call
    staging: str = "minimum"  # "shrunk": the weight staging below the minimum that needs least

    def describe(self) -> str:
        fusion = "fusion auto (the cheapest stream groups)" if self.fusion == "auto" else \
            f"fusion {self.fusion}"
        parts = [fusion]
        if self.input == "stream":
            parts.append("input streamed")
        if self.output == "stream":
            parts.append("output streamed")
        if self.pairs:
            parts.append("quantize_stem paired")
        if self.staging == "shrunk":
            parts.append("weight staging shrunk")
        return ", ".join(parts)


# The fusion options of `fusion: auto`, fastest first: (mode, input, output).
LADDER = (("auto", "whole", "whole"), ("none", "whole", "whole"),
          ("stream", "whole", "whole"), ("dag", "whole", "whole"),
          ("dag", "stream", "whole"), ("dag", "whole", "stream"),
          ("dag", "stream", "stream"), ("patch", "whole", "whole"))


def ladder(*, fusion: str, input_mode: str, output_mode: str, rsp_kernels: bool,
           pairs: bool, staging_auto: bool) -> list[Option]:
    """The options the settings allow, fastest first. ``fusion``, ``input_mode`` and
    ``output_mode`` are the planner settings (``auto`` leaves the choice to the tool; an
    input or output ``auto`` streams only under fusion ``auto``); ``rsp_kernels``: the
    model's Convs may run on the RSP (no fusion first); ``pairs``: the model has
    QuantizeLinear + stem pairs (each option paired first, then not); ``staging_auto``: the
    weight staging is the tool's to choose (each option at the minimum staging first, then
    shrunk: smaller tiles, more kernel calls)."""
    steps = list(LADDER)
    if rsp_kernels:  # a fused Conv runs on the CPU: no groups is the fastest
        steps.insert(0, steps.pop(1))
    if fusion != "auto":
        # A hand-set mode streams only what is asked for; `auto` is then "whole".
        steps = [(fusion, _hand_set(input_mode), _hand_set(output_mode))]
    else:
        steps = [s for s in steps
                 if _allowed(s[1], input_mode) and _allowed(s[2], output_mode)]
        if "stream" in (input_mode, output_mode):  # only a dag group streams
            steps = [s for s in steps if s[0] == "dag"]
    return [Option(mode, i, o, paired, staging) for mode, i, o in steps
            for staging in (("minimum", "shrunk") if staging_auto else ("minimum",))
            for paired in ((True, False) if pairs else (False,))]


def _hand_set(mode: str) -> str:
    return "stream" if mode == "stream" else "whole"


def _allowed(how: str, setting: str) -> bool:
    return setting == "auto" or how == setting


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
