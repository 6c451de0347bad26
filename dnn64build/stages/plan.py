"""Plan stage: execution order and arena offsets for the quantised IR, checked against the
target memory before anything is generated.

Writes plan.json (checkable on its own), report.txt (what ``dnn64build plan``
prints) and timeline.svg (the memory timeline picture).
"""

from __future__ import annotations

from collections.abc import Sequence

from dnn64build.codegen.model import CodeShape, code_shape
from dnn64build.codegen.ops_int8 import quantize_stem_pairs
from dnn64build.codegen.staging import DEFAULT_STAGING_CAP
from dnn64build.ir import Graph, load_graph
from dnn64build.planner.checker import check_plan
from dnn64build.planner.dagplan import PlanParams
from dnn64build.planner.exact import WORK_BUDGET, ExactParams
from dnn64build.planner.fit import (
    LOW_MEMORY_BYTES,
    STACK_BYTES,
    STAGING_RESERVE_BYTES,
    check_fit,
    live_at,
    needed_bytes,
)
from dnn64build.planner.fusion import GROUP_WEIGHT_CAP
from dnn64build.planner.graph_plan import plan_graph
from dnn64build.planner.problem import align_up
from dnn64build.planner.program_size import program_estimate
from dnn64build.planner.report import render_ascii, render_svg
from dnn64build.planner.schedule import EXPANSION_BUDGET
from dnn64build.stages.io import StageArgs

# The toolchain whose platform layer runs the RSP kernels; host and libdragon run the CPU
# kernel in their place (docs/rsp.md), so a grown staging gains them nothing. A config
# without a toolchain (a plan made outside a build) is planned for it.
RSP_TOOLCHAIN = "bare"


def main(args: StageArgs) -> None:
    config = args.config
    graph = load_graph(args.input("graph"), args.input("weights"))
    plan = plan_model(graph, config)
    args.write_json("plan", plan)
    args.write_text("report", report(plan, config["label"], config["memory"]))
    args.write_text("timeline", render_svg(plan))


def plan_model(graph: Graph, config: dict) -> dict:
    """The plan of ``graph`` for the target ``config`` (the rule's attributes: memory,
    kernels, planner settings, label): fusion decided, QuantizeLinear + stem pairs decided,
    staging chosen, fit checked (UserError when it does not fit)."""
    fusion = config.get("fusion", "auto")
    kernels = config.get("kernels", "cpu")
    rsp_auto = fusion == "auto" and kernels != "cpu" and \
        "stream" not in (config.get("input"), config.get("output"))
    # A fused Conv runs its CPU region kernel, never the RSP one: with RSP kernels, `auto`
    # fuses only when the model would not fit without it.
    first = "none" if rsp_auto else fusion
    pairs = quantize_stem_pairs(graph, kernels)
    plan, staging = _plan(graph, config, first, pairs)
    if plan["quantize_stem"]["pairs"] and not _fits(plan, staging, config):
        # Like fusion: the overlap is worth no memory the model needs to fit.
        needed = _needed(plan, staging)
        plan, staging = _plan(graph, config, first, ())
        plan["quantize_stem"]["notes"].append(
            f"not paired: with the float input alive through the stem Conv the model needs "
            f"{needed} bytes, more than the target's {config['memory']}")
    if rsp_auto and not _fits(plan, staging, config):
        notes = plan["quantize_stem"]["notes"]
        plan, staging = _plan(graph, config, "auto", ())
        plan["quantize_stem"]["notes"] = notes
    elif rsp_auto:
        plan["fusion"]["notes"].append(
            "not fused: the model fits without fused groups, whose Convs would run on "
            "the CPU (kernels: " + kernels + ")")
    if configured_staging(config) is None:
        # After the fusion decision, which weighed the minimum staging: growth takes only
        # the memory the chosen plan leaves free, so the fit check below still holds.
        staging = grow_staging(graph, plan, config)
    check_fit(plan, memory=config["memory"], program_bytes=plan["program"]["estimate_bytes"],
              label=config["label"], staging_bytes=staging)
    return plan


def _needed(plan: dict, staging: int) -> int:
    return needed_bytes(plan, program_bytes=plan["program"]["estimate_bytes"],
                        staging_bytes=staging)


def _fits(plan: dict, staging: int, config: dict) -> bool:
    return _needed(plan, staging) <= config["memory"]


