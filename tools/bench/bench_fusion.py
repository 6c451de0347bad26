"""Fused groups on the zoo models, fp32 and int8: a markdown table.

For each model and fusion mode (none, stream, stream* = stream without the
128 KiB cap on a group's weights, patch, dag = whole sub-DAGs row-streamed with
their weights re-read per firing, auto at 4 MiB fp32 / 2 MiB int8): the
operator-level lower bound (whole tensors), the chosen plan's bound and arena,
the weight staging the plan stage would give it, the number of groups, the
extra multiply-accumulates as a share of the model's, and whether arena +
staging + the program estimate (of the graph unfused, in graph order) + stack fit 4 MiB
(fp32) / 2 MiB (int8); auto is the plan stage's own choice (planner/fusion/search.py). Every
plan is validated by the independent checker. int8 graphs come from synthetic
calibration.

    python tools/bench/bench_fusion.py [--models resnet18 mobilenetv2 ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from dnn64build.codegen.fused_dag import TILE_BYTES  # noqa: E402
from dnn64build.codegen.shape import code_shape  # noqa: E402
from dnn64build.errors import UserError  # noqa: E402
from dnn64build.planner.checker import check_plan  # noqa: E402
from dnn64build.planner.dagplan import PlanParams  # noqa: E402
from dnn64build.planner.fit import LOW_MEMORY_BYTES, STACK_BYTES  # noqa: E402
from dnn64build.planner.fusion.chains import GROUP_WEIGHT_CAP  # noqa: E402
from dnn64build.planner.graph_plan import plan_graph  # noqa: E402
from dnn64build.stages.plan import plan_model, staging_estimate  # noqa: E402
from tools.bench.bench_planner_zoo import int8, load  # noqa: E402
from tools.zoo import NAMES  # noqa: E402

# (label, fusion mode, weight cap of one group); "stream*" lifts the cap to show what
# re-reading weights per band (not implemented) would buy.
MODES = (("none", "none", GROUP_WEIGHT_CAP), ("stream", "stream", GROUP_WEIGHT_CAP),
         ("stream*", "stream", 1 << 40), ("patch", "patch", GROUP_WEIGHT_CAP),
         ("dag", "dag", GROUP_WEIGHT_CAP), ("auto", "auto", GROUP_WEIGHT_CAP))
MEMORY = {"fp32": 4 * 1024 * 1024, "int8": 2 * 1024 * 1024}


def program_guess(graph, label: str) -> int:
    """The program-size estimate of the graph unfused, in graph order."""
    plan = plan_graph(graph, PlanParams(algorithm="greedy_by_size", scheduler="graph"))
    return code_shape(graph, plan, configured=None, where=label).program_bytes


def rows(label: str, graph, memory: int) -> list[str]:
    out = []
    staging = staging_estimate(graph, 16)
    program = program_guess(graph, label)
    for mode, fusion, cap in MODES:
        start = time.perf_counter()
        try:
            plan = plan_model(graph, {"label": label, "memory": memory}) if mode == "auto" \
                else plan_graph(graph, fusion=fusion,
                                fusion_staging=staging, fusion_weight_cap=cap)
        except UserError as exc:
            out.append(f"| {label} | {mode} | - | - | - | - | - | - | - | refused: "
                       f"{exc.args[0][:50]}... |")
            continue
        seconds = time.perf_counter() - start
        assert check_plan(plan) is None, check_plan(plan)
        fusion = plan["fusion"]
        share = fusion["extra_macs"] / fusion["model_macs"] if fusion["model_macs"] else 0.0
        # A chain group stages all its weights at once; a dag group re-reads tiles of at
        # most TILE_BYTES per firing.
        need = max([staging] + [2 * (TILE_BYTES if g["mode"] == "dag" else
                                     -(-g["weight_bytes"] // 16) * 16)
                                for g in fusion["groups"]])
        total = LOW_MEMORY_BYTES + plan["arena_bytes"] + need + program + STACK_BYTES
        out.append(f"| {label} | {mode} | {plan['op_bound_bytes']} | {plan['lower_bound_bytes']} "
                   f"| {plan['arena_bytes']} | {need} | {len(fusion['groups'])} | {share:.1%} "
                   f"| {'yes' if total <= memory else 'no'} | {seconds:.1f} s |")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=list(NAMES))
    args = parser.parse_args()
    print("| model | fusion | op bound | bound | arena | staging | groups | extra MACs | fits "
          "| plan time |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|---:|")
    for name in args.models:
        graph = load(name)
        for line in rows(f"{name} fp32", graph, MEMORY["fp32"]):
            print(line, flush=True)
        for line in rows(f"{name} int8", int8(graph), MEMORY["int8"]):
            print(line, flush=True)


if __name__ == "__main__":
    main()
