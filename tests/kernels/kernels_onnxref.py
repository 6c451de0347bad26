"""Run one ONNX node in onnxruntime: the independent fp32 reference for the kernels."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

_ELEM = {np.dtype(np.float32): onnx.TensorProto.FLOAT, np.dtype(np.int8): onnx.TensorProto.INT8,
         np.dtype(np.int64): onnx.TensorProto.INT64}


def run_node(
    op: str,
    inputs: Mapping[str, np.ndarray],
    attrs: Mapping[str, object] | None = None,
    initializers: Mapping[str, np.ndarray] | None = None,
    input_order: list[str] | None = None,
    out_dtype: str = "float32",
    opset: int = 17,
) -> np.ndarray:
    """One node ``op`` reading ``input_order`` (graph inputs and initializers, '' = absent)."""
    initializers = dict(initializers or {})
    names = input_order or [*inputs, *initializers]
    graph_inputs = [
        helper.make_tensor_value_info(n, _ELEM[a.dtype], a.shape) for n, a in inputs.items()]
    output = helper.make_tensor_value_info("y", _ELEM[np.dtype(out_dtype)], None)
    node = helper.make_node(op, names, ["y"], **dict(attrs or {}))
    graph = helper.make_graph(
        [node], "one_node", graph_inputs, [output],
        initializer=[numpy_helper.from_array(a, n) for n, a in initializers.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    return session.run(None, dict(inputs))[0]


def assert_close_to_scale(actual: np.ndarray, expected: np.ndarray, rtol: float = 1e-4) -> None:
    """Max error within ``rtol`` of the output's scale (its largest magnitude, at least 1e-6)."""
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    scale = max(float(np.max(np.abs(expected))) if expected.size else 0.0, 1e-6)
    err = float(np.max(np.abs(actual.astype(np.float64) - expected))) if expected.size else 0.0
    assert err <= rtol * scale, f"max error {err:.3g} > {rtol} * scale {scale:.3g}"