def _plan(graph: Graph, config: dict, fusion: str, pairs: Sequence[tuple[str, str]]
          ) -> tuple[dict, int]:
    """The checked plan of ``graph`` with ``fusion`` and the QuantizeLinear + stem
    ``pairs`` (plan_graph) and its weight staging bytes; the plan also records the code
    shape and the program-size estimate built on it."""
    alignment = config.get("alignment", 16)
    configured = configured_staging(config)
    estimate = configured or staging_estimate(graph, alignment)
    params = PlanParams(
        algorithm=config.get("algorithm", "auto"),
        scheduler=config.get("scheduler", "auto"),
        alignment=alignment,
        # Work budgets, not seconds: the same model plans the same on every machine.
        exact_params=ExactParams(work_budget=config.get("work_budget", WORK_BUDGET)),
        expansion_budget=config.get("expansion_budget", EXPANSION_BUDGET),
        timings=False,
    )
    plan = plan_graph(
        graph,
        params,
        fusion=fusion,
        fusion_staging=estimate,
        fusion_weight_cap=configured // 2 // 16 * 16 if configured else GROUP_WEIGHT_CAP,
        fusion_budget=(activation_budget(config["memory"], estimate, program_guess(graph, config))
                       if fusion == "auto" else None),  # only auto weighs the memory
        input_mode=config.get("input", "auto"),
        output_mode=config.get("output", "auto"),
        pairs=pairs,
    )
    violation = check_plan(plan)
    if violation is not None:  # the planner and the checker are separate code: a bug
        raise AssertionError(f"planner produced an invalid plan: {violation}")
    # Sized by the code generator itself (fused groups included), so codegen never finds
    # the area too small.
    shape = code_shape(graph, plan, configured=configured,
                       where=config["label"], kernels=config.get("kernels", "cpu"))
    staging = shape.staging_bytes
    plan["staging"] = {
        "offset": plan["arena_bytes"], "bytes": staging, "minimum_bytes": staging,
        "chosen": "configured" if configured else "minimum",
        "why": "planner.staging_bytes" if configured else
               "the minimum: every weight tile of the default size fits one half",
    }
    _record_program(plan, shape)
    return plan, staging


def _record_program(plan: dict, shape: CodeShape) -> None:
    plan["program"] = {
        "estimate_bytes": program_estimate(shape), "calls": shape.calls,
        "staged_calls": shape.staged_calls, "decl_lines": shape.decl_lines,
        "functions": sorted(shape.functions),
    }


def configured_staging(config: dict) -> int | None:
    """``planner.staging_bytes`` when it is a number; None for ``auto`` (the default)."""
    value = config.get("staging_bytes", "auto")
    return None if value == "auto" else int(value)


def grow_staging(graph: Graph, plan: dict, config: dict) -> int:
    """``staging_bytes: auto``: grow the planned (minimum) staging into the memory the plan
    leaves free, keeping STAGING_RESERVE_BYTES unused, up to what cuts the RSP layers into
    the fewest tiles (code_shape's ``grow_limit``), for the toolchain that runs the RSP
    kernels only; records the choice and why in ``plan["staging"]`` and the program
    estimate of the grown code. Returns the bytes."""
    record = plan["staging"]
    base = record["bytes"]
    # What the model needs at the minimum: what "fits" means (tools/bench/bench_memory.py).
    record["minimum_needs_bytes"] = needed_bytes(
        plan, program_bytes=plan["program"]["estimate_bytes"], staging_bytes=base)
    toolchain = config.get("toolchain", RSP_TOOLCHAIN)
    if toolchain != RSP_TOOLCHAIN:
        record["why"] = (f"the minimum: toolchain {toolchain} runs the CPU kernels in place "
                         "of the RSP ones, whatever the tile")
        return base
    free = config["memory"] - STAGING_RESERVE_BYTES - record["minimum_needs_bytes"]
    if free < 16:
        record["why"] = (f"the minimum: the model leaves {max(free, 0)} bytes free past the "
                         f"{STAGING_RESERVE_BYTES} byte reserve")
        return base
    shape = code_shape(graph, plan, configured=None, where=config["label"],
                       kernels=config.get("kernels", "cpu"), grow_limit=base + free)
    grown = shape.staging_bytes
    if grown == base:
        record["why"] = "the minimum: a larger staging would not cut any RSP layer's tiles"
        return base
    if needed_bytes(plan, program_bytes=program_estimate(shape), staging_bytes=grown) > \
            config["memory"] - STAGING_RESERVE_BYTES:  # the grown code's own estimate
        record["why"] = "the minimum: the grown program would not leave the reserve"
        return base
    record.update(bytes=grown, chosen="grown",
                  why=f"grown from {base} bytes into free memory (reserve "
                      f"{STAGING_RESERVE_BYTES} bytes kept): fewer weight tiles for the "
                      "RSP layers (a tile is an RSP kernel call of its own; an RSP Conv "
                      "packs its im2col once per tile)")
    _record_program(plan, shape)
    return grown


