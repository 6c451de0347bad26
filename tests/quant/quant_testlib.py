"""Helpers shared by the quant tests: ONNX models to optimised IR, one-node int8 graphs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from dnn64build.frontend import import_onnx
from dnn64build.ir.graph import Graph, Node, Tensor
from dnn64build.passes import optimize


def make_model(nodes: list, inputs: dict[str, list[int]], outputs: dict[str, list[int]],
               inits: dict[str, np.ndarray]) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "test",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs.items()],
        [numpy_helper.from_array(np.asarray(v), n) for n, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)


def to_graph(model: onnx.ModelProto, tmp_path: Path) -> Graph:
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    return optimize(import_onnx(path))


def int8_graph(op: str, inputs: dict[str, tuple[list[int], dict]], out_shape: list[int],
               attrs: dict, constants: dict[str, np.ndarray] | None = None,
               out_quant: dict | None = None) -> Graph:
    """A graph of one int8 node ``op`` reading int8 inputs (name -> (shape, quant)) and
    constants, writing int8 ``y`` (a graph output, as run_int8 allows)."""
    constants = constants or {}
    tensors = {name: Tensor(shape, "int8", "input", quant)
               for name, (shape, quant) in inputs.items()}
    tensors["y"] = Tensor(out_shape, "int8", "output", out_quant)
    graph = Graph("t", list(inputs), ["y"], tensors,
                  [Node("n", op, [*inputs, *constants], ["y"], attrs)])
    for name, value in constants.items():
        graph.add_constant(name, value)
    return graph
