"""The int8 unary element-wise ops (issue 22): each is a 256-entry table; every entry is the
op's real output, computed by onnxruntime, quantised (dnn64_kernels.h states the rule)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnn64build.frontend import import_onnx
from dnn64build.passes import optimize
from dnn64build.quant import quantize_graph
from tests.kernels.kernels_onnxref import run_node

# (ONNX op, attrs, constant second input or None, opset)
OPS = [
    ("Neg", {}, None, 17), ("Abs", {}, None, 17), ("Exp", {}, None, 17),
    ("Log", {}, None, 17), ("Sqrt", {}, None, 17), ("Reciprocal", {}, None, 17),
    ("Pow", {}, np.float32(2.0), 17), ("Pow", {}, np.float32(0.5), 17),
    ("Sign", {}, None, 17), ("Erf", {}, None, 17), ("Gelu", {}, None, 20),
    ("Elu", {"alpha": 0.5}, None, 17), ("Selu", {}, None, 17), ("Celu", {}, None, 17),
    ("ThresholdedRelu", {"alpha": 0.2}, None, 17), ("Softplus", {}, None, 17),
    ("Softsign", {}, None, 17), ("Mish", {}, None, 18), ("Shrink", {"lambd": 0.4}, None, 17),
    ("PRelu", {}, np.array([0.3], np.float32), 17),  # one slope for all: a table too
]


def _quantized(op: str, attrs: dict, exponent: np.ndarray | None, opset: int, tmp_path: Path):
    inputs, inits = ["x"], []
    if exponent is not None:
        inputs.append("e")
        inits.append(numpy_helper.from_array(np.asarray(exponent), "e"))
    graph = helper.make_graph(
        [helper.make_node(op, inputs, ["y"], name="op", **attrs)], "t",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              ir_version=10)
    onnx.save(model, tmp_path / "m.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # synthetic calibration warns
        quantized, _ = quantize_graph(optimize(import_onnx(tmp_path / "m.onnx")), None,
                                      synthetic=True)
    return quantized, next(n for n in quantized.nodes if n.op == op)


@pytest.mark.parametrize("op,attrs,exponent,opset", OPS, ids=lambda v: str(v))
def test_unary_table_is_onnxruntime_quantised(op, attrs, exponent, opset, tmp_path) -> None:
    graph, node = _quantized(op, attrs, exponent, opset, tmp_path)
    assert node.inputs == [node.inputs[0]]  # Pow's exponent (PRelu's slope) is in the table
    qin, qout = (graph.tensors[t].quant for t in (node.inputs[0], node.outputs[0]))
    x = ((np.arange(-128, 128) - qin["zero_point"]) * qin["scale"]).astype(np.float32)
    inits = {} if exponent is None else {"e": np.asarray(exponent)}  # Pow's or PRelu's
    real = run_node(op, {"x": x}, attrs, inits, opset=opset).astype(np.float64)
    steps = np.nan_to_num(real / qout["scale"], nan=0.0)  # NaN: the real 0
    want = np.clip(np.sign(steps) * np.floor(np.abs(steps) + 0.5) + qout["zero_point"],
                   -128, 127)
    lut = np.asarray(node.attrs["int8"]["lut"])
    # float32 (onnxruntime) and float64 (the table) may round a value at a half step apart
    assert np.max(np.abs(lut - want)) <= 1
    assert np.count_nonzero(lut != want) <= 3
