"""Plan stage: execution order and arena offsets for the quantised IR, checked against the
target memory before anything is generated.

Writes plan.json (checkable on its own), report.txt (what ``dnn64build plan``
prints) and timeline.svg (the memory timeline picture).
"""

from __future__ import annotations

import math

from dnn64build.ir import Graph, load_graph
from dnn64build.planner.checker import check_plan
from dnn64build.planner.exact import WORK_BUDGET
from dnn64build.planner.fit import PROGRAM_ESTIMATE_BYTES, check_fit, live_at
from dnn64build.planner.graph_plan import plan_graph
from dnn64build.planner.report import render_ascii, render_svg
from dnn64build.planner.schedule import EXPANSION_BUDGET
from dnn64build.stages.io import StageArgs

DEFAULT_STAGING_CAP = 64 * 1024  # bytes of weight staging (both halves) unless configured


def main(args: StageArgs) -> None:
    config = args.config
    graph = load_graph(args.input("graph"), args.input("weights"))
    alignment = config.get("alignment", 16)
    plan = plan_graph(
        graph,
        algorithm=config.get("algorithm", "auto"),
        scheduler=config.get("scheduler", "auto"),
        alignment=alignment,
        # Work budgets, not seconds: the same model plans the same on every machine.
        work_budget=config.get("work_budget", WORK_BUDGET),
        expansion_budget=config.get("expansion_budget", EXPANSION_BUDGET),
        timings=False,
    )
    violation = check_plan(plan)
    if violation is not None:  # the planner and the checker are separate code: a bug
        raise AssertionError(f"planner produced an invalid plan: {violation}")
    staging = config.get("staging_bytes") or default_staging_bytes(graph, alignment)
    plan["staging"] = {"offset": plan["arena_bytes"], "bytes": staging}
    check_fit(plan, memory=config["memory"], program_bytes=PROGRAM_ESTIMATE_BYTES,
              label=config["label"], staging_bytes=staging)
    args.write_json("plan", plan)
    args.write_text("report", report(plan, config["label"], config["memory"]))
    args.write_text("timeline", render_svg(plan))


def default_staging_bytes(graph: Graph, alignment: int) -> int:
    """Room for two copies of the largest node's weights (double buffering), capped: bigger
    layers are streamed in output-channel tiles."""
    largest = max(
        (sum(graph.constants[t].nbytes for t in node.inputs if t in graph.constants)
         for node in graph.nodes),
        default=0,
    )
    return max(alignment, min(2 * math.ceil(largest / alignment) * alignment,
                              DEFAULT_STAGING_CAP))


def report(plan: dict, model: str, memory: int) -> str:
    lines = [
        f"model {model}: arena {plan['arena_bytes']} bytes, lower bound "
        f"{plan['lower_bound_bytes']} bytes "
        f"({_ratio(plan['arena_bytes'], plan['lower_bound_bytes'])} of it), "
        f"weight staging {plan['staging']['bytes']} bytes, target memory {memory} bytes",
        f"schedule: {plan['scheduler']['method']} order, {len(plan['schedule'])} steps; "
        f"allocation: {plan['algorithm']} ({plan['outcome']})",
    ]
    if plan["outcome"] == "budget_exhausted":
        lines.append("not proven optimal: the exact search spent its work budget "
                     "(raise planner.work_budget to search further)")
    lines += ["", "algorithm              arena bytes  outcome"]
    for trial in plan["trials"]:
        arena = "-" if trial["arena_bytes"] is None else str(trial["arena_bytes"])
        lines.append(f"  {trial['algorithm']:<20} {arena:>11}  {trial['outcome']}")
    step = plan["peak"]["step"]
    live = sorted(live_at(plan, step), key=lambda b: -b["size"])
    lines += ["", f"live at the peak (step {step}, node {plan['peak']['node']!r}):"]
    lines += [f"  {b['name']:<40} {b['size']:>10} bytes" for b in live[:10]]
    lines += ["", render_ascii(plan)]
    return "\n".join(lines) + "\n"


def _ratio(arena: int, bound: int) -> str:
    return f"{arena / bound:.3f}x" if bound else "n/a"



