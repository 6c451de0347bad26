"""Every import error is a UserError naming the node, its op and input shapes (or the
input / file at fault) and saying what is supported or what to do."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnn64build.errors import UserError
from dnn64build.frontend import import_onnx
from tools.zoo.compare import import_and_compare


def make(nodes, inputs, outputs, inits=(), opset: int = 17) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=10)


def vi(name: str, shape, dtype=TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, dtype, shape)


def import_error(model: onnx.ModelProto, tmp_path, **kwargs) -> UserError:
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    with pytest.raises(UserError) as info:
        import_onnx(path, **kwargs)
    assert str(path) in str(info.value)
    return info.value


def test_unsupported_operator_names_node_op_shapes_and_supported_list(tmp_path) -> None:
    model = make([helper.make_node("Det", ["x"], ["y"], name="my_det")],
                 [vi("x", [2, 3, 3])], [vi("y", [2])])
    error = import_error(model, tmp_path)
    assert "node 'my_det' (op Det, input shapes [[2, 3, 3]])" in error.message
    assert "unsupported operator 'Det'" in error.message
    assert "Conv" in error.hint and "Resize" in error.hint


def test_operator_from_another_domain_is_unsupported(tmp_path) -> None:
    node = helper.make_node("FusedConv", ["x"], ["y"], name="ms", domain="com.microsoft")
    graph = helper.make_graph([node], "g", [vi("x", [1, 3])], [vi("y", [1, 3])])
    model = helper.make_model(graph, ir_version=10, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    error = import_error(model, tmp_path)
    assert "'FusedConv' in domain 'com.microsoft'" in error.message


def test_dynamic_batch_without_binding_is_an_error(tmp_path) -> None:
    model = make([helper.make_node("Relu", ["x"], ["y"])], [vi("x", ["N", 3])],
                 [vi("y", ["N", 3])])
    error = import_error(model, tmp_path)
    assert "input 'x' has dynamic shape [N, 3]" in error.message
    assert "bind it with the target attribute inputs, e.g. inputs: {x: [1, 3]}" in error.hint


def test_dynamic_batch_bound_from_input_shapes(tmp_path) -> None:
    w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "w")
    model = make([helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])],
                 [vi("x", ["batch", 3, 6, 6])], [vi("y", ["batch", 4, 6, 6])], [w])
    graph, error = import_and_compare(model, tmp_path, input_shapes={"x": [2, 3, 6, 6]})
    assert graph.tensors["x"].shape == [2, 3, 6, 6]
    assert graph.tensors["y"].shape == [2, 4, 6, 6]
    assert error <= 1e-4


def test_input_shapes_with_unknown_name(tmp_path) -> None:
    model = make([helper.make_node("Relu", ["x"], ["y"])], [vi("x", [1, 3])],
                 [vi("y", [1, 3])])
    error = import_error(model, tmp_path, input_shapes={"image": [1, 3]})
    assert "'image', which is not a model input" in error.message
    assert "x" in error.hint


def test_input_shapes_contradicting_a_fixed_dim(tmp_path) -> None:
    model = make([helper.make_node("Relu", ["x"], ["y"])], [vi("x", ["N", 3])],
                 [vi("y", ["N", 3])])
    error = import_error(model, tmp_path, input_shapes={"x": [1, 4]})
    assert "input 'x': attribute inputs gives [1, 4], the model declares [N, 3]" in error.message


def test_shape_depending_on_input_values_cannot_be_resolved(tmp_path) -> None:
    model = make([helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape_by_value")],
                 [vi("x", [2, 6]), vi("s", [2], TensorProto.INT64)], [vi("y", ["a", "b"])])
    error = import_error(model, tmp_path)
    assert "node 'reshape_by_value' (op Reshape, input shapes [[2, 6], [2]])" in error.message
    assert "cannot resolve a static shape for tensor 'y'" in error.message


def test_file_not_found(tmp_path) -> None:
    with pytest.raises(UserError, match="ONNX model file not found"):
        import_onnx(tmp_path / "missing.onnx")


def test_garbage_file_is_not_a_model(tmp_path) -> None:
    path = tmp_path / "garbage.onnx"
    path.write_bytes(b"\xff\x00not a protobuf" * 10)
    with pytest.raises(UserError, match="not a readable ONNX model|malformed ONNX model"):
        import_onnx(path)


def test_malformed_model_undefined_input(tmp_path) -> None:
    model = make([helper.make_node("Relu", ["nowhere"], ["y"])], [vi("x", [1, 3])],
                 [vi("y", [1, 3])])
    error = import_error(model, tmp_path)
    assert error.message.startswith("malformed ONNX model")
    assert "nowhere" in error.message


def test_malformed_model_inconsistent_shapes(tmp_path) -> None:
    w = numpy_helper.from_array(np.ones((4, 5, 3, 3), np.float32), "w")
    model = make([helper.make_node("Conv", ["x", "w"], ["y"], name="c")],
                 [vi("x", [1, 3, 8, 8])], [vi("y", ["n", "c", "h", "w"])], [w])
    error = import_error(model, tmp_path)
    assert "node 'c' (op Conv, input shapes [[1, 3, 8, 8], [4, 5, 3, 3]])" in error.message
    assert "does not fit 3 input channels" in error.message


def test_shape_inference_failure_is_reported(tmp_path) -> None:
    model = make([helper.make_node("Add", ["a", "b"], ["y"])],
                 [vi("a", [2, 3]), vi("b", [4, 5])], [vi("y", ["p", "q"])])
    error = import_error(model, tmp_path)
    assert "shape inference failed" in error.message and "Add" in error.message


def test_unsupported_attribute_value_names_the_node(tmp_path) -> None:
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "sc")
    model = make([helper.make_node("Resize", ["x", "", "sc"], ["y"], name="up", mode="cubic")],
                 [vi("x", [1, 1, 4, 4])], [vi("y", [1, 1, 8, 8])], [scales])
    error = import_error(model, tmp_path)
    assert "node 'up' (op Resize, input shapes [[1, 1, 4, 4], [4]])" in error.message
    assert "Resize mode 'cubic' is not supported" in error.message


def test_conv_3d_with_auto_pad_is_unsupported(tmp_path) -> None:
    w = numpy_helper.from_array(np.ones((2, 3, 3, 3, 3), np.float32), "w")
    model = make([helper.make_node("Conv", ["x", "w"], ["y"], name="c3d",
                                   auto_pad="SAME_UPPER")],
                 [vi("x", [1, 3, 8, 8, 8])], [vi("y", [1, 2, 8, 8, 8])], [w])
    error = import_error(model, tmp_path)
    assert "node 'c3d' (op Conv" in error.message
    assert "3-D Conv only with explicit pads" in error.message


def test_used_secondary_output_is_unsupported(tmp_path) -> None:
    node = helper.make_node("MaxPool", ["x"], ["y", "idx"], name="mp", kernel_shape=[2, 2])
    model = make([node], [vi("x", [1, 1, 4, 4])],
                 [vi("y", [1, 1, 3, 3]), vi("idx", [1, 1, 3, 3], TensorProto.INT64)])
    error = import_error(model, tmp_path)
    assert "node 'mp' (op MaxPool" in error.message and "output #2 ('idx')" in error.message


def test_batchnorm_training_mode_is_unsupported(tmp_path) -> None:
    params = [numpy_helper.from_array(np.ones(2, np.float32), n) for n in "sbmv"]
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"],
                            ["y", "mean_out", "var_out"], name="bn", training_mode=1)
    model = make([node], [vi("x", [1, 2, 3, 3])], [vi("y", [1, 2, 3, 3])], params)
    error = import_error(model, tmp_path)
    assert "training_mode" in error.message and "'bn'" in error.message


def test_graph_output_that_is_an_input(tmp_path) -> None:
    model = make([helper.make_node("Relu", ["x"], ["y"])], [vi("x", [1, 3])],
                 [vi("y", [1, 3]), vi("x", [1, 3])])
    error = import_error(model, tmp_path)
    assert "graph output 'x' is not computed by any node" in error.message


def test_newer_opset_is_converted(tmp_path) -> None:
    model = make([helper.make_node("Relu", ["x"], ["y"])], [vi("x", [2, 3])],
                 [vi("y", [2, 3])], opset=22)
    graph, error = import_and_compare(model, tmp_path)
    assert [n.op for n in graph.nodes] == ["Relu"] and error == 0.0
