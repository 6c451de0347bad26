"""``quantize_graph``: fp32 IR -> int8 IR (docs/quant-ir.md) plus an accuracy report.

Steps: choose the int8 nodes, find which tensors need a calibrated range, run the fp32
reference executor over the calibration samples to get them, derive every tensor's
QParams, rewrite the graph with integer parameters, then measure it against fp32.
Deterministic: the same graph and samples give the same output.
"""

from __future__ import annotations

import warnings

from dnn64build.errors import UserError
from dnn64build.ir.graph import Graph
from dnn64build.ir.verify import verify
from dnn64build.quant.calibrate import (
    METHODS,
    Sample,
    collect_ranges,
    fit_samples,
    refuse_all_zero,
    synthetic_samples,
)
from dnn64build.quant.plan import choose_int8, needs_pre_activation, quant_table
from dnn64build.quant.qparams import QParams, activation_qparams
from dnn64build.quant.report import accuracy_report
from dnn64build.quant.rewrite import Rewriter
from dnn64build.quant.shared_scales import DISPARATE_SCALES, float_output_concats

IO_TYPES = ("float32", "int8")  # the element type of the graph's inputs and outputs


def quantize_graph(
    graph: Graph,
    calibration_inputs: list[Sample] | None,
    *,
    method: str = "minmax",
    percentile: float = 99.99,
    synthetic: bool = False,
    fp32_nodes: tuple[str, ...] | list[str] = (),
    eval_inputs: list[Sample] | None = None,
    io: str = "float32",
) -> tuple[Graph, dict]:
    """The int8 version of ``graph`` and its report (see docs/quant-ir.md, section 4).

    ``calibration_inputs``: samples (input name -> array of the input's shape, or of its
    shape without the batch dim); None needs ``synthetic=True`` unless the graph's
    quantisation is fully fixed by a pre-quantised model. ``eval_inputs``: a held-out set
    for the report (default: the calibration samples). ``io``: "float32" keeps the graph
    inputs and outputs float32; "int8" makes them int8 tensors with their quantisation.
    """
    if method not in METHODS:
        raise UserError(f"unknown calibration method {method!r}",
                        hint=f"use one of {', '.join(METHODS)}")
    if not 0.0 < percentile <= 100.0:
        raise UserError(f"percentile must be in (0, 100], got {percentile}")
    unknown = sorted(set(fp32_nodes) - {node.name for node in graph.nodes})
    if unknown:
        raise UserError(f"fp32_nodes names unknown node(s) {unknown}",
                        hint="use node names of the imported graph (see the import report)")
    if io not in IO_TYPES:
        raise UserError(f"unknown io type {io!r}", hint=f"use one of {', '.join(IO_TYPES)}")
    boundary = tuple(name for name in graph.inputs + graph.outputs
                     if graph.tensors[name].dtype == "float32") if io == "int8" else ()
    int8_nodes, kept = choose_int8(graph, set(fp32_nodes))
    needed: set[str] = set()
    quant_table(graph, int8_nodes, lambda key: needed.add(key) or QParams(1.0, 0), boundary)

    notes: list[str] = []
    if calibration_inputs is not None:
        if not calibration_inputs:
            raise UserError("the calibration set is empty")
        samples = fit_samples(graph, calibration_inputs)
        refuse_all_zero(graph, samples)
    elif synthetic:
        samples = synthetic_samples(graph)
        notes.append("calibrated on synthetic random inputs: int8 accuracy on real data "
                     "may be poor; give calibration data")
        warnings.warn(notes[-1], stacklevel=2)
    elif needed:
        raise UserError(
            f"quantising {graph.name!r} needs calibration data ({len(needed)} tensor ranges "
            "are unknown)",
            hint="give representative inputs (calibration: samples.npz keyed by input names, "
                 "first axis = samples), or set synthetic: true to calibrate on random inputs")
    else:
        samples = []

    pre_nodes = {node.name for node in graph.nodes
                 if node.name in int8_nodes and needs_pre_activation(node)}
    ranges = (collect_ranges(graph, samples, needed, pre_nodes, method, percentile)
              if needed else {})

    def calibrated(key: str) -> QParams:
        low, high = ranges.get(key, (0.0, 0.0))  # never seen a finite value: all zero
        return activation_qparams(low, high)

    if io == "float32":
        own = quant_table(graph, int8_nodes, calibrated, boundary, share=False)
        for name in float_output_concats(graph, int8_nodes, own):
            int8_nodes.discard(name)
            kept.append({"node": name, "op": "Concat",
                         "reason": f"output Concat of inputs whose ranges differ more than "
                                   f"{DISPARATE_SCALES:g}x: each keeps its own scale"})
    table = quant_table(graph, int8_nodes, calibrated, boundary)
    quantized = Rewriter(graph, int8_nodes, table, io_int8=io == "int8").run()
    verify(quantized)

    evaluation = fit_samples(graph, eval_inputs, "evaluation") if eval_inputs else samples
    report = {
        "method": method,
        "io": io,
        "percentile": percentile,
        "synthetic": calibration_inputs is None and synthetic,
        "calibration_samples": len(samples),
        "evaluation": "held-out" if eval_inputs else "calibration",
        "int8_nodes": sum(1 for node in quantized.nodes if "int8" in node.attrs
                          and node.op not in ("QuantizeLinear", "DequantizeLinear")),
        "fp32_nodes": kept,
        "warnings": notes,
        "outputs": accuracy_report(graph, quantized, evaluation) if evaluation else {},
    }
    return quantized, report

