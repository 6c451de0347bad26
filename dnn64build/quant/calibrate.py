"""Calibration: read sample files, make synthetic samples, collect activation ranges.

Ranges come from running the fp32 reference executor over the samples. Keys are tensor
names, plus ``"<node>#pre"`` for the pre-activation value of a node with a fused
activation (the int8 output stage requantizes into that range before the lookup table).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from dnn64build.array_files import numeric, read_npy, read_npz
from dnn64build.errors import UserError
from dnn64build.ir.graph import Graph, Node
from dnn64build.ir.reference import run_node

METHODS = ("minmax", "percentile", "mse")
HISTOGRAM_BINS = 2048
MSE_CANDIDATES = 64

Sample = dict[str, np.ndarray]


def pre_key(node: Node) -> str:
    return f"{node.name}#pre"


def load_calibration(path: str | os.PathLike, input_names: list[str], *,
                     where: str | None = None) -> list[Sample]:
    """Samples from ``.npz`` (one array per input name, first axis = samples) or ``.npy``
    (a single-input model). Each sample maps input name -> that sample's array. ``where``
    names the file in errors (default: ``path``)."""
    where = where or str(path)
    path = Path(path)
    if path.suffix == ".npz":
        archive = read_npz(path, where=where)
        missing = [name for name in input_names if name not in archive]
        if missing:
            raise UserError(
                f"calibration file has no array for input(s) {missing}; it holds "
                f"{sorted(archive)}", where=where,
                hint="save one array per model input, keyed by the input's name")
        arrays = {name: archive[name] for name in input_names}
    elif path.suffix == ".npy":
        if len(input_names) != 1:
            raise UserError(f"a .npy calibration file holds one input, the model has "
                            f"{len(input_names)}", where=where,
                            hint="use an .npz keyed by input names")
        arrays = {input_names[0]: read_npy(path, where=where)}
    else:
        raise UserError("calibration data must be a .npz or .npy file", where=where)
    counts = {name: (a.shape[0] if a.ndim else 0) for name, a in arrays.items()}
    if len(set(counts.values())) != 1 or 0 in counts.values():
        raise UserError(f"calibration arrays must share a non-zero sample count on axis 0, "
                        f"got {counts}", where=where)
    count = next(iter(counts.values()))
    return [{name: a[i] for name, a in arrays.items()} for i in range(count)]


def fit_samples(graph: Graph, samples: list[Sample], where: str = "calibration") -> list[Sample]:
    """Samples reshaped to the graph's input shapes (a sample may lack the batch dim)."""
    fitted = []
    for index, sample in enumerate(samples):
        entry = {}
        for name in graph.inputs:
            tensor = graph.tensors[name]
            if name not in sample:
                raise UserError(f"sample {index} has no value for input {name!r}", where=where)
            value = numeric(np.asarray(sample[name]), name, where=where)
            if value.size != int(np.prod(tensor.shape)):
                raise UserError(f"sample {index}, input {name!r}: shape {list(value.shape)} "
                                f"does not fit the model's {tensor.shape}", where=where)
            if not np.all(np.isfinite(value)):  # a NaN or inf range makes no quantisation
                raise UserError(f"sample {index}, input {name!r}: not finite (holds NaN or "
                                "infinity)", where=where, hint="remove or fix that sample")
            entry[name] = value.reshape(tensor.shape).astype(tensor.dtype)
        fitted.append(entry)
    return fitted


def refuse_all_zero(graph: Graph, samples: list[Sample], where: str = "calibration") -> None:
    """An input that is zero in every calibration sample calibrates the model for nothing
    (its ranges come from zeros and biases alone: 88% output error was seen on real data)."""
    for name in graph.inputs:
        if not any(np.any(sample[name]) for sample in samples):
            raise UserError(f"input {name!r} is zero in all {len(samples)} sample(s)",
                            where=where, hint="calibrate on representative inputs: data "
                            "like what the model will see")


