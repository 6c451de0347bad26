"""The checker catches each kind of broken plan, and accepts a good one."""

from __future__ import annotations

import copy

import pytest

from dnn64build.planner.checker import check_intervals, check_plan, find_violations


def _good() -> dict:
    # Steps 0..2. x [0,64) steps 0-1; a [64,128) steps 0-2, with b a view of it;
    # y [0,32) step 2 (reuses x's bytes after x dies). Live: 128, 128, 96 bytes.
    return {
        "arena_bytes": 128,
        "lower_bound_bytes": 128,
        "alignment": 16,
        "schedule": ["n0", "n1", "n2"],
        "buffers": [
            {"name": "x", "size": 64, "offset": 0, "alignment": 16, "first": 0, "last": 1},
            {"name": "a", "size": 64, "offset": 64, "alignment": 16, "first": 0, "last": 2},
            {"name": "b", "size": 32, "offset": 96, "alignment": 16, "first": 1, "last": 2,
             "alias_of": "a", "alias_offset": 32},
            {"name": "y", "size": 32, "offset": 0, "alignment": 16, "first": 2, "last": 2},
        ],
    }


def _with(**changes) -> dict:
    plan = copy.deepcopy(_good())
    for name, fields in changes.items():
        entry = next(b for b in plan["buffers"] if b["name"] == name)
        entry.update(fields)
    return plan


def test_good_plan_passes():
    assert find_violations(_good()) == []


@pytest.mark.parametrize(
    ("plan", "kind", "words"),
    [
        (_with(y={"first": 1}), "overlap", ["x [0, 64) and y [0, 32) at step 1"]),
        (_with(y={"offset": 8}), "misaligned", ["y: offset 8", "16"]),
        (_with(y={"offset": 112}), "arena", ["y: ends at 144", "128"]),
        (_with(b={"alias_of": "zz"}), "alias", ["'zz' is not a buffer"]),
        (_with(b={"offset": 80}), "alias", ["b: offset 80 != a's 64 + 32"]),
        (_with(b={"alias_offset": 48, "offset": 112}), "alias", ["runs past the end of a"]),
        (_with(a={"last": 1}, b={"last": 2}), "alias", ["b: outlives a"]),
        (_with(y={"alias_of": "b", "alias_offset": 0}), "alias", ["aliases b, itself an alias"]),
        (_with(y={"first": 2, "last": 1}), "lifetime", ["first 2 > last 1"]),
        (_with(y={"last": 3}), "lifetime", ["past the schedule"]),
        (_with(y={"size": -1}), "malformed", ["'size' must be an int"]),
        (_with(y={"name": "x"}), "malformed", ["duplicate name 'x'"]),
        (_with(y={"alignment": 24}), "malformed", ["alignment 24"]),
    ],
)
def test_each_broken_plan_is_caught(plan: dict, kind: str, words: list[str]):
    violation = check_plan(plan)
    assert violation is not None and violation.kind == kind, find_violations(plan)
    for word in words:
        assert word in violation.message


def test_wrong_lower_bound_is_caught():
    plan = _good()
    plan["lower_bound_bytes"] = 96
    violation = check_plan(plan)
    assert violation.kind == "bound" and "peak at 128" in violation.message
    plan["lower_bound_bytes"] = 128
    plan["arena_bytes"] = 120
    kinds = {v.kind for v in find_violations(plan)}
    assert "bound" in kinds and "arena" in kinds


def test_members_of_one_group_may_share_bytes_but_other_groups_may_not():
    plan = _with(y={"first": 0, "last": 0, "offset": 96, "size": 16})  # in a's bytes, step 0
    assert check_plan(plan).kind == "overlap"


def test_check_intervals_half_open():
    # [0,2) and [2,4) never live together: sharing offset 0 is fine.
    assert check_intervals([("p", 0, 2, 16, 16, 0), ("q", 2, 4, 16, 16, 0)]) is None
    violation = check_intervals([("p", 0, 3, 16, 16, 0), ("q", 2, 4, 16, 16, 0)])
    assert violation.kind == "overlap" and "at step 2" in violation.message
    assert check_intervals([("p", 0, 1, 16, 16, 0)], arena=8).kind == "arena"


def test_not_a_plan():
    assert check_plan({"buffers": "nope"}).kind == "malformed"
