"""Every supported operator, several attribute combinations each, run on the host
and compared with onnxruntime (one host program per operator)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from codegen_cases import TOLERANCE, Case, errors_vs_onnxruntime, node, onnx_model, rand
from onnx import helper, numpy_helper


def conv_case(name: str, x: list[int], w: list[int], bias: bool = True, act: str | None = None,
              staging: int | None = None, **attrs) -> Case:
    inits = {"w": rand(*w, seed=1) * 0.3}
    inputs = ["x", "w"]
    if bias:
        inits["b"] = rand(w[0], seed=2)
        inputs.append("b")
    nodes = [node("Conv", inputs, ["c" if act else "y"], **attrs)]
    if act:
        nodes.append(helper.make_node(act, ["c"], ["y"], name="act"))
    return Case(name, onnx_model(nodes, {"x": x}, ["y"], inits), staging_bytes=staging)


def _int64_input(model: onnx.ModelProto, name: str) -> onnx.ModelProto:
    """``model`` with its graph input ``name`` declared int64 (token ids, say)."""
    next(vi for vi in model.graph.input if vi.name == name).type.tensor_type.elem_type = (
        onnx.TensorProto.INT64)
    return model


def _const_node(name: str, value: np.ndarray) -> object:
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(value))


CASES: dict[str, list[Case]] = {
    "Conv": [
        conv_case("3x3 pad", [1, 3, 9, 9], [8, 3, 3, 3], pads=[1, 1, 1, 1]),
        conv_case("stride 2 asym pad, no bias", [2, 4, 10, 7], [6, 4, 3, 2], bias=False,
                  strides=[2, 2], pads=[1, 0, 0, 1]),
        conv_case("dilated", [1, 2, 11, 11], [4, 2, 3, 3], dilations=[2, 2], pads=[2, 2, 2, 2]),
        conv_case("depthwise + relu", [1, 8, 8, 8], [8, 1, 3, 3], act="Relu", group=8,
                  pads=[1, 1, 1, 1]),
        conv_case("grouped + sigmoid", [1, 6, 6, 6], [9, 2, 3, 3], act="Sigmoid", group=3),
        conv_case("1x1 + leaky", [1, 16, 5, 5], [12, 16, 1, 1], act="LeakyRelu"),
        conv_case("same_upper + tanh", [1, 3, 7, 8], [5, 3, 3, 3], act="Tanh",
                  auto_pad="SAME_UPPER", strides=[2, 2]),
        conv_case("tiled by staging", [1, 8, 6, 6], [32, 8, 3, 3], pads=[1, 1, 1, 1],
                  staging=2 * 1024),
    ],
    "ConvTranspose": [
        Case("stride 2", onnx_model(
            [node("ConvTranspose", ["x", "w", "b"], strides=[2, 2])], {"x": [1, 4, 5, 5]},
            ["y"], {"w": rand(4, 6, 3, 3, seed=1), "b": rand(6, seed=2)})),
        Case("pads, output_padding, group 2", onnx_model(
            [node("ConvTranspose", ["x", "w"], strides=[2, 2], pads=[1, 1, 1, 1],
                  output_padding=[1, 1], group=2)], {"x": [1, 4, 4, 5]}, ["y"],
            {"w": rand(4, 3, 3, 3, seed=1)})),
        Case("dilated, tiled", onnx_model(
            [node("ConvTranspose", ["x", "w", "b"], dilations=[2, 2])], {"x": [1, 3, 4, 4]},
            ["y"], {"w": rand(3, 16, 2, 2, seed=1), "b": rand(16, seed=2)}),
            staging_bytes=256),
    ],
    "Gemm": [
        Case("transB + bias", onnx_model([node("Gemm", ["x", "w", "b"], transB=1)],
                                         {"x": [3, 10]}, ["y"],
                                         {"w": rand(7, 10, seed=1), "b": rand(7, seed=2)})),
        Case("alpha beta, row bias", onnx_model(
            [node("Gemm", ["x", "w", "b"], alpha=0.5, beta=2.0)], {"x": [2, 6]}, ["y"],
            {"w": rand(6, 5, seed=1), "b": rand(1, 5, seed=2)})),
        Case("relu, tiled", onnx_model(
            [node("Gemm", ["x", "w"], ["g"], transB=1),
             helper.make_node("Relu", ["g"], ["y"], name="relu")], {"x": [1, 64]}, ["y"],
            {"w": rand(40, 64, seed=1)}), staging_bytes=2048),
        Case("transA with m=1", onnx_model([node("Gemm", ["x", "w"], transA=1)],
                                           {"x": [8, 1]}, ["y"], {"w": rand(8, 3, seed=1)})),
        Case("two activations (a MatMul), transA transB, alpha, activation C", onnx_model(
            [node("Gemm", ["a", "b", "c"], transA=1, transB=1, alpha=0.5, beta=-2.0)],
            {"a": [6, 3], "b": [4, 6], "c": [3, 4]}, ["y"])),
    ],
    "MatMul": [
        Case("const B", onnx_model([node("MatMul", ["x", "w"])], {"x": [2, 3, 8]}, ["y"],
                                   {"w": rand(8, 5, seed=1)})),
        Case("two activations, batched", onnx_model(
            [node("MatMul", ["a", "b"])], {"a": [2, 3, 4], "b": [2, 4, 5]}, ["y"])),
        Case("broadcast B", onnx_model([node("MatMul", ["a", "b"])],
                                       {"a": [3, 2, 4], "b": [4, 6]}, ["y"])),
        Case("const batched B", onnx_model([node("MatMul", ["x", "w"])], {"x": [2, 3, 4]},
                                           ["y"], {"w": rand(2, 4, 3, seed=1)})),
    ],
    "Binary": [
        Case(f"{op} {sa} {sb}", onnx_model([node(op, ["a", "b"])], {"a": sa, "b": sb}, ["y"]),
             inputs={"b": np.abs(rand(*sb, seed=3)) + 0.5} if op == "Div" else {})
        for op, sa, sb in [("Add", [2, 3, 4], [2, 3, 4]), ("Sub", [2, 3, 4], [4]),
                           ("Mul", [1, 3, 1, 5], [2, 1, 4, 1]), ("Div", [3, 4], [3, 1])]
    ] + [
        Case("Add constant channel", onnx_model([node("Add", ["x", "c"])], {"x": [1, 4, 3, 3]},
                                                ["y"], {"c": rand(4, 1, 1, seed=1)})),
        Case("Mul constant scalar first", onnx_model([node("Mul", ["c", "x"])], {"x": [5, 2]},
                                                     ["y"], {"c": np.float32(1.5)})),
    ],
    "Activations": [
        Case(op + str(attrs), onnx_model([node(op, ["x"], **attrs)], {"x": [2, 3, 4, 5]},
                                         ["y"]))
        for op, attrs in [("Relu", {}), ("LeakyRelu", {"alpha": 0.2}), ("Sigmoid", {}),
                          ("Tanh", {}), ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}),
                          ("HardSwish", {})]
    ] + [
        Case("Clip min max", onnx_model([node("Clip", ["x", "lo", "hi"])], {"x": [3, 7]}, ["y"],
                                        {"lo": np.float32(-0.5), "hi": np.float32(0.7)})),
        Case("Clip min only", onnx_model([node("Clip", ["x", "lo"])], {"x": [3, 7]}, ["y"],
                                         {"lo": np.float32(0.1)})),
        Case("Relu of an input read twice", onnx_model(
            [node("Relu", ["x"], ["r"]), helper.make_node("Add", ["r", "x"], ["y"], name="add")],
            {"x": [4, 4]}, ["y"])),
    ],
    # The unary element-wise ops (issue 22): (op, attrs, opset, positive inputs only)
    "Unary": [
        Case(f"{op}{attrs}", onnx_model([node(op, ["x"], **attrs)], {"x": [2, 3, 4, 5]}, ["y"],
                                        opset=opset),
             inputs={"x": np.abs(rand(2, 3, 4, 5, seed=3)) + 0.05} if positive else {})
        for op, attrs, opset, positive in [
            ("Neg", {}, 17, False), ("Abs", {}, 17, False), ("Exp", {}, 17, False),
            ("Log", {}, 17, True), ("Sqrt", {}, 17, True), ("Reciprocal", {}, 17, True),
            ("Sign", {}, 17, False), ("Erf", {}, 17, False), ("Gelu", {}, 20, False),
            ("Gelu", {"approximate": "tanh"}, 20, False), ("Elu", {"alpha": 0.5}, 17, False),
            ("Selu", {}, 17, False), ("Celu", {"alpha": 2.0}, 17, False),
            ("ThresholdedRelu", {}, 17, False), ("Softplus", {}, 17, False),
            ("Softsign", {}, 17, False), ("Mish", {}, 18, False),
            ("Shrink", {"lambd": 0.3, "bias": 0.1}, 17, False),
        ]
    ] + [
        Case(f"Pow {e}", onnx_model([node("Pow", ["x", "e"])], {"x": [3, 8]}, ["y"],
                                    {"e": np.array(e, dtype)}))
        for e, dtype in [(2.0, np.float32), (3, np.int64), (-1.0, np.float32)]
    ] + [
        Case("Pow 0.5 of positives", onnx_model([node("Pow", ["x", "e"])], {"x": [3, 8]},
                                                ["y"], {"e": np.array([0.5], np.float32)}),
             inputs={"x": np.abs(rand(3, 8, seed=4)) + 0.05}),
    ],
    "MaxMinPRelu": [
        Case(f"{op} {a}x{b}", onnx_model([node(op, ["a", "b"])], {"a": a, "b": b}, ["y"]))
        for op in ("Max", "Min") for a, b in [([2, 3, 4], [2, 3, 4]), ([2, 3, 4], [3, 1])]
    ] + [
        Case("PRelu per channel", onnx_model([node("PRelu", ["x", "s"])], {"x": [2, 4, 3, 3]},
                                             ["y"], {"s": rand(4, 1, 1, seed=5)})),
        Case("PRelu scalar slope", onnx_model([node("PRelu", ["x", "s"])], {"x": [2, 5]},
                                              ["y"], {"s": np.array([0.25], np.float32)})),
        Case("Max of a constant", onnx_model([node("Max", ["x", "c"])], {"x": [4, 6]}, ["y"],
                                             {"c": rand(6, seed=6)})),
    ] + [
        Case(f"LogSoftmax axis {axis} opset {opset}", onnx_model(
            [node("LogSoftmax", ["x"], axis=axis)], {"x": [2, 3, 5]}, ["y"], opset=opset))
        for axis, opset in [(-1, 17), (1, 17), (1, 11)]
    ],
    "Softmax": [
        Case(f"axis {axis}", onnx_model([node("Softmax", ["x"], axis=axis)],
                                        {"x": [2, 3, 5]}, ["y"]))
        for axis in (-1, 1, 0)
    ],
    "Pool": [
        Case("max 2x2", onnx_model([node("MaxPool", ["x"], kernel_shape=[2, 2],
                                         strides=[2, 2])], {"x": [1, 3, 8, 8]}, ["y"])),
        Case("max 3x3 pad ceil", onnx_model([node("MaxPool", ["x"], kernel_shape=[3, 3],
                                                  strides=[2, 2], pads=[1, 1, 1, 1],
                                                  ceil_mode=1)], {"x": [1, 2, 8, 9]}, ["y"])),
        Case("max dilated", onnx_model([node("MaxPool", ["x"], kernel_shape=[2, 2],
                                             dilations=[2, 2])], {"x": [1, 2, 7, 7]}, ["y"])),
        Case("avg pad exclude", onnx_model([node("AveragePool", ["x"], kernel_shape=[3, 3],
                                                 pads=[1, 1, 1, 1])], {"x": [2, 2, 6, 6]},
                                           ["y"])),
        Case("avg pad include", onnx_model([node("AveragePool", ["x"], kernel_shape=[3, 3],
                                                 strides=[2, 2], pads=[1, 1, 1, 1],
                                                 count_include_pad=1)], {"x": [1, 3, 7, 7]},
                                           ["y"])),
        Case("global avg", onnx_model([node("GlobalAveragePool", ["x"])], {"x": [2, 5, 4, 3]},
                                      ["y"])),
    ],
    "ReduceMean": [
        Case("axes 2,3 keep", onnx_model([node("ReduceMean", ["x", "axes"], keepdims=1)],
                                         {"x": [2, 3, 4, 5]}, ["y"],
                                         {"axes": np.array([2, 3], np.int64)}, opset=18)),
        Case("axis 1 drop", onnx_model([node("ReduceMean", ["x"], axes=[1], keepdims=0)],
                                       {"x": [2, 3, 4]}, ["y"], opset=17)),
    ],
    "Movement": [
        Case("concat axis 1", onnx_model([node("Concat", ["a", "b"], axis=1)],
                                         {"a": [2, 3, 4], "b": [2, 5, 4]}, ["y"])),
        Case("concat axis 0 + const", onnx_model([node("Concat", ["a", "c"], axis=0)],
                                                 {"a": [2, 3]}, ["y"], {"c": rand(1, 3)})),
        Case("concat of computed parts", onnx_model(
            [helper.make_node("Relu", ["a"], ["ra"], name="ra"),
             helper.make_node("Sigmoid", ["a"], ["sa"], name="sa"),
             node("Concat", ["ra", "sa"], axis=1)], {"a": [1, 4, 2, 2]}, ["y"])),
        Case("transpose", onnx_model([node("Transpose", ["x"], perm=[0, 2, 3, 1])],
                                     {"x": [2, 3, 4, 5]}, ["y"])),
        Case("reshape + flatten", onnx_model(
            [node("Reshape", ["x", "s"], ["r"]), node("Flatten", ["r"], axis=1)],
            {"x": [2, 3, 4]}, ["y"], {"s": np.array([2, 4, 3], np.int64)})),
        Case("pad constant", onnx_model([node("Pad", ["x", "p", "v"], mode="constant")],
                                        {"x": [1, 2, 3, 3]}, ["y"],
                                        {"p": np.array([0, 0, 1, 2, 0, 1, 2, 0], np.int64),
                                         "v": np.float32(1.5)})),
        Case("pad reflect", onnx_model([node("Pad", ["x", "p"], mode="reflect")],
                                       {"x": [1, 2, 4, 4]}, ["y"],
                                       {"p": np.array([0, 0, 2, 1, 0, 0, 1, 2], np.int64)})),
        Case("pad edge", onnx_model([node("Pad", ["x", "p"], mode="edge")], {"x": [2, 5]},
                                    ["y"], {"p": np.array([1, 2, 0, 3], np.int64)})),
        Case("slice", onnx_model([node("Slice", ["x", "s", "e", "a"])], {"x": [3, 6, 5]},
                                 ["y"], {"s": np.array([1, -4], np.int64),
                                         "e": np.array([3, 100], np.int64),
                                         "a": np.array([0, 1], np.int64)})),
        Case("gather scalar", onnx_model([node("Gather", ["x", "i"], axis=1)], {"x": [2, 4, 3]},
                                         ["y"], {"i": np.array(2, np.int64)})),
        Case("gather scattered constant indices", onnx_model(
            [node("Gather", ["x", "i"], axis=1)], {"x": [2, 5, 3]}, ["y"],
            {"i": np.array([4, 0, 4, -1], np.int64)})),
        Case("embedding: a constant table at int64 input indices", _int64_input(onnx_model(
            [node("Gather", ["t", "ids"])], {"ids": [2, 3]}, ["y"], {"t": rand(6, 4)}), "ids"),
            inputs={"ids": np.array([[0, 5, -1], [2, 2, -6]], np.int64)}),
    ],
    "Resize": [
        Case(f"{mode} {coord}", onnx_model(
            [node("Resize", ["x", "", "s"], mode=mode, coordinate_transformation_mode=coord,
                  **({"nearest_mode": "floor"} if coord == "asymmetric" else {}))],
            {"x": [1, 2, 4, 5]}, ["y"],
            {"s": np.array([1, 1, 2, 1.5], np.float32)}))
        for mode in ("nearest", "linear")
        for coord in ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel")
    ],
    "BatchNormalization": [
        Case("stand-alone (as Mul + Add)", onnx_model(
            [node("BatchNormalization", ["x", "s", "b", "m", "v"])], {"x": [2, 3, 4, 4]},
            ["y"], {"s": rand(3, seed=1), "b": rand(3, seed=2), "m": rand(3, seed=3),
                    "v": np.abs(rand(3, seed=4)) + 0.1})),
        Case("kept as a node", onnx_model(
            [node("BatchNormalization", ["x", "s", "b", "m", "v"])], {"x": [2, 3, 5]}, ["y"],
            {"s": rand(3, seed=1), "b": rand(3, seed=2), "m": rand(3, seed=3),
             "v": np.abs(rand(3, seed=4)) + 0.1}), disabled=frozenset({"fold_batchnorm"})),
        Case("folded into conv", onnx_model(
            [node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             node("BatchNormalization", ["c", "s", "b", "m", "v"])], {"x": [1, 3, 5, 5]},
            ["y"], {"w": rand(4, 3, 3, 3), "s": rand(4, seed=1), "b": rand(4, seed=2),
                    "m": rand(4, seed=3), "v": np.abs(rand(4, seed=4)) + 0.1})),
    ],
    # structural operators (issue 22)
    "LRN": [
        Case("AlexNet's", onnx_model([node("LRN", ["x"], size=5, alpha=1e-4, beta=0.75)],
                                     {"x": [1, 8, 5, 5]}, ["y"])),
        Case("after a conv, batch 2", onnx_model(
            [node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             node("LRN", ["c"], size=3, alpha=0.5, beta=0.6, bias=2.0)],
            {"x": [2, 3, 4, 4]}, ["y"], {"w": rand(4, 3, 3, 3)})),
    ],
    "ReduceSum/ReduceMax": [
        Case("sum over H, W", onnx_model(
            [node("ReduceSum", ["x", "a"], keepdims=0)], {"x": [2, 3, 4, 5]}, ["y"],
            {"a": np.array([2, 3], np.int64)})),
        Case("max over C", onnx_model([node("ReduceMax", ["x"], axes=[1])],
                                      {"x": [2, 3, 4, 5]}, ["y"])),
    ],
    "Split": [
        Case("channels, uneven", onnx_model(
            [node("Split", ["x", "s"], ["a", "b"], axis=1),
             helper.make_node("Relu", ["a"], ["y0"], name="relu"),
             helper.make_node("Sigmoid", ["b"], ["y1"], name="sigmoid")],
            {"x": [2, 5, 3, 4]}, ["y0", "y1"], {"s": np.array([2, 3], np.int64)})),
    ],
    "Expand/Tile": [
        Case("expand, rank up", onnx_model([node("Expand", ["x", "s"])], {"x": [3, 1, 5]},
                                           ["y"], {"s": np.array([2, 3, 4, 1], np.int64)})),
        Case("tile", onnx_model([node("Tile", ["x", "r"])], {"x": [1, 2, 3, 4]}, ["y"],
                                {"r": np.array([2, 1, 3, 2], np.int64)})),
    ],
    "LayerNormalization": [
        Case("last axis", onnx_model([node("LayerNormalization", ["x", "s", "b"])],
                                     {"x": [2, 5, 8]}, ["y"],
                                     {"s": rand(8, seed=1), "b": rand(8, seed=2)})),
        Case("two axes, broadcast scale", onnx_model(
            [node("LayerNormalization", ["x", "s"], axis=-2, epsilon=1e-3)],
            {"x": [3, 4, 6]}, ["y"], {"s": rand(1, 6, seed=1)})),
    ],
    "InstanceNormalization": [
        Case("NCHW", onnx_model([node("InstanceNormalization", ["x", "s", "b"], epsilon=1e-3)],
                                {"x": [2, 3, 5, 4]}, ["y"],
                                {"s": rand(3, seed=1), "b": rand(3, seed=2)})),
    ],
    "Where": [
        Case("constant condition, a constant branch", onnx_model(
            [node("Where", ["c", "x", "k"])], {"x": [2, 3, 4]}, ["y"],
            {"c": np.random.default_rng(3).random((3, 1)) > 0.5,
             "k": np.array([-1e9, 2.0, 0.5, 7.0], np.float32)})),
    ],
    "1-D windows": [
        Case("conv1d, pool1d", onnx_model(
            [node("Conv", ["x", "w", "b"], ["c"], group=2, dilations=[2], pads=[1, 2]),
             node("MaxPool", ["c"], ["p"], kernel_shape=[3], strides=[2], pads=[1, 1]),
             node("AveragePool", ["p"], ["y"], kernel_shape=[2])],
            {"x": [2, 4, 12]}, ["y"], {"w": rand(6, 2, 3), "b": rand(6, seed=1)})),
    ],
    "3-D windows": [
        Case("conv3d grouped, dilated, depth padding", onnx_model(
            [node("Conv", ["x", "w", "b"], group=2, dilations=[2, 1, 1], strides=[2, 1, 2],
                  pads=[2, 1, 0, 1, 0, 1])],
            {"x": [2, 4, 5, 4, 5]}, ["y"], {"w": rand(6, 2, 2, 3, 2), "b": rand(6, seed=1)})),
        Case("maxpool3d, depth padding", onnx_model(
            [node("MaxPool", ["x"], kernel_shape=[3, 2, 2], strides=[2, 2, 1],
                  pads=[1, 0, 1, 1, 1, 0])], {"x": [1, 3, 5, 4, 4]}, ["y"])),
        *(Case(f"avgpool3d, depth padding, count_include_pad {cip}", onnx_model(
            [node("AveragePool", ["x"], kernel_shape=[3, 2, 3], strides=[2, 1, 2],
                  pads=[1, 1, 0, 2, 0, 1], count_include_pad=cip)],
            {"x": [2, 2, 6, 3, 5]}, ["y"])) for cip in (0, 1)),
    ],
}


@pytest.mark.parametrize("group", sorted(CASES))
def test_operator_matches_onnxruntime(group: str, tmp_path, runtime_cache) -> None:
    errors = errors_vs_onnxruntime(CASES[group], tmp_path, runtime_cache)
    bad = {name: err for name, err in errors.items() if not err <= TOLERANCE}
    assert not bad, f"scaled error above {TOLERANCE}: {bad}"
