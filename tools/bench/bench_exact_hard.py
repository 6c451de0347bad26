"""The exact search on hard problems with a planted optimum (tools/hard_problems.py).

For each instance: ``exact`` at capacity = the planted optimum (which equals
the live-bytes bound, so a plan found is a proof of optimality), with a large
work budget and a wall-clock limit, its time, nodes and outcome, then the
arena of hill_climb, best_fit and greedy_by_size as a percentage above the
optimum (no capacity: what they reach). Every plan is validated by the
independent checker. Prints a markdown table and a summary.

    python tools/bench/bench_exact_hard.py [--sizes 100 300 500] [--seeds 2] [--timeout 60]
        [--families random models] [--drops 0.3 0.5] [--csv NAME.CAPACITY.csv ...]
        [--without SWITCH ...] [--work-budget UNITS] [--python]
        [--minimalloc DIR] [--first-fit] [--minimalloc-solver BIN]
        [--engines compiled python] [--no-heuristics]

``--csv`` adds problem files named ``<name>.<capacity>.csv`` (the naming of
tools/hard_problems.py and of MiniMalloc's benchmarks/challenging set), solved
at that capacity; with ``--families`` empty only those run. Their optimum is
not known: the heuristics' column is then relative to the capacity.
``--without`` turns the named ExactParams switches off (an ablation).
``--work-budget`` bounds the search's work (default: unlimited; auto's default
is ``exact.WORK_BUDGET``), to see how long a budget takes to run out.
``--python`` runs the Python search instead of the compiled core (native_core.py);
``--engines compiled python`` runs both on each instance, their columns side by side
(docs/benchmarks.md's tables).
``--minimalloc DIR`` (default ``$MINIMALLOC_DIR``) adds the challenging set of a
google/minimalloc checkout (DIR/benchmarks/challenging/*.1048576.csv, not part of this
repository); ``--first-fit`` stops each search at its first plan within the capacity
(the decision problem those benchmarks pose; on the planted family, whose capacity is
the bound, it changes nothing); ``--minimalloc-solver BIN`` also times MiniMalloc's own
solver (a build of that checkout's ``minimalloc`` binary) on each CSV problem.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from dnn64build.planner.allocate import allocate  # noqa: E402
from dnn64build.planner.checker import check_intervals  # noqa: E402
from dnn64build.planner.csvio import read_problem_csv  # noqa: E402
from dnn64build.planner.dagplan import order_problem  # noqa: E402
from dnn64build.planner.exact import SWITCHES, ExactParams  # noqa: E402
from dnn64build.planner.graph_plan import dag_from_graph  # noqa: E402
from dnn64build.planner.native_core import ENGINE_ENV  # noqa: E402
from dnn64build.planner.native_core import load as load_core  # noqa: E402
from dnn64build.planner.problem import Problem, lower_bound  # noqa: E402
from dnn64build.planner.schedule import schedule  # noqa: E402
from tools.bench.bench_planner_zoo import load  # noqa: E402
from tools.hard_problems import Planted, merged_traces, planted_random  # noqa: E402

TRACE_MODELS = ("mlp", "small_cnn", "resnet18", "mobilenetv2", "mobilenetv3", "densenet",
                "shufflenet", "unet", "squeezenet")
HEURISTICS = ("hill_climb", "best_fit", "greedy_by_size")


def model_traces() -> list[Planted]:
    """Zoo models' activation problems (scheduled, aliases grouped), each with
    auto's plan where it meets the bound (a planted optimum)."""
    traces = []
    for name in TRACE_MODELS:
        dag = dag_from_graph(load(name))
        index = {op.name: i for i, op in enumerate(dag.ops)}
        order = [index[n] for n in schedule(dag, "auto", alignment=16).order]
        problem = order_problem(dag, order, 16)[2]
        plan = allocate(problem, "auto")
        if plan.arena_bytes == lower_bound(problem).bytes:
            traces.append(Planted(name, problem, plan.offsets, plan.arena_bytes))
    return traces


def valid(problem: Problem, offsets: dict[str, int]) -> bool:
    rows = [(b.id, b.lower, b.upper, b.size, b.alignment, offsets[b.id]) for b in problem.buffers]
    return check_intervals(rows) is None


def minimalloc_seconds(solver: Path, csv: Path, capacity: int, timeout: float) -> str:
    """MiniMalloc's solver on one problem: its wall time (CPU time), or how it failed."""
    with tempfile.TemporaryDirectory() as tmp:
        start, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
        proc = subprocess.run([str(solver), f"--capacity={capacity}", f"--input={csv}",
                               f"--output={tmp}/out.csv", f"--timeout={timeout:g}s"],
                              capture_output=True, text=True)
        seconds = time.perf_counter() - start
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - cpu
    return (f"{seconds:.2f} ({cpu:.2f})" if proc.returncode == 0
            else f"failed ({seconds:.0f} s, CPU {cpu:.1f} s)")


