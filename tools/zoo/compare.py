"""Run a model in onnxruntime and in the IR reference executor, and compare them.

Shared by the frontend/pass tests and by anyone who needs the ORT-vs-reference oracle.
"""

from __future__ import annotations

import numpy as np
import onnx

from dnn64build.ir.graph import Graph


def random_inputs(graph: Graph, seed: int = 0) -> dict[str, np.ndarray]:
    """Standard-normal inputs of the graph's input shapes."""
    rng = np.random.default_rng(seed)
    return {name: rng.standard_normal(graph.tensors[name].shape).astype(graph.tensors[name].dtype)
            for name in graph.inputs}


def run_onnxruntime(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Outputs of ``model`` in onnxruntime's CPU provider (graph optimisations off)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, inputs), strict=True))


def scaled_error(expected: np.ndarray, actual: np.ndarray) -> float:
    """Max abs difference relative to the output's scale (max |expected|, at least 1e-6)."""
    expected = np.asarray(expected, np.float64)
    actual = np.asarray(actual, np.float64)
    if expected.shape != actual.shape:
        return float("inf")
    if expected.size == 0:
        return 0.0
    scale = max(float(np.abs(expected).max()), 1e-6)
    return float(np.abs(expected - actual).max()) / scale


def import_and_compare(model: onnx.ModelProto, workdir, *, input_shapes=None, seed: int = 0,
                       ) -> tuple[Graph, float]:
    """Import + optimise ``model``, run it in the reference executor and in onnxruntime on
    the same random inputs; returns the optimised graph and the worst scaled error."""
    from pathlib import Path

    from dnn64build.frontend import import_onnx
    from dnn64build.ir import reference, verify
    from dnn64build.passes import optimize

    path = Path(workdir) / "model.onnx"
    onnx.save(model, path)
    graph = optimize(import_onnx(path, input_shapes))
    verify(graph)
    inputs = random_inputs(graph, seed)
    expected = run_onnxruntime(model, inputs)
    actual = reference.run(graph, inputs)
    return graph, max(scaled_error(expected[name], actual[name]) for name in graph.outputs)
