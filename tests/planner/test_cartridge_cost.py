"""The cartridge-aware time (planner/cartridge.py) against hand-derived values, the
protocol's cartridge lines, and the plan search's cost: among fitting plans it takes the
one of least compute + cartridge time, so a plan that re-reads many megabytes loses to a
later one with less traffic (planner/fusion/search.py)."""

from __future__ import annotations

import pytest

from dnn64build.planner.cartridge import (
    CPU_CYCLES_PER_MAC,
    CPU_HZ,
    RSP_CYCLES_PER_MAC,
    cartridge_seconds,
    compute_seconds,
    estimated_seconds,
)
from dnn64build.planner.fusion.ladder import Option
from dnn64build.planner.fusion.search import PLAN_COST, search
from dnn64build.run_protocol import ProtocolError, Traffic, parse_traffic

# 1,000 ticks a second; 1,000 ticks in all, 100 of them inside read calls; 5,000 bytes
# waited for; two 10,000-byte prefetches beside 300 and 50 ticks of compute.
TRAFFIC = Traffic(run_ticks=1000, sync_bytes=5000, async_bytes=20000, read_ticks=100,
                  spans=((10000, 300), (10000, 50)), steps=())


def test_transfers_slower_than_compute_are_charged_whole() -> None:
    # 10 kB/s: compute not beside a prefetch 900 - 350 = 550 ticks = 0.55 s; each
    # prefetch max(0.3 s, 1 s) and max(0.05 s, 1 s); the waited-for 5,000 bytes 0.5 s.
    assert cartridge_seconds(TRAFFIC, 1000, 10_000) == pytest.approx(0.55 + 1 + 1 + 0.5)


def test_transfers_faster_than_compute_hide_behind_it() -> None:
    # 1 MB/s: the prefetches take 0.01 s each, less than the compute beside them (0.3 s,
    # 0.05 s); the waited-for bytes 0.005 s.
    assert cartridge_seconds(TRAFFIC, 1000, 1e6) == pytest.approx(0.55 + 0.3 + 0.05 + 0.005)


def test_prefetched_bytes_past_the_log_are_charged_whole() -> None:
    lost = Traffic(run_ticks=1000, sync_bytes=0, async_bytes=30000, read_ticks=0,
                   spans=((10000, 500),), steps=(), spans_past=2)
    # 500 ticks of other compute, max(0.5 s, 1 s), and 20,000 unlogged bytes 2 s.
    assert cartridge_seconds(lost, 1000, 10_000) == pytest.approx(0.5 + 1 + 2)


def test_the_planner_estimate_is_compute_plus_every_byte_at_5_mb_s() -> None:
    assert estimated_seconds(1.0, 5_000_000) == pytest.approx(2.0)
    assert compute_seconds(1000, 400) == pytest.approx(
        (400 * RSP_CYCLES_PER_MAC + 600 * CPU_CYCLES_PER_MAC) / CPU_HZ)


def test_cartridge_lines_are_parsed_per_run() -> None:
    lines = ["TICKRATE 1000", "TICKS m 1000", "CART m 5000 20000 100 3 2 1 0 0",
             "CARTS m 0 10000 300 10000 50", "CARTN m 0 5000 20000 1000",
             "TICKS other 7", "CART other 1 0 0 1 0 0 0 0", "TICKS m 900",
             "CART m 0 0 0 0 0 0 0 0"]
    first, second = parse_traffic(lines, "m")
    assert first == Traffic(1000, 5000, 20000, 100, ((10000, 300), (10000, 50)),
                            ((0, 5000, 20000, 1000),))
    assert second.run_ticks == 900 and second.bytes == 0
    with pytest.raises(ProtocolError):
        parse_traffic(["TICKS m 1", "CART m 1 2 x 4 5 6 7 8"], "m")


def _plan(compute_s: float, cartridge_bytes: int, reread_bytes: int) -> dict:
    return {"cartridge": {"cost_seconds": estimated_seconds(compute_s, cartridge_bytes),
                          "reread_bytes": reread_bytes}}


DAG, DAG_IN, PATCH = Option("dag"), Option("dag", input="stream"), Option("patch")


def test_a_dag_plan_rereading_100_mb_loses_to_a_fitting_plan_with_less_traffic() -> None:
    # dag: 1 s of compute and 100 MB (20 s at 5 MB/s); patch: 1.5 s (extra MACs), 2 MB.
    plans = {DAG: (_plan(1.0, 100_000_000, 98_000_000), 100),
             DAG_IN: (_plan(1.0, 90_000_000, 88_000_000), 200),
             PATCH: (_plan(1.5, 2_000_000, 0), 100)}
    found = search([DAG, DAG_IN, PATCH], plans.__getitem__, 1000, PLAN_COST)
    assert found.chosen == PATCH and found.plan is plans[PATCH][0]
    records = [t.record() for t in found.tried]
    assert [r["outcome"].startswith("fits, but costs") for r in records] == [True, True, False]
    assert records[2]["outcome"] == "chosen"
    assert records[2]["cost_seconds"] == pytest.approx(1.5 + 0.4)


def test_a_plan_that_reads_its_weights_once_ends_the_search() -> None:
    planned: list[Option] = []

    def plan_option(option: Option) -> tuple[dict, int]:
        planned.append(option)
        return {DAG: _plan(1.0, 3_000_000, 0), PATCH: _plan(0.1, 1, 0)}[option], 10

    found = search([DAG, PATCH], plan_option, 1000, PLAN_COST)
    assert found.chosen == DAG and planned == [DAG]


def test_without_a_cost_the_first_fit_is_taken() -> None:
    plans = {DAG: (_plan(1.0, 100_000_000, 98_000_000), 100),
             PATCH: (_plan(1.5, 2_000_000, 0), 100)}
    assert search([DAG, PATCH], plans.__getitem__, 1000).chosen == DAG
