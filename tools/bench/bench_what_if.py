"""What would lower each zoo model's peak further? Optimistic bounds on the chosen plan.

For each model of tools.zoo.BENCHMARK_NAMES in fp32, int8 (float32 graph inputs and
outputs) and int8 with ``io: int8``, the script plans the graph as the plan stage does by
default (``fusion: auto`` weighing the estimated weight staging, no memory budget) and
computes, on that plan's schedule and buffers (alias groups as planned), two bounds that
no implementation of the idea can beat with this schedule:

- **recomputation** (Graphcore-style: recompute a tensor instead of keeping it alive):
  free one buffer (or, greedily, up to three) over every gap between two of its uses
  longer than two steps, at no cost at all: the recomputed copy exists only at the step
  before its next use, the inputs the recomputation reads are not kept alive and its
  intermediates take no memory. When it equals the plan's bound, recomputation cannot
  lower that model's peak.
- **L-shaped buffers**: a concat group holds only the extent of the parts born so far
  until its output is born (a U-Net skip no longer reserves its whole concat buffer), and
  a graph input whose last reader is a QuantizeLinear is free at that step (the int8 copy
  written over the bottom of the dying float buffer). The allocators place rectangles and
  the plan checker checks rectangles, so neither is implemented; this is what they would
  give.

Columns: bound (the plan's ``lower_bound_bytes``), the recomputation bounds after 1 and 3
free recomputations and the buffers freed, the L-shaped bound (with every concat input
placed inside its output; no more than the plan's bound, which the planner could keep).

    python tools/bench/bench_what_if.py [--models unet4 densenet121 ...]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from dnn64build.planner.aliasing import find_aliases  # noqa: E402
from dnn64build.planner.fusion.records import groups_from_plan  # noqa: E402
from dnn64build.planner.fusion.rewrite import apply_groups  # noqa: E402
from dnn64build.planner.graph_plan import dag_from_graph, plan_graph  # noqa: E402
from dnn64build.planner.problem import align_up  # noqa: E402
from dnn64build.planner.schedule import lifetimes  # noqa: E402
from dnn64build.quant.quantize import quantize_graph  # noqa: E402
from dnn64build.stages.plan import staging_estimate  # noqa: E402
from tools.bench.bench_planner_zoo import load  # noqa: E402
from tools.zoo import BENCHMARK_NAMES  # noqa: E402

ALIGNMENT = 16
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


def l_shaped(graph, plan: dict) -> int:
    """The live-bytes bound with L-shaped concat groups (every concat input placed inside
    its output, as find_aliases does with no copies) and in-place input quantizes."""
    fused = apply_groups(graph, groups_from_plan(plan))
    dag = dag_from_graph(fused)
    index = {op.name: i for i, op in enumerate(dag.ops)}
    order = [index[name] for name in plan["schedule"]]
    spans = lifetimes(dag, order)
    aliases = find_aliases(dag, order, spans, ALIGNMENT)
    kinds = {node.name: node.op for node in fused.nodes}
    quantized = {op.inputs[0]: k for k, op in enumerate(dag.ops[i] for i in order)
                 if kinds[op.name] == "QuantizeLinear" and op.inputs[0] in dag.inputs}
    groups: dict[str, list[str]] = {}
    for t in spans:
        groups.setdefault(aliases[t][0] if t in aliases else t, []).append(t)
    live = [0] * len(order)
    for root, members in groups.items():
        for s in range(min(spans[m][0] for m in members), max(spans[m][1] for m in members)):
            if spans[root][0] <= s:
                extent = dag.sizes[root]
            else:  # the root (a concat output) is not born yet: its parts born so far
                extent = max(aliases[m][1] + dag.sizes[m] for m in members
                             if m != root and spans[m][0] <= s)
            if quantized.get(root) != s or spans[root][1] != s + 1:
                live[s] += align_up(extent, ALIGNMENT)
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
    print("| model | mode | bound | 1 free recomputation | 3 free recomputations | freed | "
          "L-shaped |")
    print("|---|---|---:|---:|---:|---|---:|")
    for name in args.models:
        fp32 = load(name)
        modes = {"fp32": fp32}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for mode, io in (("int8", "float32"), ("int8 io", "int8")):
                modes[mode] = quantize_graph(fp32, None, synthetic=True, io=io)[0]
        for mode, graph in modes.items():
            plan = plan_graph(graph, fusion="auto",
                              fusion_staging=staging_estimate(graph, 16))
            roots, free = gaps(graph, plan)
            steps = len(plan["schedule"])
            assert bound(roots, [], steps) == plan["lower_bound_bytes"], name  # same count
            one, _ = greedy(roots, free, steps, 1)
            three, freed = greedy(roots, free, steps, 3)
            print(f"| {name} | {mode} | {plan['lower_bound_bytes']:,} | {one:,} | {three:,} | "
                  f"{', '.join(freed) or '-'} | "
                  f"{min(l_shaped(graph, plan), plan['lower_bound_bytes']):,} |", flush=True)


if __name__ == "__main__":
    main()
