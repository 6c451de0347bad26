"""ASCII timeline and SVG picture of a plan."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from dnn64build.planner.report import render_ascii, render_svg

# Arena 64 bytes over 3 steps: p [0,32) steps 0-1, q [32,64) steps 1-2,
# r [0,16) step 2 (in p's old bytes), s a view of q.
PLAN = {
    "arena_bytes": 64,
    "lower_bound_bytes": 64,
    "schedule": ["n0", "n1", "n2"],
    "buffers": [
        {"name": "p", "size": 32, "offset": 0, "alignment": 16, "first": 0, "last": 1},
        {"name": "q", "size": 32, "offset": 32, "alignment": 16, "first": 1, "last": 2},
        {"name": "r", "size": 16, "offset": 0, "alignment": 16, "first": 2, "last": 2},
        {"name": "s<&>", "size": 32, "offset": 32, "alignment": 16, "first": 2, "last": 2,
         "alias_of": "q", "alias_offset": 0},
    ],
}


def test_ascii_rows_by_hand():
    # 8 columns = 8 bytes each: p covers columns 0-3, q 4-7, r 0-1.
    text = render_ascii(PLAN, width=8)
    lines = text.splitlines()
    assert lines[1] == "   0 n0   |AAAA....|       32"
    assert lines[2] == "   1 n1   |AAAABBBB|       64"
    assert lines[3] == "   2 n2   |CC..BBBB|       48"
    assert "B: q 32 bytes at 32, steps 1..2 (shared with s<&>)" in text


def test_ascii_marks_clashing_columns():
    plan = {**PLAN, "buffers": [dict(b) for b in PLAN["buffers"]]}
    plan["buffers"][2]["first"] = 1  # r now overlaps p at step 1
    assert "|!!AABBBB|" in render_ascii(plan, width=8)


def test_svg_is_wellformed_with_one_box_per_buffer():
    svg = render_svg(PLAN)
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    titles = [t.text for t in root.iter(f"{ns}title")]
    assert any(t.startswith("p: 32 bytes at 0") for t in titles)
    assert any(t.startswith("s<&> (in q at +0)") for t in titles)
    rects = [r for r in root.iter(f"{ns}rect") if r.find(f"{ns}title") is not None]
    assert len(rects) == 4
    # q: steps 1..2 of 3, offsets 32..64 of 64 -> right two thirds, top half.
    q = next(r for r in rects if r.find(f"{ns}title").text.startswith("q:"))
    x, w = float(q.get("x")), float(q.get("width"))
    y, h = float(q.get("y")), float(q.get("height"))
    plot_w, plot_h = 800 - 70 - 10, 480 - 40 - 30
    assert abs(x - (70 + plot_w / 3)) < 0.2 and abs(w - plot_w * 2 / 3) < 0.2
    assert abs(y - 30) < 0.2 and abs(h - plot_h / 2) < 0.2


def test_model_report_says_when_auto_stopped_short_of_a_proof():
    # The determinism DAG: every heuristic misses the optimum the exact search finds.
    from test_planner_determinism import DAG

    from dnn64build.planner.dagplan import PlanParams, plan_dag
    from dnn64build.planner.exact import ExactParams
    from dnn64build.stages.plan import report

    texts = {}
    for budget in (1, 10**7):
        params = PlanParams(exact_params=ExactParams(work_budget=budget), timings=False)
        plan = plan_dag(DAG, params)
        plan["staging"] = {"offset": plan["arena_bytes"], "bytes": 0}
        texts[plan["outcome"]] = report(plan, "//m:m", 4 << 20)
    assert set(texts) == {"budget_exhausted", "optimal"}
    assert "not proven optimal" in texts["budget_exhausted"]
    assert "not proven optimal" not in texts["optimal"]