def activation_budget(memory: int, staging: int, program: int) -> int:
    """Arena bytes left for activations once the rest of the fit check is paid for."""
    return memory - LOW_MEMORY_BYTES - staging - program - STACK_BYTES


def program_guess(graph: Graph, config: dict) -> int:
    """The program-size estimate before there is a plan, for the fusion decision only (the
    fit check uses the plan's own): the code shape of the graph unfused, in graph order."""
    plan = plan_graph(graph, PlanParams(algorithm="greedy_by_size", scheduler="graph",
                                         alignment=config.get("alignment", 16), timings=False))
    return program_estimate(code_shape(
        graph, plan, configured=configured_staging(config), where=config["label"],
        kernels=config.get("kernels", "cpu")))


def staging_estimate(graph: Graph, alignment: int) -> int:
    """Staging bytes expected before there is a plan, for the fusion decision only (the
    real size is ``code_shape`` of the plan): two copies of the largest node's
    weights, capped as codegen caps a default tile."""
    largest = max(
        (sum(graph.constants[t].nbytes for t in node.inputs if t in graph.constants)
         for node in graph.nodes),
        default=0,
    )
    return max(alignment, min(2 * align_up(largest, alignment), DEFAULT_STAGING_CAP))


def report(plan: dict, model: str, memory: int) -> str:
    lines = [
        f"model {model}: arena {plan['arena_bytes']} bytes, lower bound "
        f"{plan['lower_bound_bytes']} bytes "
        f"({_ratio(plan['arena_bytes'], plan['lower_bound_bytes'])} of it), "
        f"weight staging {plan['staging']['bytes']} bytes, target memory {memory} bytes",
        f"schedule: {plan['scheduler']['method']} order, {len(plan['schedule'])} steps; "
        f"allocation: {plan['algorithm']} ({plan['outcome']})",
        *staging_lines(plan),
        *fusion_lines(plan),
        *quantize_stem_lines(plan),
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


def staging_lines(plan: dict) -> list[str]:
    """The weight staging chosen and why (absent from plans made before it was recorded)."""
    staging = plan.get("staging", {})
    if "why" not in staging:
        return []
    return [f"weight staging {staging['bytes']} bytes ({staging['chosen']}; minimum "
            f"{staging['minimum_bytes']}): {staging['why']}"]


def fusion_lines(plan: dict) -> list[str]:
    """What was fused and at what cost, and the notes on what was not."""
    fusion = plan.get("fusion")  # absent in a plan of a bare DAG (plan_dag)
    if not fusion:
        return []
    notes = [f"fusion: {note}" for note in fusion.get("notes", [])]
    if not fusion["groups"]:
        return notes
    share = fusion["extra_macs"] / fusion["model_macs"] if fusion["model_macs"] else 0.0
    lines = [f"fusion {fusion['mode']}: {len(fusion['groups'])} groups; operator bound "
             f"{plan['op_bound_bytes']} bytes; extra MACs {fusion['extra_macs']} "
             f"({share:.1%} of {fusion['model_macs']})"]
    lines += [f"input {name!r} streamed: read row by row into the first dag group, never "
              "whole in the arena" for name in plan.get("streamed_inputs", [])]
    lines += [f"output {name!r} streamed: handed out row by row by the last dag group, "
              "never whole in the arena" for name in plan.get("streamed_outputs", [])]
    for g in fusion["groups"]:
        how = f"grid {g['grid'][0]}x{g['grid'][1]}" if g["mode"] == "patch" else \
            f"bands of {g['band_rows']} rows"
        lines.append(f"  {g['name']}: {g['mode']}, {how}, {len(g['nodes'])} nodes, "
                     f"extra MACs {g['extra_macs']}, weights {g['weight_bytes']} bytes")
    return lines + notes


def quantize_stem_lines(plan: dict) -> list[str]:
    """Which QuantizeLinear runs inside its stem Conv's call, and why others do not."""
    record = plan.get("quantize_stem", {})
    lines = [f"quantize_stem: node {p['quantize']!r} runs inside node {p['conv']!r}'s "
             f"dnn64_rsp_conv_quantized_s8 (the CPU quantizes {p['float_input']!r} row band "
             "by row band while the RSP computes the stem; the float input stays alive "
             "through it)" for p in record.get("pairs", [])]
    return lines + [f"quantize_stem: {note}" for note in record.get("notes", [])]


def _ratio(arena: int, bound: int) -> str:
    return f"{arena / bound:.3f}x" if bound else "n/a"



