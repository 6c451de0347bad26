"""Canonical attributes written by the importer, checked against hand-computed values."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from dnn64build.frontend import import_onnx


def import_one(tmp_path, node: onnx.NodeProto, x_shape: list[int], inits: dict, opset: int = 17,
               out_rank: int = 4):
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["d"] * out_rank)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              ir_version=10)
    onnx.save(model, tmp_path / "m.onnx")
    return import_onnx(tmp_path / "m.onnx")


def test_conv_defaults_and_same_upper_pads(tmp_path) -> None:
    w = np.zeros((4, 3, 4, 4), np.float32)
    node = helper.make_node("Conv", ["x", "w"], ["y"], auto_pad="SAME_UPPER", strides=[2, 2])
    (conv,) = import_one(tmp_path, node, [1, 3, 7, 7], {"w": w}).nodes
    # out = ceil(7/2) = 4; total pad = (4-1)*2 + 4 - 7 = 3 -> 1 before, 2 after.
    assert conv.attrs == {"kernel_shape": [4, 4], "strides": [2, 2], "dilations": [1, 1],
                          "pads": [1, 1, 2, 2], "group": 1}


def test_same_lower_puts_the_extra_pad_first(tmp_path) -> None:
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[4, 4], strides=[2, 2],
                            auto_pad="SAME_LOWER")
    (pool,) = import_one(tmp_path, node, [1, 3, 7, 7], {}).nodes
    assert pool.attrs["pads"] == [2, 2, 1, 1] and pool.attrs["ceil_mode"] == 0


def test_clip_inputs_become_attributes(tmp_path) -> None:
    node = helper.make_node("Clip", ["x", "lo", ""], ["y"])
    (clip,) = import_one(tmp_path, node, [1, 3], {"lo": np.float32(-1.5)}, opset=13,
                         out_rank=2).nodes
    assert clip.inputs == ["x"] and clip.attrs == {"min": -1.5, "max": None}


def test_squeeze_axes_from_input_and_attribute_agree(tmp_path) -> None:
    attr = helper.make_node("Squeeze", ["x"], ["y"], axes=[-1])
    inp = helper.make_node("Squeeze", ["x", "a"], ["y"])
    (a,) = import_one(tmp_path, attr, [2, 3, 1], {}, opset=11, out_rank=2).nodes
    (b,) = import_one(tmp_path, inp, [2, 3, 1], {"a": np.array([-1], np.int64)}, opset=13,
                      out_rank=2).nodes
    assert a.attrs == b.attrs == {"axes": [2]}


def test_resize_sizes_become_scales(tmp_path) -> None:
    node = helper.make_node("Resize", ["x", "", "", "s"], ["y"], mode="linear")
    (resize,) = import_one(tmp_path, node, [1, 2, 4, 5],
                           {"s": np.array([1, 2, 8, 15], np.int64)}).nodes
    assert resize.inputs == ["x"]
    assert resize.attrs == {"mode": "linear", "coordinate_transformation_mode": "half_pixel",
                            "nearest_mode": "round_prefer_floor", "scales": [1.0, 1.0, 2.0, 3.0]}


def test_pad_with_axes_expands_to_full_rank(tmp_path) -> None:
    node = helper.make_node("Pad", ["x", "p", "", "a"], ["y"])
    (pad,) = import_one(tmp_path, node, [1, 2, 4, 4], {"p": np.array([1, 2, 3, 4], np.int64),
                                                       "a": np.array([-1, 2], np.int64)},
                        opset=18).nodes
    assert pad.attrs == {"mode": "constant", "pads": [0, 0, 2, 1, 0, 0, 4, 3], "value": 0.0}


def test_shape_subgraph_folds_at_import(tmp_path) -> None:
    """The importer folds a computed Reshape target into the canonical attribute."""
    from tools.zoo.builder import NetBuilder

    b = NetBuilder("t")
    y = b.view_flatten(b.input("x", [2, 3, 4]))
    path = tmp_path / "m.onnx"
    onnx.save(b.build({y: [2, 12]}), path)
    graph = import_onnx(path)
    assert [(n.op, n.inputs, n.attrs) for n in graph.nodes] == [("Reshape", ["x"],
                                                                 {"shape": [2, 12]})]
