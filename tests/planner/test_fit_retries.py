"""The planner's retries of the ladder (planner/fusion/search.py, plan_to_fit) with stand-in
planning: each option is planned once, a shrunk staging shrinks the plan of the same
option at the minimum, an unpaired option takes its paired twin's plan or refusal when
the pairs change nothing, and the chosen plan says why faster options were not taken. The
references are the ladder's order and the stand-ins' own call logs."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dnn64build.errors import UserError
from dnn64build.planner.fusion.cost import DagPrograms
from dnn64build.planner.fusion.ladder import Option, Settings, ladder
from dnn64build.planner.fusion.search import plan_to_fit

DEFAULTS = Settings(fusion="auto", input="auto", output="auto", kernels="rsp", pairs=True,
                    staging_auto=True)


class StandIn:
    """Planning that logs its calls: an option's needs come from ``needs`` (by fusion mode;
    a kept pair adds a byte, as the float input stays alive; shrinking the staging takes
    100 bytes off), its paired plan keeps its pairs unless ``drops``, and the fusion
    modes in ``refused`` cannot apply."""

    def __init__(self, needs: dict[str, int], drops: bool = False,
                 refused: tuple[str, ...] = ()) -> None:
        self.needs, self.drops, self.refused = needs, drops, refused
        self.planned: list[Option] = []
        self.shrunk: list[Option] = []
        self.caches: set[int] = set()

    def plan(self, option: Option, programs: DagPrograms) -> tuple[dict, int]:
        self.planned.append(option)
        self.caches.add(id(programs))
        if option.fusion in self.refused:
            raise UserError(f"fusion {option.fusion} cannot apply")
        pairs = ["stem"] if option.pairs and not self.drops else []
        plan = {"option": option, "quantize_stem": {"pairs": pairs, "notes": []},
                "fusion": {"notes": []},
                "cartridge": {"cost_seconds": 1.0, "reread_bytes": 0}}
        return plan, self.needs[option.fusion] + (1 if pairs else 0)

    def shrink(self, plan: dict) -> tuple[dict, int]:
        self.shrunk.append(plan["option"])
        shrunk = {**plan, "option": replace(plan["option"], staging="shrunk")}
        return shrunk, self.needs[plan["option"].fusion] - 100


NEEDS = {"none": 9000, "auto": 8000, "stream": 7000, "dag": 6000, "patch": 5000}


def _search(stand_in: StandIn, memory: int, settings: Settings = DEFAULTS):  # noqa: ANN202
    return plan_to_fit(settings, memory, stand_in.plan, stand_in.shrink)


def test_every_option_is_planned_once_and_shrunk_from_its_minimum_plan() -> None:
    stand_in = StandIn(NEEDS)
    found = _search(stand_in, memory=0)  # nothing fits: every option is planned
    options = ladder(DEFAULTS)
    assert [t.option for t in found.tried] == options
    minimum = [o for o in options if o.staging == "minimum"]
    assert stand_in.planned == minimum  # each once, in ladder order
    # each shrunk option shrinks the plan of its own option at the minimum staging
    assert stand_in.shrunk == [replace(o, staging="minimum") for o in options
                               if o.staging == "shrunk"]
    assert len(stand_in.caches) == 1  # the options share one cache of dag row programs
    assert found.plan is None
    # patch at 5000 bytes: 5001 paired, 4900 shrunk from the paired plan
    assert found.smallest["option"] == Option("patch", pairs=True, staging="shrunk")


def test_an_unpaired_option_takes_its_twins_plan_when_every_pair_was_dropped() -> None:
    stand_in = StandIn(NEEDS, drops=True)
    found = _search(stand_in, memory=0)
    assert all(o.pairs for o in stand_in.planned)  # never planned again without pairs
    needs = {t.option: t.needs for t in found.tried}
    assert all(needs[o] == needs[replace(o, pairs=False)] for o in needs if o.pairs)


def test_an_unpaired_option_shares_its_twins_refusal() -> None:
    stand_in = StandIn(NEEDS, refused=("stream",))
    found = _search(stand_in, memory=0)
    assert stand_in.planned.count(Option("stream", pairs=True)) == 1
    assert Option("stream") not in stand_in.planned
    assert [t.why for t in found.tried if t.option.fusion == "stream"] == \
        ["cannot apply: fusion stream cannot apply"] * 4
    # the refusal names each reason once and leaves shrunk stagings that cannot apply out
    lines = found.searched_lines()
    assert sum("fusion stream" in line for line in lines) == 1


def test_the_chosen_plan_says_why_the_faster_options_were_not_taken() -> None:
    stand_in = StandIn(NEEDS)
    # RSP kernels: none first (9001, 9000, 8900, 8900), then auto: 8001 paired, 8000 not
    found = _search(stand_in, memory=8000)
    assert found.chosen == Option("auto")
    records = found.plan["fit_search"]
    assert [r["option"] for r in records] == [t.option.describe() for t in found.tried]
    assert [r["needs_bytes"] for r in records] == [9001, 9000, 8900, 8900, 8001, 8000]
    assert records[-1]["outcome"] == "chosen"
    assert all("more than the memory's 8000" in r["outcome"] for r in records[:-1])


@pytest.mark.parametrize("memory, note", [
    (9001, "not fused: the model fits without fused groups, whose Convs would run on the "
           "CPU (kernels: rsp)"),
    (8000, "not paired: with the float input alive through the stem Conv the model needs "
           "8001 bytes, more than the target's 8000"),
])
def test_the_notes_on_why_the_chosen_option_won(memory: int, note: str) -> None:
    stand_in = StandIn(NEEDS)
    found = _search(stand_in, memory)
    notes = found.plan["fusion"]["notes"] + found.plan["quantize_stem"]["notes"]
    assert notes == [note]