def synthetic_samples(graph: Graph, count: int = 8, seed: int = 0) -> list[Sample]:
    """Deterministic standard-normal inputs, for a model shipped without calibration data."""
    rng = np.random.default_rng(seed)
    return [{name: rng.standard_normal(graph.tensors[name].shape).astype(np.float32)
             for name in graph.inputs} for _ in range(count)]


def _trace(graph: Graph, sample: Sample, pre_nodes: set[str]) -> Iterable[tuple[str, np.ndarray]]:
    """(key, value) of every graph input, node output and requested pre-activation."""
    values: dict[str, np.ndarray] = dict(graph.constants)
    for name in graph.inputs:
        values[name] = sample[name]
        yield name, sample[name]
    for node in graph.nodes:
        if node.name in pre_nodes:
            bare = Node(node.name, node.op, node.inputs, node.outputs,
                        {k: v for k, v in node.attrs.items()
                         if k not in ("activation", "activation_params")})
            yield pre_key(node), run_node(graph, bare, values)[0]
        for name, value in zip(node.outputs, run_node(graph, node, values), strict=False):
            values[name] = value
            yield name, value


def collect_ranges(graph: Graph, samples: list[Sample], keys: set[str], pre_nodes: set[str],
                   method: str = "minmax", percentile: float = 99.99
                   ) -> dict[str, tuple[float, float]]:
    """The (low, high) range of each key over all samples, by ``method``."""
    extremes: dict[str, tuple[float, float]] = {}
    for sample in samples:
        for key, value in _trace(graph, sample, pre_nodes):
            if key in keys and value.size and np.issubdtype(value.dtype, np.floating):
                low, high = float(np.nanmin(value)), float(np.nanmax(value))
                old = extremes.get(key, (low, high))
                extremes[key] = (min(old[0], low), max(old[1], high))
    if method == "minmax":
        return extremes
    histograms = {key: np.zeros(HISTOGRAM_BINS) for key in extremes}
    for sample in samples:
        for key, value in _trace(graph, sample, pre_nodes):
            if key in histograms:
                low, high = extremes[key]
                histograms[key] += np.histogram(value, HISTOGRAM_BINS,
                                                (low, max(high, low + 1e-30)))[0]
    pick = _percentile_range if method == "percentile" else _mse_range
    return {key: pick(histograms[key], *extremes[key], percentile) for key in extremes}


def _percentile_range(hist: np.ndarray, low: float, high: float, percentile: float
                      ) -> tuple[float, float]:
    edges = np.linspace(low, high, HISTOGRAM_BINS + 1)
    cdf = np.cumsum(hist) / max(hist.sum(), 1.0)
    tail = 1.0 - percentile / 100.0
    lo_bin = int(np.searchsorted(cdf, tail, side="right"))
    hi_bin = int(np.searchsorted(cdf, 1.0 - tail, side="left"))
    return float(edges[min(lo_bin, HISTOGRAM_BINS)]), float(edges[min(hi_bin + 1,
                                                                       HISTOGRAM_BINS)])


def _mse_range(hist: np.ndarray, low: float, high: float, percentile: float
               ) -> tuple[float, float]:
    """The shrink of [min(low, 0), max(high, 0)] towards 0 with the least expected error."""
    centers = (np.linspace(low, high, HISTOGRAM_BINS + 1)[:-1]
               + (high - low) / (2 * HISTOGRAM_BINS))
    low, high = min(low, 0.0), max(high, 0.0)
    best, best_error = (low, high), np.inf
    for fraction in np.linspace(1.0, 1.0 / MSE_CANDIDATES, MSE_CANDIDATES):
        lo, hi = low * fraction, high * fraction
        step = (hi - lo) / 255.0
        clipped = np.clip(centers, lo, hi)
        error = np.sum(hist * ((clipped - centers) ** 2 + step * step / 12.0))
        if error < best_error:
            best, best_error = (float(lo), float(hi)), error
    return best
