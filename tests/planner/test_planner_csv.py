"""Standalone problem files: plan_buffers_csv and its user errors."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from dnn64build.errors import UserError
from dnn64build.planner.checker import check_intervals
from dnn64build.planner.csvio import plan_buffers_csv

# The hand-worked example of test_planner_tvm.py: bound 96, greedy_by_size 112.
EXAMPLE = "id,lower,upper,size\nA,0,2,32\nB,1,3,48\nC,2,4,16\nD,0,4,16\n"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "problem.csv"
    path.write_text(text)
    return path


def _read_rows(path: Path):
    with path.open() as f:
        return [
            (r["id"], int(r["lower"]), int(r["upper"]), int(r["size"]), int(r["alignment"]),
             int(r["offset"]))
            for r in csv.DictReader(f)
        ]


def test_plan_and_write_offsets(tmp_path: Path):
    out = tmp_path / "out.csv"
    result = plan_buffers_csv(_write(tmp_path, EXAMPLE), out, "greedy_by_size")
    rows = _read_rows(out)
    assert [r[0] for r in rows] == ["A", "B", "C", "D"]
    assert {r[0]: r[5] for r in rows} == {"B": 0, "A": 48, "D": 80, "C": 96}
    assert check_intervals(rows) is None
    assert (result.arena_bytes, result.lower_bound_bytes) == (112, 96)
    assert "greedy_by_size" in result.summary()


def test_auto_reaches_the_bound_and_alignment_column(tmp_path: Path):
    text = "id,lower,upper,size,alignment\nA,0,2,32,64\nB,1,3,48,16\nC,2,4,16,16\nD,0,4,16,16\n"
    out = tmp_path / "out.csv"
    result = plan_buffers_csv(_write(tmp_path, text), out)
    rows = _read_rows(out)
    assert rows[0][4] == 64 and check_intervals(rows) is None
    assert result.arena_bytes >= result.lower_bound_bytes


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        ("", ":1", "empty file"),
        ("id,lower,upper\n", ":1", "missing size"),
        ("id,lower,upper,size,colour\n", ":1", "unknown colour"),
        ("id,lower,upper,size\nA,0,2\n", ":2", "expected 4 fields"),
        ("id,lower,upper,size\nA,0,2,x\n", ":2", "size 'x' is not an integer"),
        ("id,lower,upper,size\nA,0,2,16\nA,1,2,16\n", ":3", "duplicate id 'A'"),
        ("id,lower,upper,size\nA,2,2,16\n", ":2", "empty lifetime"),
        ("id,lower,upper,size\nA,0,2,-16\n", ":2", "negative"),
        ("id,lower,upper,size,alignment\nA,0,2,16,24\n", ":2", "not a power of two"),
    ],
)
def test_bad_files_name_file_and_line(tmp_path: Path, text: str, where: str, words: str):
    path = _write(tmp_path, text)
    with pytest.raises(UserError) as info:
        plan_buffers_csv(path, tmp_path / "out.csv")
    assert info.value.where == f"{path}{where}"
    assert words in info.value.message
    assert not (tmp_path / "out.csv").exists()


def test_capacity_below_the_bound(tmp_path: Path):
    with pytest.raises(UserError) as info:
        plan_buffers_csv(_write(tmp_path, EXAMPLE), None, "auto", capacity=95)
    assert "96 bytes are live at step 1" in info.value.message


def test_capacity_a_heuristic_cannot_meet(tmp_path: Path):
    # greedy_by_size needs 112; auto finds 96.
    path = _write(tmp_path, EXAMPLE)
    with pytest.raises(UserError, match="greedy_by_size found no plan within 100 bytes"):
        plan_buffers_csv(path, tmp_path / "out.csv", "greedy_by_size", capacity=100)
    assert not (tmp_path / "out.csv").exists()
    assert plan_buffers_csv(path, None, "auto", capacity=100).arena_bytes == 96


def test_unknown_algorithm_and_missing_file(tmp_path: Path):
    with pytest.raises(UserError, match="unknown algorithm"):
        plan_buffers_csv(_write(tmp_path, EXAMPLE), None, "magic")
    with pytest.raises(UserError, match="cannot read"):
        plan_buffers_csv(tmp_path / "missing.csv", None)


def test_capacity_below_the_largest_buffer(tmp_path: Path):
    # B alone needs 48 bytes: a capacity of 40 fails on it, before any search.
    with pytest.raises(UserError) as info:
        plan_buffers_csv(_write(tmp_path, EXAMPLE), tmp_path / "out.csv", "exact", capacity=40)
    assert "capacity 40 is below buffer 'B' alone (48 bytes" in info.value.message
    assert not (tmp_path / "out.csv").exists()


# test_planner_exact.py's HARD: every heuristic misses its optimum (144).
HARD = "id,lower,upper,size\n" + "".join(
    f"b{i},{lo},{up},{16 * units}\n"
    for i, (lo, up, units) in enumerate(
        [(0, 3, 3), (3, 6, 1), (1, 2, 3), (2, 4, 1), (2, 5, 1), (1, 5, 3), (2, 4, 1), (4, 6, 4)]
    )
)


def test_budget_and_search_report(tmp_path: Path):
    path = _write(tmp_path, HARD)
    full = plan_buffers_csv(path, None, "exact")
    assert (full.arena_bytes, full.outcome) == (144, "optimal")
    assert "proven optimal" in full.search_report() and "lower bound 144" in full.search_report()
    # One unit of budget: the search stops at once with best_fit's plan, and says so.
    out = tmp_path / "cut.csv"
    cut = plan_buffers_csv(path, out, "exact", work_budget=1)
    assert cut.outcome == "budget_exhausted" and cut.arena_bytes > 144
    assert "stopped short of a proof" in cut.search_report()
    assert check_intervals(_read_rows(out)) is None



def test_exact_stopped_or_refuted_says_which(tmp_path: Path):
    # test_planner_exact.py's GAP: bound 96, optimum 112 (brute force there).
    gap = "id,lower,upper,size\n" + "".join(
        f"g{i},{lo},{up},{16 * units}\n"
        for i, (lo, up, units) in enumerate(
            [(3, 7, 1), (1, 2, 4), (2, 5, 2), (5, 9, 4), (2, 3, 2), (0, 4, 2), (4, 5, 3),
             (5, 9, 1)]
        )
    )
    path = _write(tmp_path, gap)
    with pytest.raises(UserError) as info:
        plan_buffers_csv(path, None, "exact", capacity=111)
    assert "(infeasible)" in info.value.message and "proven" in info.value.hint
    with pytest.raises(UserError) as info:
        plan_buffers_csv(path, None, "exact", capacity=111, work_budget=1)
    assert "(budget_exhausted)" in info.value.message and "--budget" in info.value.hint
    assert plan_buffers_csv(path, None, "exact", capacity=112).arena_bytes == 112
