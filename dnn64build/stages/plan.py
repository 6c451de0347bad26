"""Plan stage: execution order and arena offsets for the quantised IR, checked against the
target memory before anything is generated.

Writes plan.json (checkable on its own), report.txt (what ``dnn64build plan``
prints) and timeline.svg (the memory timeline picture).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence

from dnn64build.codegen.routing import quantize_stem_pairs
from dnn64build.codegen.shape import CodeShape, code_shape, shrunk_code_shapes
from dnn64build.codegen.staging import DEFAULT_STAGING_CAP
from dnn64build.errors import UserError
from dnn64build.ir import Graph, load_graph
from dnn64build.planner.cartridge import (
    GAME_PAK_BYTES_PER_S,
    compute_seconds,
    estimated_seconds,
)
from dnn64build.planner.checker import check_plan
from dnn64build.planner.dagplan import PlanParams
from dnn64build.planner.exact import WORK_BUDGET, ExactParams
from dnn64build.planner.fit import (
    STAGING_RESERVE_BYTES,
    all_resident,
    check_fit,
    live_at,
    needed_bytes,
)
from dnn64build.planner.fusion.chains import GROUP_WEIGHT_CAP
from dnn64build.planner.fusion.cost import DagPrograms
from dnn64build.planner.fusion.ladder import Option, Settings
from dnn64build.planner.fusion.search import Found, plan_to_fit
from dnn64build.planner.graph_plan import plan_graph
from dnn64build.planner.problem import align_up
from dnn64build.planner.report import render_ascii, render_svg
from dnn64build.planner.resident import (
    DEFAULT_WEIGHT_MODE,
    choose_resident,
    weights_record,
)
from dnn64build.planner.schedule import EXPANSION_BUDGET
from dnn64build.stages.io import StageArgs

# The toolchain whose platform layer runs the RSP kernels; host and libdragon run the CPU
# kernel in their place (docs/rsp.md), so a grown staging gains them nothing. A config
# without a toolchain (a plan made outside a build) is planned for it.
RSP_TOOLCHAIN = "bare"


# Planning that runs longer than this says on stderr which option it has planned.
PROGRESS_AFTER_S = 10.0


def main(args: StageArgs) -> None:
    config = args.config
    graph = load_graph(args.input("graph"), args.input("weights"))
    plan = plan_model(graph, config, progress=_progress_printer(config["label"]))
    args.write_json("plan", plan)
    args.write_text("report", report(plan, config["label"], config["memory"]))
    args.write_text("timeline", render_svg(plan))


def _progress_printer(label: str) -> Callable[[str], None]:
    """A progress callback that prints to stderr once planning has run PROGRESS_AFTER_S."""
    start = time.monotonic()

    def say(line: str) -> None:
        if time.monotonic() - start >= PROGRESS_AFTER_S:
            print(f"plan {label}: {line}", file=sys.stderr, flush=True)
    return say


def plan_model(graph: Graph, config: dict,
               progress: Callable[[str], None] | None = None) -> dict:
    """The plan of ``graph`` for the target ``config`` (the rule's attributes: memory,
    kernels, planner settings, label): the plan the planner's search finds (fit_search),
    its staging grown into the memory it leaves free; a UserError naming the smallest
    plan's needs when none fits. ``progress``: as fit_search's."""
    found = fit_search(graph, config, progress)
    if found.plan is None:
        smallest = found.smallest
        check_fit(smallest, memory=config["memory"],
                  program_bytes=smallest["program"]["estimate_bytes"], label=config["label"],
                  staging_bytes=smallest["staging"]["bytes"], searched=found.searched_lines())
    plan = found.plan
    if plan["staging"]["chosen"] == "minimum":
        # Growth takes only the memory the chosen plan leaves free, so it still fits.
        staging = grow_staging(graph, plan, config)
    else:
        staging = plan["staging"]["bytes"]
    place_weights(plan, config, staging)
    check_fit(plan, memory=config["memory"], program_bytes=plan["program"]["estimate_bytes"],
              label=config["label"], staging_bytes=staging)
    return plan


def fit_search(graph: Graph, config: dict, progress: Callable[[str], None] | None = None
               ) -> Found:
    """The planner's search for the fastest option whose plan fits (planner/fusion/
    search.py: fusion, streamed input and output, weight staging, QuantizeLinear + stem
    pairs) with ``config``'s settings, each option planned by _plan and shrunk by
    shrink_staging; plan.json's ``fit_search`` says why each faster option was not taken.
    ``progress``: as plan_to_fit's."""
    kernels = config.get("kernels", "cpu")
    pairs = quantize_stem_pairs(graph, kernels)
    settings = Settings(fusion=config.get("fusion", "auto"), input=config.get("input", "auto"),
                        output=config.get("output", "auto"), kernels=kernels,
                        pairs=bool(pairs), staging_auto=configured_staging(config) is None)
    return plan_to_fit(
        settings, config["memory"],
        plan=lambda option, programs: _plan(graph, config, option,
                                            pairs if option.pairs else (), programs),
        shrink=lambda plan: shrink_staging(graph, plan, config), progress=progress)


