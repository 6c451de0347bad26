"""Could recomputation lower a zoo model's peak? An optimistic bound, per model.

Recomputing a tensor instead of keeping it alive (Graphcore-style) frees its bytes between
two of its uses; the recomputed copy must exist at least at the step before its next use
(where the recomputation runs). For each model of tools.zoo.BENCHMARK_NAMES, fp32 and int8
with ``io: int8``, the script plans the graph as the plan stage would by default
(``fusion: auto`` weighing the estimated weight staging, no memory budget), then, on that
plan's schedule and buffers (alias groups as planned), frees one buffer (or, greedily, up
to three) over every gap between two of its uses longer than two steps, at no cost at
all: the inputs the recomputation reads are not kept alive and its intermediates take no
memory. The result is a lower bound on what any recomputation of up to that many buffers
can reach with this schedule; when it equals the plan's bound, recomputation cannot lower
that model's peak.

Columns: bound (the plan's ``lower_bound_bytes``), optimistic bound after 1 and 3 free
recomputations, and the buffers freed.

    python tools/bench/bench_recompute.py [--models unet4 densenet121 ...]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from dnn64build.planner.fusion import apply_groups, groups_from_plan  # noqa: E402
from dnn64build.planner.graph_plan import plan_graph  # noqa: E402
from dnn64build.planner.problem import align_up  # noqa: E402
from dnn64build.quant.quantize import quantize_graph  # noqa: E402
from dnn64build.stages.plan import staging_estimate  # noqa: E402
from tools.bench.bench_planner_zoo import load  # noqa: E402
from tools.zoo import BENCHMARK_NAMES  # noqa: E402

Gap = tuple[str, int, int]  # root buffer, first and last step it could be freed


def gaps(graph, plan: dict) -> tuple[dict[str, tuple[int, int, int]], list[Gap]]:
    """Root buffers (footprint, first, last) and their free-able gaps."""
    fused = apply_groups(graph, groups_from_plan(plan))
    step = {name: k for k, name in enumerate(plan["schedule"])}
    touches: dict[str, set[int]] = {}
    roots = {}
    for b in plan["buffers"]:
        root = b.get("alias_of", b["name"])
        touches.setdefault(root, set()).update({b["first"], b["last"]})
        if "alias_of" not in b:
            roots[b["name"]] = (align_up(b["size"], b["alignment"]), b["first"], b["last"])
    member_root = {b["name"]: b.get("alias_of", b["name"]) for b in plan["buffers"]}
    for node in fused.nodes:
        for t in [*node.inputs, *node.outputs]:
            if t in member_root:
                touches[member_root[t]].add(step[node.name])
    free = []
    for root, steps in touches.items():
        ordered = sorted(steps)
        free += [(root, a + 1, b - 2) for a, b in zip(ordered, ordered[1:], strict=False)
                 if b - a > 2]
    return roots, free


def bound(roots: dict[str, tuple[int, int, int]], freed: list[Gap], steps: int) -> int:
    live = [0] * steps
    for size, first, last in roots.values():
        for s in range(first, last + 1):
            live[s] += size
    for root, first, last in freed:
        for s in range(first, last + 1):
            live[s] -= roots[root][0]
    return max(live, default=0)


def greedy(roots, free: list[Gap], steps: int, count: int) -> tuple[int, list[str]]:
    chosen: list[Gap] = []
    best = bound(roots, chosen, steps)
    for _ in range(count):
        trials = [(bound(roots, chosen + [g], steps), g) for g in free if g not in chosen]
        if not trials or min(trials)[0] >= best:
            break
        best, gap = min(trials)
        chosen.append(gap)
    return best, [g[0] for g in chosen]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=list(BENCHMARK_NAMES),
                        choices=BENCHMARK_NAMES)
    args = parser.parse_args()
    print("| model | mode | bound | 1 free recomputation | 3 free recomputations | freed |")
    print("|---|---|---:|---:|---:|---|")
    for name in args.models:
        fp32 = load(name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            int8, _ = quantize_graph(fp32, None, synthetic=True, io="int8")
        for mode, graph in (("fp32", fp32), ("int8 io", int8)):
            plan = plan_graph(graph, timings=False, fusion="auto",
                              fusion_staging=staging_estimate(graph, 16))
            roots, free = gaps(graph, plan)
            steps = len(plan["schedule"])
            assert bound(roots, [], steps) == plan["lower_bound_bytes"], name  # same count
            one, _ = greedy(roots, free, steps, 1)
            three, freed = greedy(roots, free, steps, 3)
            print(f"| {name} | {mode} | {plan['lower_bound_bytes']:,} | {one:,} | {three:,} | "
                  f"{', '.join(freed) or '-'} |", flush=True)


if __name__ == "__main__":
    main()
