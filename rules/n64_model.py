"""``n64_model``: one ONNX model compiled for the N64, packed into a ROM of its own.

Actions, each cached on its own: import -> quantize -> plan -> codegen ->
compile (per toolchain) -> pack. ``dnn64build build`` builds the ROM (or the
host program for ``toolchain: host``); ``dnn64build plan`` stops after plan.
"""

from __future__ import annotations

import posixpath

from dnn64build.errors import UserError
from dnn64build.rules_api import Attr, Rule, RuleContext, enum_attr, file_attr, size_attr

from ._model import (
    HOST,
    HOST_MEMORY_MAX,
    ModelInfo,
    c_symbol,
    check_memory,
    default_kernels,
    resolve_toolchain,
)
from ._rom import ROM_ATTRS, declare_rom

# The compiler's choices, restated because the manifest layer does not import the compiler
# (its import would slow every build's start); tests/planner/test_manifest_choices.py and
# tests/codegen/test_codegen_rsp.py keep them equal to the compiler's own.
ALGORITHMS = ["auto", "greedy_by_size", "greedy_by_conflicts", "hill_climb", "best_fit", "exact"]
SCHEDULERS = ["auto", "graph"]  # not the planner's "search": see the test
FUSION_MODES = ["none", "stream", "patch", "dag", "auto"]
INPUT_MODES = ["whole", "stream", "auto"]
OUTPUT_MODES = ["whole", "stream", "auto"]
WEIGHT_MODES = ["stream", "resident", "auto"]
CALIBRATION_METHODS = ["minmax", "percentile", "mse"]
KERNELS = ["auto", "cpu", "rsp"]  # codegen's KERNEL_CHOICES
ALIGNMENTS = [2**i for i in range(13)]  # the planner aligns buffers to a power of two
STREAM_FUSION = ("dag", "auto")  # a streamed input or output flows through a dag group