def _needed(plan: dict, staging: int) -> int:
    return needed_bytes(plan, program_bytes=plan["program"]["estimate_bytes"],
                        staging_bytes=staging)


def _plan(graph: Graph, config: dict, option: Option, pairs: Sequence[tuple[str, str]],
          programs: DagPrograms) -> tuple[dict, int]:
    """The checked plan of ``graph`` with ``option``'s fusion and streaming and the
    QuantizeLinear + stem ``pairs`` (plan_graph, keeping dag row programs in
    ``programs``) at the minimum weight staging, and its needs; the plan also records the
    code shape and the program-size estimate built on it."""
    alignment = config.get("alignment", 16)
    configured = configured_staging(config)
    params = PlanParams(
        algorithm=config.get("algorithm", "auto"),
        scheduler=config.get("scheduler", "auto"),
        alignment=alignment,
        # Work budgets, not seconds: the same model plans the same on every machine.
        exact_params=ExactParams(work_budget=config.get("work_budget", WORK_BUDGET)),
        expansion_budget=config.get("expansion_budget", EXPANSION_BUDGET),
    )
    plan = plan_graph(
        graph,
        params,
        fusion=option.fusion,
        fusion_staging=configured or staging_estimate(graph, alignment),
        fusion_weight_cap=configured // 2 // 16 * 16 if configured else GROUP_WEIGHT_CAP,
        input_mode=option.input,
        output_mode=option.output,
        pairs=pairs,
        programs=programs,
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
    _record_program(plan, shape, config)
    return plan, _needed(plan, staging)


def _record_program(plan: dict, shape: CodeShape, config: dict) -> None:
    """The program record of ``shape`` and its weights record: every tile resident for
    ``weights: resident`` (the fit search counts them), none yet otherwise
    (place_weights decides ``auto`` in the memory the final plan leaves)."""
    plan["program"] = {
        "estimate_bytes": shape.program_bytes, "calls": shape.calls,
        "staged_calls": shape.staged_calls, "decl_lines": shape.decl_lines,
        "functions": sorted(shape.functions),
    }
    mode = weight_mode(config)
    plan["weights"] = weights_record(shape.tiles, mode, choose_resident(
        shape.tiles, mode if mode == "resident" else "stream", 0), "planner.weights")
    fusion = plan.get("fusion", {})
    compute = compute_seconds(fusion.get("model_macs", 0) + fusion.get("extra_macs", 0),
                              shape.rsp_macs)
    plan["cartridge"] = {
        "bytes_per_inference": shape.cartridge_bytes, "reread_bytes": shape.reread_bytes,
        "bytes_per_second": GAME_PAK_BYTES_PER_S, "rsp_macs": shape.rsp_macs,
        "compute_estimate_seconds": compute,
        "cost_seconds": estimated_seconds(compute, shape.cartridge_bytes),
    }
    _charge_streamed_weights_only(plan)


def _charge_streamed_weights_only(plan: dict) -> None:
    """The cartridge record without the reads of the weights the plan keeps resident
    (they are read once, at init, not per inference)."""
    weights, cartridge = plan["weights"], plan["cartridge"]
    every_read = sum(size * reads for size, reads in weights["tiles"])
    cartridge["bytes_per_inference"] -= every_read - weights["streamed_bytes_per_inference"]
    cartridge["cost_seconds"] = estimated_seconds(cartridge["compute_estimate_seconds"],
                                                  cartridge["bytes_per_inference"])


def weight_mode(config: dict) -> str:
    """``planner.weights``: stream (the default), resident or auto."""
    return config.get("weights", DEFAULT_WEIGHT_MODE)


def place_weights(plan: dict, config: dict, staging: int) -> None:
    """``weights: auto``: keep resident the tiles that fit the memory the plan leaves free
    past STAGING_RESERVE_BYTES: all of them when they fit without the ``staging`` bytes of
    weight staging (the code then has none), else, beside the staging, most re-read first
    (planner/resident.py); records the choice and why in ``plan["weights"]``. ``stream``
    and ``resident`` keep their record."""
    record = plan["weights"]
    if record["mode"] != "auto":
        record["why"] = f"planner.weights: {record['mode']}"
        return
    tiles = [tuple(t) for t in record["tiles"]]
    streamed = needed_bytes(plan, program_bytes=plan["program"]["estimate_bytes"],
                            staging_bytes=staging)
    free = config["memory"] - STAGING_RESERVE_BYTES - streamed
    if sum(size for size, _ in tiles) <= free + staging:  # all, with no staging
        chosen, where = list(range(len(tiles))), f"{free + staging} bytes (the staging's too)"
    else:
        chosen, where = choose_resident(tiles, "auto", max(free, 0)), f"{max(free, 0)} bytes"
    plan["weights"] = weights_record(
        tiles, "auto", chosen,
        f"auto: {len(chosen)} of {len(tiles)} tiles resident, most re-read first, in the "
        f"{where} the plan leaves free past the {STAGING_RESERVE_BYTES} byte reserve")
    _charge_streamed_weights_only(plan)


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
    if needed_bytes(plan, program_bytes=shape.program_bytes, staging_bytes=grown) > \
            config["memory"] - STAGING_RESERVE_BYTES:  # the grown code's own estimate
        record["why"] = "the minimum: the grown program would not leave the reserve"
        return base
    record.update(bytes=grown, chosen="grown",
                  why=f"grown from {base} bytes into free memory (reserve "
                      f"{STAGING_RESERVE_BYTES} bytes kept): fewer weight tiles for the "
                      "RSP layers (a tile is an RSP kernel call of its own; an RSP Conv "
                      "packs its im2col once per tile)")
    _record_program(plan, shape, config)
    return grown


def shrink_staging(graph: Graph, plan: dict, config: dict) -> tuple[dict, int]:
    """``plan`` with the weight staging below its minimum that needs the least memory
    (codegen's shrunk_code_shapes: halves of the minimum down to one channel a tile; each
    smaller tile is a kernel call and a ROM read more) and its needs; UserError when none
    needs less than the minimum. ``plan`` itself is left as it is."""
    minimum = plan["staging"]["bytes"]
    shapes = shrunk_code_shapes(graph, plan, where=config["label"],
                                kernels=config.get("kernels", "cpu"))

    def needs(shape: CodeShape) -> int:
        return needed_bytes(plan, program_bytes=shape.program_bytes,
                            staging_bytes=shape.staging_bytes)

    best = min(shapes, key=needs, default=None)
    if best is None or needs(best) >= _needed(plan, minimum):
        raise UserError(f"no weight staging below the minimum of {minimum} bytes needs "
                        "less memory")
    shrunk = {**plan, "staging": {
        "offset": plan["arena_bytes"], "bytes": best.staging_bytes, "minimum_bytes": minimum,
        "chosen": "shrunk",
        "why": f"shrunk from the minimum ({minimum} bytes): smaller weight tiles, more "
               f"kernel calls, {needs(best)} bytes needed in all"}}
    _record_program(shrunk, best, config)
    return shrunk, needs(best)


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
        *fit_search_lines(plan),
        *cartridge_lines(plan),
        *staging_lines(plan),
        *weights_lines(plan),
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


def fit_search_lines(plan: dict) -> list[str]:
    """The options planned before the chosen one and why each was not taken."""
    return [f"fit search: {t['option']}: {t['outcome']}" for t in plan.get("fit_search", [])
            if t["outcome"] != "chosen"]


def cartridge_lines(plan: dict) -> list[str]:
    """The plan's cartridge traffic and the cost the search ranked it by."""
    record = plan.get("cartridge")
    if not record:
        return []
    return [f"cartridge: {record['bytes_per_inference']} bytes read per inference "
            f"({record['reread_bytes']} of them re-read); estimated "
            f"{record['cost_seconds']:.3f} s an inference: compute "
            f"{record['compute_estimate_seconds']:.3f} s + the bytes at "
            f"{record['bytes_per_second'] / 1e6:g} MB/s (docs/platforms.md)"]


def staging_lines(plan: dict) -> list[str]:
    """The weight staging chosen and why (absent from plans made before it was recorded)."""
    staging = plan.get("staging", {})
    if "why" not in staging:
        return []
    return [f"weight staging {staging['bytes']} bytes ({staging['chosen']}; minimum "
            f"{staging['minimum_bytes']}): {staging['why']}"]


def weights_lines(plan: dict) -> list[str]:
    """The weights kept resident and what an inference streams (absent from older plans)."""
    weights = plan.get("weights")
    if not weights:
        return []
    staging = " (no staging area: every tile is resident)" if all_resident(plan) and \
        weights["tiles"] else ""
    return [f"weights {weights['mode']}: {weights['resident_bytes']} bytes resident "
            f"(loaded once), {weights['streamed_bytes_per_inference']} bytes streamed per "
            f"inference{staging}: {weights['why']}"]


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



