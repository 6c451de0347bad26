"""Operators the importer rewrites (frontend/rewrite.py) match onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnn64build.errors import UserError
from tools.zoo.compare import import_and_compare


@pytest.mark.parametrize("terms", [1, 2, 4])
def test_sum_is_a_chain_of_adds(terms: int, tmp_path) -> None:
    rng = np.random.default_rng(terms)
    shapes = [[2, 3, 4], [3, 1], [1, 4], [2, 1, 1]][:terms]
    names = [f"t{k}" for k in range(terms)]
    graph = helper.make_graph(
        [helper.make_node("Sum", names, ["s"]), helper.make_node("Relu", ["s"], ["y"])], "sum",
        [helper.make_tensor_value_info("t0", TensorProto.FLOAT, shapes[0])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["a", "b", "c"])],
        [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
         for n, s in zip(names[1:], shapes[1:], strict=True)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    imported, error = import_and_compare(model, tmp_path)
    assert error <= 1e-6
    ops = [node.op for node in imported.nodes]
    assert ops == ["Add"] * (terms - 1) + ["Relu"] or (terms == 1 and ops == ["Relu"])


@pytest.mark.parametrize(("trans_a", "trans_b", "alpha", "beta", "c_shape"), [
    (0, 0, 1.0, 1.0, None), (1, 0, 0.5, 1.0, [4]), (0, 1, 1.0, 2.0, [3, 4]),
    (1, 1, -1.5, 0.0, [3, 1]),
])
def test_gemm_of_two_activations_is_a_matmul(trans_a: int, trans_b: int, alpha: float,
                                              beta: float, c_shape: list[int] | None,
                                              tmp_path) -> None:
    a_shape = [5, 3] if trans_a else [3, 5]
    b_shape = [4, 5] if trans_b else [5, 4]
    inputs = [helper.make_tensor_value_info("a", TensorProto.FLOAT, a_shape),
              helper.make_tensor_value_info("b", TensorProto.FLOAT, b_shape)]
    if c_shape:
        inputs.append(helper.make_tensor_value_info("c", TensorProto.FLOAT, c_shape))
    node = helper.make_node("Gemm", ["a", "b", "c"] if c_shape else ["a", "b"], ["y"],
                            transA=trans_a, transB=trans_b, alpha=alpha, beta=beta)
    graph = helper.make_graph([node], "gemm", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    imported, error = import_and_compare(model, tmp_path)
    assert error <= 1e-6
    ops = [node.op for node in imported.nodes]
    assert "MatMul" in ops and "Gemm" not in ops
    assert ops.count("Transpose") == trans_a + trans_b


def test_gemm_with_constant_b_and_c_stays_a_gemm(tmp_path) -> None:
    rng = np.random.default_rng(0)
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["a", "w", "c"], ["y"], transB=1)], "gemm",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(rng.standard_normal([4, 5]).astype(np.float32), "w"),
         numpy_helper.from_array(rng.standard_normal([4]).astype(np.float32), "c")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    imported, error = import_and_compare(model, tmp_path)
    assert error <= 1e-6
    assert [node.op for node in imported.nodes] == ["Gemm"]


@pytest.mark.parametrize("shape", [[2, 3, 5, 4], [1, 4, 7]])
def test_instance_normalization(shape: list[int], tmp_path) -> None:
    rng = np.random.default_rng(len(shape))
    channels = shape[1]
    graph = helper.make_graph(
        [helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=1e-3)],
        "instance_norm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
        [numpy_helper.from_array(rng.standard_normal([channels]).astype(np.float32), "s"),
         numpy_helper.from_array(rng.standard_normal([channels]).astype(np.float32), "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    imported, error = import_and_compare(model, tmp_path)
    assert error <= 1e-5
    # the BatchNormalization's scale and bias may become a Mul and an Add (passes)
    assert imported.nodes[0].op == "LayerNormalization"
    assert imported.nodes[0].attrs["axis"] == 2


def test_instance_normalization_with_a_computed_scale_is_refused(tmp_path) -> None:
    graph = helper.make_graph(
        [helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], name="norm")],
        "instance_norm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3]),
                          helper.make_tensor_value_info("s", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3, 3])],
        [numpy_helper.from_array(np.zeros([2], np.float32), "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    with pytest.raises(UserError, match=r"node 'norm' \(op InstanceNormalization.*scale or bias "
                       "that is not constant"):
        import_and_compare(model, tmp_path)