_SHAPE = {"type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 1}


def _implementation(ctx: RuleContext) -> ModelInfo:
    attrs = ctx.attrs
    label = str(ctx.label)
    toolchain = resolve_toolchain(ctx, attrs["toolchain"])
    imported = ctx.action(
        "import",
        inputs={"onnx": attrs["src"]},
        outputs={"graph": "import/graph.json", "weights": "import/weights.npz"},
        config={"inputs": attrs.get("inputs", {}), "label": label},
        progress=label,
    )
    quantize = dict(attrs["quantize"])
    if quantize.get("io", "float32") != "float32" and quantize["mode"] != "int8":
        raise UserError(f"target {label}: io: {quantize['io']} needs quantize mode int8",
                        where=ctx.where_of("quantize"),
                        hint="set quantize: {mode: int8, io: int8}, or drop io")
    quantize_inputs = dict(imported)
    for data in ("calibration", "evaluation"):
        if data in quantize:
            quantize_inputs[data] = ctx.source(quantize.pop(data), attr=f"quantize.{data}")
    quantized = ctx.action(
        "quantize",
        inputs=quantize_inputs,
        outputs={
            "graph": "quantize/graph.json",
            "weights": "quantize/weights.npz",
            "report": "quantize/report.json",
        },
        config={**quantize, "label": label},
        progress=label,
    )
    memory = attrs["memory"]
    check_memory(ctx, memory, toolchain)
    _check_planner(ctx, attrs["planner"], memory)
    kernels = attrs.get("kernels", default_kernels(toolchain))
    plan = ctx.action(
        "plan",
        inputs={"graph": quantized["graph"], "weights": quantized["weights"]},
        outputs={"plan": "plan/plan.json", "report": "plan/report.txt",
                 "timeline": "plan/timeline.svg"},
        # kernels: fused Convs run on the CPU, so RSP kernels change what `auto` fuses;
        # toolchain: only the one running the RSP kernels grows the weight staging
        config={**attrs["planner"], "memory": memory, "label": label,
                "kernels": kernels, "toolchain": toolchain},
        progress=label,
    )
    ctx.offer_plan(plan=plan["plan"], report=plan["report"], timeline=plan["timeline"])
    symbol = c_symbol(ctx.label)
    code = ctx.action(
        "codegen",
        inputs={"graph": quantized["graph"], "weights": quantized["weights"], "plan": plan["plan"]},
        outputs={"source": f"codegen/{symbol}.c", "header": f"codegen/{symbol}.h",
                 "meta": "codegen/meta.json", "weights_big": "codegen/weights.be.bin",
                 "weights_little": "codegen/weights.le.bin"},
        config={"symbol": symbol, "label": label, "kernels": kernels},
        progress=label,
    )
    objects = {
        tc: ctx.compile(
            tc, code["source"], f"compile/{tc}/{symbol}.o",
            include_dirs=[posixpath.dirname(code["source"])], headers=[code["header"]],
            progress=f"{label} ({tc})",
        )
        for tc in sorted({toolchain, HOST})
    }
    model = ModelInfo(
        label=ctx.label,
        symbol=symbol,
        plan=plan["plan"],
        source=code["source"],
        header=code["header"],
        meta=code["meta"],
        ir=(quantized["graph"], quantized["weights"]),
        objects=objects,
        weights={"big": code["weights_big"], "little": code["weights_little"]},
        memory=memory,
    )
    declare_rom(ctx, [model], toolchain=toolchain)
    if "test" in attrs:
        test = attrs["test"]
        ctx.offer_test(
            inputs=ctx.source(test["inputs"], attr="test.inputs"),
            outputs=ctx.source(test["outputs"], attr="test.outputs") if "outputs" in test
            else None,
            labels=test.get("labels"),  # an array name, not a file
        )
    return model


def _check_planner(ctx: RuleContext, planner: dict, memory: int) -> None:
    """Planner settings that contradict each other or the memory, refused before any
    action runs (the plan stage would find them after import and quantize)."""
    fusion = planner.get("fusion", "auto")
    for side in ("input", "output"):
        if planner.get(side) == "stream" and fusion not in STREAM_FUSION:
            raise UserError(
                f"target {ctx.label}: planner {side}: stream needs fusion dag or auto, not "
                f"{fusion!r}: the {side} is streamed through a dag group",
                where=ctx.where_of("planner"),
                hint=f"use planner: {{fusion: dag, {side}: stream}}, or {side}: whole")
    staging = planner.get("staging_bytes", "auto")
    if staging != "auto" and staging >= memory:
        raise UserError(
            f"target {ctx.label}: planner staging_bytes {staging} is not less than the "
            f"target's memory ({memory} bytes)", where=ctx.where_of("planner"),
            hint="leave staging_bytes out (auto), or give a part of memory")


RULE = Rule(
    kind="n64_model",
    doc="A neural network (ONNX) compiled for the N64, with a ROM that runs it.",
    implementation=_implementation,
    attrs={
        "src": file_attr("the ONNX file, relative to the package", required=True),
        "inputs": Attr(
            {"type": "object", "additionalProperties": _SHAPE},
            "input name -> static shape; binds dynamic dimensions such as the batch",
        ),
        "quantize": Attr(
            {
                "type": "object",
                "properties": {
                    "mode": {"enum": ["none", "int8"]},
                    "calibration": {
                        "type": "string",
                        "description": ".npz/.npy of representative inputs, package-relative",
                    },
                    "evaluation": {
                        "type": "string",
                        "description": "held-out inputs (.npz/.npy) for the accuracy report",
                    },
                    "method": {"enum": CALIBRATION_METHODS},
                    "percentile": {"type": "number", "exclusiveMinimum": 50, "maximum": 100},
                    "synthetic": {
                        "type": "boolean",
                        "description": "calibrate on random inputs (warns): for trying things",
                    },
                    "fp32_nodes": {"type": "array", "items": {"type": "string"}},
                    "io": {
                        "enum": ["float32", "int8"],
                        "description": "element type of the graph inputs and outputs; int8 "
                                       "exposes their scale and zero point (mode int8 only)",
                    },
                },
                "required": ["mode"],
                "additionalProperties": False,
            },
            "quantisation: none keeps fp32; int8 needs calibration data",
            default={"mode": "none"},
            workspace_default=True,
        ),
        "planner": Attr(
            {
                "type": "object",
                "properties": {
                    "algorithm": {"enum": ALGORITHMS},
                    "scheduler": {"enum": SCHEDULERS},
                    "alignment": {"type": "integer", "enum": ALIGNMENTS,
                                  "description": "bytes: a power of two, 1 to 4096"},
                    "work_budget": {
                        "type": "integer", "minimum": 0,
                        "description": "search steps the exact allocator may take (deterministic)",
                    },
                    "expansion_budget": {
                        "type": "integer", "minimum": 0,
                        "description": "search steps the scheduler may take (deterministic)",
                    },
                    "staging_bytes": {
                        "oneOf": [{"type": "integer", "minimum": 1024}, {"const": "auto"}],
                        "description": "weight staging area (two halves); default auto: "
                                       "the minimum, grown into free memory where that "
                                       "cuts RSP layers into fewer tiles, shrunk when "
                                       "only that fits",
                    },
                    "fusion": {
                        "enum": FUSION_MODES,
                        "description": "fused groups below the operator bound "
                                       "(docs/planner.md); default auto",
                    },
                    "input": {
                        "enum": INPUT_MODES,
                        "description": "stream: the graph input is read row by row into "
                                       "the first dag group, never whole in the arena; "
                                       "default auto (only when nothing else fits)",
                    },
                    "weights": {
                        "enum": WEIGHT_MODES,
                        "description": "resident: every weight loaded once into RDRAM, "
                                       "no cartridge reads per inference; auto: resident "
                                       "what fits the memory the plan leaves, most "
                                       "re-read first, the rest streamed; default stream: "
                                       "read from the cartridge by every inference",
                    },
                    "output": {
                        "enum": OUTPUT_MODES,
                        "description": "stream: the graph output is handed out row by row "
                                       "by the last dag group, never whole in the arena; "
                                       "default auto (only when nothing else fits)",
                    },
                },
                "additionalProperties": False,
            },
            "memory planner: offset allocation algorithm and execution-order scheduler",
            default={"algorithm": "auto", "scheduler": "auto"},
            workspace_default=True,
        ),
        "memory": size_attr(
            "target RDRAM: 4MiB (stock N64), 8MiB (Expansion Pak) or a byte count (at most "
            "8MiB; 2GiB with toolchain: host)", minimum=65536, maximum=HOST_MEMORY_MAX,
            default="4MiB", workspace_default=True),
        "kernels": enum_attr(
            KERNELS,
            "where int8 Conv layers run on an N64: cpu; rsp (the vector unit, wherever an "
            "RSP kernel exists); auto (the RSP where it pays). Default: auto for toolchain "
            "bare, cpu for libdragon and host (host builds always use the CPU)",
            workspace_default=True,
        ),
        **ROM_ATTRS,
        "test": Attr(
            {
                "type": "object",
                "properties": {
                    "inputs": {"type": "string", "description": ".npz keyed by input name"},
                    "outputs": {"type": "string", "description": "expected outputs (.npz)"},
                    "labels": {
                        "type": "string",
                        "description": "name of an array of class labels in the inputs file",
                    },
                },
                "required": ["inputs"],
                "additionalProperties": False,
            },
            "data for `dnn64build test`: inputs, and optionally expected outputs or labels",
        ),
    },
)
