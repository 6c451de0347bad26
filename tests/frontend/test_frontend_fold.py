"""Constant folding at import: every node computed from constants alone is evaluated once
(by the IR reference kernels or onnx.reference) and becomes a constant, whatever its op;
outputs are checked against onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from dnn64build.codegen.model import generate_model
from dnn64build.frontend import import_onnx
from dnn64build.passes import optimize
from dnn64build.planner.dagplan import PlanParams
from dnn64build.planner.graph_plan import plan_graph
from tests.passes.test_passes import model_of, w
from tools.zoo.builder import NetBuilder
from tools.zoo.compare import import_and_compare


def i64(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def ops(graph) -> list[str]:
    return [node.op for node in graph.nodes]


def test_channel_shuffle_shape_subgraph_folds(tmp_path) -> None:
    b = NetBuilder("shuffle")
    y = b.channel_shuffle(b.input("x", [1, 8, 3, 3]), 4)
    model = b.build({y: [1, 8, 3, 3]})
    assert {"Shape", "Gather", "Div", "Unsqueeze", "Concat"} <= {
        n.op_type for n in model.graph.node}
    graph, error = import_and_compare(model, tmp_path)
    assert error <= 1e-6
    assert ops(graph) == ["Reshape", "Transpose", "Reshape"]
    first, _, last = graph.nodes
    assert first.inputs == ["x"] and first.attrs["shape"] == [1, 4, 2, 3, 3]
    assert last.attrs["shape"] == [1, 8, 3, 3]
    assert all(t.dtype == "float32" for t in graph.tensors.values())  # no int64 left


def test_resize_sizes_subgraph_folds_to_scales(tmp_path) -> None:
    b = NetBuilder("up")
    y = b.upsample2x(b.input("x", [1, 2, 3, 5]), "linear")
    graph, error = import_and_compare(b.build({y: [1, 2, 6, 10]}), tmp_path)
    assert error <= 1e-6
    (resize,) = graph.nodes
    assert resize.inputs == ["x"] and resize.attrs["scales"] == [1.0, 1.0, 2.0, 2.0]


def test_constant_only_computation_folds(tmp_path) -> None:
    nodes = [helper.make_node("Transpose", ["wt"], ["w"], perm=[1, 0]),
             helper.make_node("MatMul", ["x", "w"], ["y"])]
    graph, error = import_and_compare(model_of(nodes, {"x": [2, 3]}, {"y": 2}, {"wt": w(4, 3)}),
                                      tmp_path)
    assert error <= 1e-6
    assert ops(graph) == ["MatMul"] and graph.is_constant(graph.nodes[0].inputs[1])


def test_graph_output_is_never_folded_away(tmp_path) -> None:
    nodes = [helper.make_node("Add", ["c", "c"], ["y"])]
    onnx.save(model_of(nodes, {"x": [2]}, {"y": 1}, {"c": w(2)}), tmp_path / "m.onnx")
    assert ops(import_onnx(tmp_path / "m.onnx")) == ["Add"]


def test_ops_without_ir_kernels_fold_when_their_inputs_are_constant(tmp_path) -> None:
    """ConstantOfShape, Range, Expand, Tile, Where, Equal and Cast have no IR kernel: on
    constants they are evaluated by onnx.reference at import and never reach the IR."""
    nodes = [
        helper.make_node("ConstantOfShape", ["shape"], ["ones"],
                         value=helper.make_tensor("v", TensorProto.FLOAT, [1], [0.5])),
        helper.make_node("Range", ["start", "limit", "delta"], ["r"]),
        helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
        helper.make_node("Expand", ["rf", "expand"], ["grid"]),  # [3, 4]
        helper.make_node("Tile", ["grid", "reps"], ["tiled"]),  # [3, 8]
        helper.make_node("Equal", ["tiled", "ones"], ["mask"]),  # broadcast [3, 8]
        helper.make_node("Where", ["mask", "tiled", "ones"], ["bias"]),
        helper.make_node("Add", ["x", "bias"], ["y"]),
    ]
    inits = {"shape": i64(8), "start": np.array(0), "limit": np.array(4), "delta": np.array(1),
             "expand": i64(3, 4), "reps": i64(1, 2)}
    graph, error = import_and_compare(model_of(nodes, {"x": [3, 8]}, {"y": 2}, inits), tmp_path)
    assert error <= 1e-6
    assert ops(graph) == ["Add"]
    bias = graph.constants[graph.nodes[0].inputs[1]]
    assert bias.shape == (3, 8) and bias.dtype == np.float32


def test_large_folded_constant_is_a_streamed_weight(tmp_path) -> None:
    """A weight built by ConstantOfShape (as the onnx light models do) is folded into a
    constant that codegen streams from the weight blob, not written into the C."""
    nodes = [helper.make_node("ConstantOfShape", ["wshape"], ["w"],
                              value=helper.make_tensor("v", TensorProto.FLOAT, [1], [0.01])),
             helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])]
    model = model_of(nodes, {"x": [1, 32, 6, 6]}, {"y": 4}, {"wshape": i64(64, 32, 3, 3)})
    graph, error = import_and_compare(model, tmp_path)
    assert error <= 1e-5
    (conv,) = graph.nodes
    weight_bytes = 64 * 32 * 3 * 3 * 4
    assert graph.constants[conv.inputs[1]].nbytes == weight_bytes
    generated = generate_model(graph, plan_graph(graph, PlanParams(timings=False)), symbol="m")
    assert generated.metadata["weight_bytes_streamed"] >= weight_bytes
    assert len(generated.c_source) < weight_bytes


def test_ir3_initializers_listed_as_inputs_have_static_shapes(tmp_path) -> None:
    """IR 3 (the PyTorch-converted backend tests): initializers are typed only through
    graph.input; the shape inference copy must still see their types."""
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[3, 3], group=4)]
    inits = {"w": w(4, 1, 3, 3), "b": w(4)}
    model = model_of(nodes, {"x": [1, 4, 6, 6], "w": [4, 1, 3, 3], "b": [4]}, {"y": 4}, inits,
                     opset=6, ir_version=3)
    graph, error = import_and_compare(model, tmp_path)
    assert error <= 1e-5
    assert graph.tensors["y"].shape == [1, 4, 4, 4]
    assert optimize(graph).nodes[0].op == "Conv"


def test_multi_output_node_on_constants_folds(tmp_path) -> None:
    """Split (no IR kernel) of a constant, its middle output unused."""
    nodes = [helper.make_node("Split", ["c", "sizes"], ["a", "m", "b"], axis=1),
             helper.make_node("Mul", ["x", "a"], ["xa"]),
             helper.make_node("Add", ["xa", "b"], ["y"])]
    inits = {"c": w(2, 6), "sizes": i64(2, 2, 2)}
    graph, error = import_and_compare(model_of(nodes, {"x": [2, 2]}, {"y": 2}, inits), tmp_path)
    assert error <= 1e-6
    assert ops(graph) == ["Mul", "Add"]
    assert np.array_equal(graph.constants["b"], inits["c"][:, 4:])
