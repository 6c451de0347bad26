"""Operators the importer rewrites (frontend/rewrite.py) match onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

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
