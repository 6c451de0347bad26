"""Every allocation strategy on every zoo model, fp32 and int8: a markdown table.

For each model: the live-bytes lower bound under the graph's own order and
under the schedule the planner picks (``auto``), then the arena of each
algorithm on that schedule's problem (with its outcome when the exact search
was cut), the times in milliseconds, and auto's gap to that bound. Column
names: gbs greedy_by_size, gbc greedy_by_conflicts, hc hill_climb, bf
best_fit. The problems are the ones plan.json is built from (aliases
grouped). int8 graphs come from synthetic calibration (quantize_graph warns).

    python tools/bench/bench_planner_zoo.py [--models resnet18 unet ...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from dnn64build.frontend import import_onnx  # noqa: E402
from dnn64build.ir import Graph  # noqa: E402
from dnn64build.passes import optimize  # noqa: E402
from dnn64build.planner.allocate import ALGORITHMS, allocate  # noqa: E402
from dnn64build.planner.checker import check_intervals  # noqa: E402
from dnn64build.planner.dagplan import order_problem  # noqa: E402
from dnn64build.planner.graph_plan import dag_from_graph  # noqa: E402
from dnn64build.planner.problem import Problem, lower_bound  # noqa: E402
from dnn64build.planner.schedule import schedule  # noqa: E402
from dnn64build.quant import quantize_graph  # noqa: E402
from tools.zoo import NAMES, build  # noqa: E402

ALIGNMENT = 16


def load(name: str) -> Graph:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.onnx"
        onnx.save(build(name), path)
        return optimize(import_onnx(path))


def int8(graph: Graph) -> Graph:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        quantized, _ = quantize_graph(graph, None, synthetic=True)
    return quantized


def _valid(problem: Problem, offsets: dict[str, int]) -> bool:
    rows = [(b.id, b.lower, b.upper, b.size, b.alignment, offsets[b.id]) for b in problem.buffers]
    return check_intervals(rows) is None


def row(label: str, graph: Graph) -> str:
    dag = dag_from_graph(graph)
    graph_bound = lower_bound(order_problem(dag, range(len(dag.ops)), ALIGNMENT)[2]).bytes
    start = time.perf_counter()
    sched = schedule(dag, "auto", alignment=ALIGNMENT)
    sched_s = time.perf_counter() - start
    index = {op.name: i for i, op in enumerate(dag.ops)}
    problem = order_problem(dag, [index[n] for n in sched.order], ALIGNMENT)[2]
    bound = lower_bound(problem).bytes
    cells = [label, str(len(problem)), str(graph_bound), f"{bound} ({sched.method})"]
    times = [f"{1000 * sched_s:.1f}"]
    auto_arena = 0
    for algorithm in ALGORITHMS:
        start = time.perf_counter()
        result = allocate(problem, algorithm)
        seconds = time.perf_counter() - start
        ok = result.offsets is not None and _valid(problem, result.offsets)
        note = "" if result.outcome in ("ok", "optimal") else f" ({result.outcome})"
        cells.append(f"{result.arena_bytes}{note}{'' if ok else ' INVALID'}")
        times.append(f"{1000 * seconds:.1f}")
        auto_arena = result.arena_bytes or 0
    gap = 100.0 * (auto_arena - bound) / bound if bound else 0.0
    return "| " + " | ".join([*cells, *times, f"{gap:.2f}%"]) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=list(NAMES), choices=NAMES)
    args = parser.parse_args()
    short = {"greedy_by_size": "gbs", "greedy_by_conflicts": "gbc", "hill_climb": "hc",
             "best_fit": "bf", "exact": "exact", "auto": "auto"}
    header = (["model", "buffers", "LB graph order", "LB schedule"]
              + [f"{short[a]} bytes" for a in ALGORITHMS]
              + ["sched ms"] + [f"{short[a]} ms" for a in ALGORITHMS] + ["auto gap"])
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name in args.models:
        graph = load(name)
        print(row(f"{name} fp32", graph), flush=True)
        print(row(f"{name} int8", int8(graph)), flush=True)


if __name__ == "__main__":
    main()
