"""int64 graph inputs that only index run as int32 (frontend/indices.py)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnn64build.codegen.model import generate_model
from dnn64build.errors import UserError
from dnn64build.frontend import import_onnx
from dnn64build.planner.dagplan import PlanParams
from dnn64build.planner.graph_plan import plan_graph


def _model(nodes: list[onnx.NodeProto], path) -> str:
    graph = helper.make_graph(
        nodes, "ids", [helper.make_tensor_value_info("ids", TensorProto.INT64, [3])],
        [helper.make_tensor_value_info(nodes[-1].output[0], TensorProto.FLOAT, [3, 2])],
        [numpy_helper.from_array(np.ones([4, 2], np.float32), "table"),
         numpy_helper.from_array(np.ones([3], np.int64), "one")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                                ir_version=8), path)
    return str(path)


def test_int64_indices_input_is_int32(tmp_path) -> None:
    graph = import_onnx(_model([helper.make_node("Gather", ["table", "ids"], ["y"])],
                               tmp_path / "m.onnx"))
    assert graph.tensors["ids"].dtype == "int32"
    assert graph.tensors["y"].dtype == "float32"


def test_int64_input_computed_on_keeps_int64(tmp_path) -> None:
    path = _model([helper.make_node("Add", ["ids", "one"], ["s"]),
                   helper.make_node("Gather", ["table", "ids"], ["g"]),
                   helper.make_node("Gather", ["g", "s"], ["y"])], tmp_path / "m.onnx")
    graph = import_onnx(path)
    assert graph.tensors["ids"].dtype == "int64"  # code generation refuses it, naming the node
    with pytest.raises(UserError, match=r"node '.*' \(.*\).*int64"):
        generate_model(graph, plan_graph(graph, PlanParams(timings=False)), symbol="m")
