"""Tile programs of fused groups against brute force: the input span a window range
needs, rows computed once when streamed, and the DAG shortcut the planner's choice uses."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dnn64build.planner.fusion.chains import find_chains
from dnn64build.planner.fusion.records import Group
from dnn64build.planner.fusion.rewrite import apply_groups, fuse_dag
from dnn64build.planner.graph_plan import dag_from_graph
from dnn64build.planner.regions import Axis, Member, stream_program
from dnn64build.planner.schedule import peak_bytes

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tools.bench.bench_planner_zoo import load  # noqa: E402


@st.composite
def axes(draw: st.DrawFn) -> Axis:
    k, s, d = draw(st.integers(1, 5)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    pad = draw(st.integers(0, k - 1))
    size = draw(st.integers(1, 20))
    out = (size + 2 * pad - (k - 1) * d - 1) // s + 1
    assume(out >= 1)
    return Axis(k, s, pad, d, size, out)


@settings(max_examples=300, deadline=None)
@given(axis=axes(), data=st.data())
def test_needed_span_holds_every_in_bounds_tap(axis: Axis, data) -> None:
    lo = data.draw(st.integers(0, axis.size_out - 1))
    hi = data.draw(st.integers(lo + 1, axis.size_out))
    taps = {o * axis.stride - axis.pad + k * axis.dil
            for o in range(lo, hi) for k in range(axis.kernel)}
    inside = [t for t in taps if 0 <= t < axis.size_in]
    first, last = axis.needed((lo, hi))
    assert 0 <= first <= last <= axis.size_in
    assert all(first <= t < last for t in inside)
    # no wider than the windows' reach: from the first window start to the last tap
    assert first >= lo * axis.stride - axis.pad
    assert last <= (hi - 1) * axis.stride - axis.pad + (axis.kernel - 1) * axis.dil + 1


@settings(max_examples=200, deadline=None)
@given(a=axes(), b=axes(), band=st.integers(1, 4))
def test_streaming_computes_each_needed_row_once(a: Axis, b: Axis, band: int) -> None:
    out = (a.size_out + 2 * b.pad - (b.kernel - 1) * b.dil - 1) // b.stride + 1
    assume(out >= 1)
    b = Axis(b.kernel, b.stride, b.pad, b.dil, a.size_out, out)
    col = Axis(1, 1, 0, 1, 3, 3)
    members = [Member(a, col, 2, 4, 7), Member(b, col, 2, 4, 5)]
    program = stream_program(members, band)
    rows = [r for tile in program.steps for r in
            range(tile[0].y.row0, tile[0].y.row0 + tile[0].y.rows)]
    assert len(rows) == len(set(rows))  # no row of the intermediate is computed twice
    needed = set()
    for tile in program.steps:
        out = (tile[1].y.row0, tile[1].y.row0 + tile[1].y.rows)
        lo, hi = b.needed(out)
        needed.update(range(lo, hi))
        # the held rows (x of member 1) cover what this band's windows read
        assert tile[1].x.row0 <= lo and hi <= tile[1].x.row0 + tile[1].x.rows
    assert set(rows) == needed
    assert program.macs <= sum(m.macs_per_output * m.channels_out * m.rows.size_out * 3
                               for m in members)


def test_the_dag_shortcut_equals_the_rewritten_graph() -> None:
    graph = load("mobilenetv2")
    chains, _ = find_chains(graph)
    groups = [Group(tuple(n.name for n in chain), "stream") for chain in chains[1:]]
    first = chains[0]
    groups.append(Group(tuple(n.name for n in first), "patch", (3, 3)))
    fused = dag_from_graph(apply_groups(graph, groups))
    short = fuse_dag(dag_from_graph(graph), graph, groups, {})
    assert [op.name for op in short.ops] == [op.name for op in fused.ops]
    assert peak_bytes(short, range(len(short.ops))) == peak_bytes(fused, range(len(fused.ops)))