def exact_cells(problem: Problem, capacity: int, timeout: float, params: ExactParams,
                engine: str) -> tuple[list[str], float, str]:
    """``exact`` at ``capacity`` with one engine: time, nodes, nodes/s, outcome."""
    if engine == "python":
        os.environ[ENGINE_ENV] = "python"
    else:
        os.environ.pop(ENGINE_ENV, None)
    load_core.cache_clear()
    load_core()  # built (or found) before the clock starts
    start, cpu = time.perf_counter(), time.process_time()
    result = allocate(problem, "exact", capacity=capacity, exact_params=params,
                      deadline_s=timeout)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    nodes = result.trials[0].nodes
    outcome = result.outcome
    if result.offsets is not None and not valid(problem, result.offsets):
        outcome += " INVALID"
    elif result.offsets is not None and outcome not in ("optimal", "fits"):
        outcome += " (a plan fits)"
    return ([f"{seconds:.2f} ({cpu:.2f})", str(nodes), f"{nodes / max(cpu, 1e-6):,.0f}",
             outcome], seconds, result.outcome)


def heuristic_cells(problem: Problem, optimum: int) -> list[str]:
    cells = []
    for name in HEURISTICS:
        other = allocate(problem, name)
        ok = valid(problem, other.offsets)
        cells.append(f"+{100 * (other.arena_bytes - optimum) / optimum:.1f}%"
                     + ("" if ok else " INVALID"))
    return cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 500])
    parser.add_argument("--seeds", type=int, default=2, help="instances per size and family")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per exact run")
    parser.add_argument("--csv", type=Path, nargs="*", default=[],
                        help="problem files NAME.CAPACITY.csv to add")
    parser.add_argument("--families", nargs="*", default=["random", "models"],
                        choices=["random", "models"])
    parser.add_argument("--drops", type=float, nargs="+", default=[0.3, 0.5],
                        help="random family: fractions of the buffers away from the "
                        "witness step removed (more is more slack)")
    parser.add_argument("--without", nargs="*", default=[], choices=SWITCHES,
                        help="exact search switches to turn off")
    parser.add_argument("--work-budget", type=int, default=10**15,
                        help="the exact search's work budget in units (default: unlimited)")
    parser.add_argument("--python", action="store_true",
                        help="run the Python search, not the compiled core")
    parser.add_argument("--engines", nargs="+", default=["compiled"],
                        choices=["compiled", "python"],
                        help="run each instance with these searches, side by side")
    parser.add_argument("--no-heuristics", action="store_true",
                        help="leave out the heuristics' columns")
    parser.add_argument("--minimalloc", type=Path, default=os.environ.get("MINIMALLOC_DIR"),
                        help="a google/minimalloc checkout: add its challenging set")
    parser.add_argument("--first-fit", action="store_true",
                        help="stop at the first plan within the capacity (decision problem)")
    parser.add_argument("--minimalloc-solver", type=Path,
                        help="MiniMalloc's solver binary, timed on each CSV problem")
    args = parser.parse_args()
    engines = ["python"] if args.python else args.engines
    if args.minimalloc:
        args.csv += sorted((args.minimalloc / "benchmarks" / "challenging").glob("*.1048576.csv"))
    params = ExactParams(work_budget=args.work_budget, first_fit=args.first_fit,
                         **{switch: False for switch in args.without})
    traces = model_traces() if "models" in args.families else []
    prefix = (lambda e: f"{e}: ") if len(engines) > 1 else (lambda e: "")
    header = ["instance", "buffers", "optimum (capacity) bytes",
              *(prefix(e) + c for e in engines
                for c in ("exact s (CPU s)", "nodes", "nodes per CPU s", "outcome")),
              *([] if args.no_heuristics else (f"{h} over optimum" for h in HEURISTICS))]
    if args.minimalloc_solver:
        header.append("MiniMalloc s (CPU s)")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    times: dict[str, list[float]] = {e: [] for e in engines}
    outcomes: dict[str, list[str]] = {e: [] for e in engines}

    def line(name: str, problem: Problem, capacity: int, theirs: Path | None) -> str:
        cells = [name, str(len(problem)), str(capacity)]
        for engine in engines:
            more, seconds, outcome = exact_cells(problem, capacity, args.timeout, params, engine)
            cells += more
            times[engine].append(seconds)
            outcomes[engine].append(outcome)
        if not args.no_heuristics:
            cells += heuristic_cells(problem, capacity)
        if args.minimalloc_solver:
            cells.append("-" if theirs is None else minimalloc_seconds(
                args.minimalloc_solver, theirs, capacity, args.timeout))
        return "| " + " | ".join(cells) + " |"

    makers = []
    if "random" in args.families:
        makers += [lambda seed, size, drop=drop: planted_random(seed, size, drop=drop)
                   for drop in args.drops]
    if "models" in args.families:
        makers.append(lambda seed, size: merged_traces(seed, traces, size))
    for make in makers:
        for size in args.sizes:
            for seed in range(args.seeds):
                planted = make(seed, size)
                print(line(planted.name, planted.problem, planted.optimum, None), flush=True)
    for path in args.csv:
        name, capacity = path.name.removesuffix(".csv").rsplit(".", 1)
        print(line(name, read_problem_csv(path), int(capacity), path), flush=True)
    print()
    for engine in engines:
        proven = sum(o in ("optimal", "infeasible", "fits") for o in outcomes[engine])
        print(f"{engine}: {proven}/{len(outcomes[engine])} proven; median "
              f"{statistics.median(times[engine]):.2f} s, max {max(times[engine]):.2f} s "
              f"(exact, {args.timeout:.0f} s limit each; load average "
              f"{os.getloadavg()[0]:.1f} at the end)")


if __name__ == "__main__":
    main()
