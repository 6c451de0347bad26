"""Accuracy of a quantised graph against the fp32 reference: SNR, max error, top-1 agreement."""

from __future__ import annotations

import math

import numpy as np

from dnn64build.ir.graph import Graph
from dnn64build.ir.reference import run
from dnn64build.quant.execute import dequantize_outputs, quantize_inputs, run_int8

# SNR reported for an exact match (JSON has no infinity).
SNR_CAP_DB = 200.0


def accuracy_report(fp32_graph: Graph, int8_graph: Graph,
                    samples: list[dict[str, np.ndarray]]) -> dict[str, dict]:
    """Per graph output: ``snr_db``, ``max_abs_error``, ``top1_agreement`` (or None)."""
    signal = dict.fromkeys(fp32_graph.outputs, 0.0)
    noise = dict.fromkeys(fp32_graph.outputs, 0.0)
    worst = dict.fromkeys(fp32_graph.outputs, 0.0)
    agree = dict.fromkeys(fp32_graph.outputs, 0)
    for sample in samples:
        ref = run(fp32_graph, sample)
        got = dequantize_outputs(int8_graph, run_int8(int8_graph,
                                                      quantize_inputs(int8_graph, sample)))
        for name in fp32_graph.outputs:
            r, q = ref[name].astype(np.float64), got[name].astype(np.float64)
            signal[name] += float(np.sum(r * r))
            noise[name] += float(np.sum((r - q) ** 2))
            worst[name] = max(worst[name], float(np.max(np.abs(r - q), initial=0.0)))
            agree[name] += int(np.argmax(r) == np.argmax(q))
    report = {}
    for name in fp32_graph.outputs:
        classes = _is_class_vector(fp32_graph.tensors[name].shape)
        report[name] = {
            "snr_db": snr_db(signal[name], noise[name]),
            "max_abs_error": worst[name],
            "top1_agreement": agree[name] / len(samples) if classes and samples else None,
        }
    return report


def snr_db(signal: float, noise: float) -> float:
    """10 log10(signal / noise), capped at SNR_CAP_DB (also for zero noise)."""
    if noise <= 0.0:
        return SNR_CAP_DB
    if signal <= 0.0:
        return -SNR_CAP_DB
    return min(SNR_CAP_DB, 10.0 * math.log10(signal / noise))


def _is_class_vector(shape: list[int]) -> bool:
    """A vector of class scores: exactly one dim longer than 1 (e.g. [1, 10])."""
    return sum(1 for d in shape if d > 1) == 1
