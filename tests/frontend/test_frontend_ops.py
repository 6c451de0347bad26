"""One-node models of every supported operator, several attribute sets and opsets each:
imported + optimised IR run in the reference executor must match onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tools.zoo.compare import import_and_compare

RNG = np.random.default_rng(1234)
TOLERANCE = 1e-4


def w(*shape: int, scale: float = 0.5) -> np.ndarray:
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def i64(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def f32(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float32)


def single(op: str, inputs: dict[str, list[int]], node_inputs: list[str],
           consts: dict[str, np.ndarray] | None = None, out_rank: int | None = None,
           opset: int = 17, **attrs) -> onnx.ModelProto:
    """A model of one ``op`` node reading graph inputs and constant initializers."""
    consts = consts or {}
    rank = out_rank if out_rank is not None else len(next(iter(inputs.values())))
    node = helper.make_node(op, node_inputs, ["y"], name="the_node", **attrs)
    graph = helper.make_graph(
        [node], "one_node",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [f"d{i}" for i in range(rank)])],
        [numpy_helper.from_array(v, n) for n, v in consts.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=10 if opset >= 11 else 7)


X4 = {"x": [1, 3, 8, 8]}


def conv_cases():
    yield "basic", single("Conv", X4, ["x", "W", "B"], {"W": w(4, 3, 3, 3), "B": w(4)},
                          pads=[1, 1, 1, 1])
    yield "stride2_asym_pads", single("Conv", X4, ["x", "W"], {"W": w(5, 3, 3, 3)},
                                      strides=[2, 2], pads=[0, 1, 1, 0])
    yield "dilation2", single("Conv", {"x": [1, 3, 9, 9]}, ["x", "W"], {"W": w(4, 3, 3, 3)},
                              dilations=[2, 2], pads=[2, 1, 2, 1])
    yield "group2", single("Conv", {"x": [1, 4, 9, 9]}, ["x", "W", "B"],
                           {"W": w(6, 2, 3, 3), "B": w(6)}, group=2)
    yield "depthwise", single("Conv", {"x": [1, 4, 8, 8]}, ["x", "W"], {"W": w(4, 1, 3, 3)},
                              group=4, pads=[1, 1, 1, 1], strides=[2, 2])
    yield "same_upper", single("Conv", {"x": [1, 3, 7, 7]}, ["x", "W"], {"W": w(4, 3, 4, 4)},
                               auto_pad="SAME_UPPER", strides=[2, 2])
    yield "same_lower", single("Conv", {"x": [1, 3, 7, 7]}, ["x", "W"], {"W": w(4, 3, 4, 4)},
                               auto_pad="SAME_LOWER", strides=[2, 2])
    yield "valid", single("Conv", X4, ["x", "W"], {"W": w(2, 3, 3, 3)}, auto_pad="VALID")
    yield "1x1_batch2", single("Conv", {"x": [2, 3, 5, 5]}, ["x", "W", "B"],
                               {"W": w(7, 3, 1, 1), "B": w(7)})
    yield "rect_kernel", single("Conv", {"x": [1, 2, 9, 6]}, ["x", "W"], {"W": w(3, 2, 3, 1)},
                                strides=[2, 1], pads=[1, 0, 1, 0], kernel_shape=[3, 1])
    yield "opset11", single("Conv", X4, ["x", "W"], {"W": w(4, 3, 3, 3)}, opset=11)
    yield "opset21", single("Conv", X4, ["x", "W"], {"W": w(4, 3, 3, 3)}, opset=21)


def conv_transpose_cases():
    yield "k3s2_outpad", single("ConvTranspose", {"x": [1, 4, 5, 5]}, ["x", "W", "B"],
                                {"W": w(4, 3, 3, 3), "B": w(3)}, strides=[2, 2],
                                pads=[1, 1, 1, 1], output_padding=[1, 1])
    yield "k2s2", single("ConvTranspose", {"x": [1, 4, 4, 4]}, ["x", "W"], {"W": w(4, 6, 2, 2)},
                         strides=[2, 2])
    yield "group2_dilation2", single("ConvTranspose", {"x": [1, 4, 5, 5]}, ["x", "W"],
                                     {"W": w(4, 3, 3, 3)}, group=2, dilations=[2, 2])
    yield "output_shape", single("ConvTranspose", {"x": [1, 2, 4, 4]}, ["x", "W"],
                                 {"W": w(2, 3, 3, 3)}, strides=[2, 2], output_shape=[8, 8])
    yield "same_upper", single("ConvTranspose", {"x": [1, 2, 4, 4]}, ["x", "W"],
                               {"W": w(2, 3, 3, 3)}, strides=[2, 2], auto_pad="SAME_UPPER")
    yield "asym_pads", single("ConvTranspose", {"x": [1, 2, 4, 5]}, ["x", "W"],
                              {"W": w(2, 3, 3, 2)}, strides=[1, 2], pads=[0, 1, 2, 0])


def gemm_cases():
    x = {"a": [3, 5]}
    yield "plain", single("Gemm", x, ["a", "B"], {"B": w(5, 4)})
    yield "transB_bias", single("Gemm", x, ["a", "B", "C"], {"B": w(4, 5), "C": w(4)},
                                transB=1)
    yield "transA_alpha_beta", single("Gemm", {"a": [5, 3]}, ["a", "B", "C"],
                                      {"B": w(5, 4), "C": w(3, 4)}, transA=1, alpha=0.5,
                                      beta=2.0)
    yield "scalar_C", single("Gemm", x, ["a", "B", "C"], {"B": w(5, 2), "C": f32(0.25)})
    yield "matmul_batched", single("MatMul", {"a": [2, 3, 4]}, ["a", "B"], {"B": w(4, 5)})
    yield "matmul_vec", single("MatMul", {"a": [1, 4]}, ["a", "B"], {"B": w(4, 3)})
    yield "matmul_two_inputs", single("MatMul", {"a": [3, 4], "b": [2, 4, 5]}, ["a", "b"],
                                      out_rank=3)


def elementwise_cases():
    two = {"a": [1, 3, 4, 4], "b": [1, 3, 4, 4]}
    for op in ("Add", "Sub", "Mul"):
        yield f"{op}_same", single(op, two, ["a", "b"])
        yield f"{op}_channel_const", single(op, {"a": [1, 3, 4, 4]}, ["a", "c"],
                                            {"c": w(3, 1, 1)})
        yield f"{op}_row_broadcast", single(op, {"a": [1, 3, 4, 4], "b": [4]}, ["a", "b"])
    yield "Div_const", single("Div", {"a": [1, 3, 4, 4]}, ["a", "c"],
                              {"c": (np.abs(w(3, 1, 1)) + 0.5).astype(np.float32)})
    yield "Div_scalar_first", single("Div", {"a": [2, 3]}, ["c", "a"], {"c": f32(1.5)},
                                     out_rank=2)


def activation_cases():
    x = {"x": [2, 3, 4, 5]}
    for op in ("Relu", "Sigmoid", "Tanh", "HardSwish"):
        yield op, single(op, x, ["x"])
    yield "LeakyRelu_default", single("LeakyRelu", x, ["x"])
    yield "LeakyRelu_alpha", single("LeakyRelu", x, ["x"], alpha=0.2)
    yield "HardSigmoid_default", single("HardSigmoid", x, ["x"])
    yield "HardSigmoid_params", single("HardSigmoid", x, ["x"], alpha=0.3, beta=0.4)
    yield "Clip_11_minmax", single("Clip", x, ["x", "lo", "hi"],
                                   {"lo": f32(-0.5)[0:1].reshape(()),
                                    "hi": f32(0.7)[0:1].reshape(())}, opset=11)
    yield "Clip_13_max_only", single("Clip", x, ["x", "", "hi"], {"hi": np.float32(0.3)},
                                     opset=13)
    yield "Clip_none", single("Clip", x, ["x"])
    yield "Clip_6_attrs", single("Clip", x, ["x"], opset=6, min=-0.2, max=0.4)
    yield "Softmax_last", single("Softmax", {"x": [2, 3, 4]}, ["x"])
    yield "Softmax_axis1_13", single("Softmax", x, ["x"], axis=1)
    yield "Softmax_axis1_11", single("Softmax", {"x": [2, 3, 4]}, ["x"], axis=1, opset=11)
    yield "Softmax_default_11", single("Softmax", {"x": [2, 3, 4]}, ["x"], opset=11)


def _after_abs(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model``, whose node reads "a", with a = Abs(x) in front."""
    model.graph.node.insert(0, helper.make_node("Abs", ["x"], ["a"], name="abs"))
    return model


def unary_cases():
    """Issue 22's element-wise ops (Log, Sqrt and a tensor Pow read Abs(x): NaN is no value
    to compare)."""
    x = {"x": [2, 3, 4, 5]}
    for op in ("Neg", "Abs", "Exp", "Sign", "Erf", "Softplus", "Softsign", "Elu", "Selu",
               "Celu", "ThresholdedRelu", "Shrink"):
        yield op, single(op, x, ["x"])
    yield "Elu_alpha", single("Elu", x, ["x"], alpha=0.3)
    yield "Selu_params", single("Selu", x, ["x"], alpha=1.2, gamma=0.8)
    yield "Shrink_params", single("Shrink", x, ["x"], lambd=0.2, bias=0.1)
    yield "Mish_18", single("Mish", x, ["x"], opset=18)
    yield "Gelu_20", single("Gelu", x, ["x"], opset=20)
    yield "Gelu_tanh_20", single("Gelu", x, ["x"], opset=20, approximate="tanh")
    yield "Reciprocal", single("Reciprocal", x, ["x"])
    for op in ("Log", "Sqrt"):
        yield op, _after_abs(single(op, x, ["a"]))
    yield "Pow_scalar", single("Pow", x, ["x", "e"], {"e": f32(2.0)})
    yield "Pow_int_exponent", single("Pow", x, ["x", "e"], {"e": np.int64(3)})
    yield "Pow_tensor", _after_abs(single("Pow", {"x": [2, 3], "e": [3]}, ["a", "e"]))
    yield "PRelu_channel", single("PRelu", x, ["x", "s"], {"s": w(3, 1, 1)})
    yield "Max_two", single("Max", {"a": [2, 3, 4], "b": [4]}, ["a", "b"])
    yield "Min_two", single("Min", {"a": [2, 3, 4], "b": [3, 1]}, ["a", "b"])
    yield "LogSoftmax_last", single("LogSoftmax", {"x": [2, 3, 4]}, ["x"])
    yield "LogSoftmax_axis1_11", single("LogSoftmax", {"x": [2, 3, 4]}, ["x"], axis=1,
                                        opset=11)


def pool_cases():
    x = {"x": [1, 2, 8, 8]}
    yield "max_k2s2", single("MaxPool", x, ["x"], kernel_shape=[2, 2], strides=[2, 2])
    yield "max_k3s2p1", single("MaxPool", x, ["x"], kernel_shape=[3, 3], strides=[2, 2],
                               pads=[1, 1, 1, 1])
    yield "max_ceil", single("MaxPool", {"x": [1, 2, 9, 9]}, ["x"], kernel_shape=[3, 3],
                             strides=[2, 2], ceil_mode=1)
    yield "max_ceil_pad", single("MaxPool", {"x": [1, 2, 8, 8]}, ["x"], kernel_shape=[3, 3],
                                 strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)
    for op in ("MaxPool", "AveragePool"):  # a window starting past the input is dropped
        yield f"{op}_ceil_drops_last_window", single(
            op, {"x": [1, 2, 5, 2]}, ["x"], kernel_shape=[2, 1], strides=[2, 2], ceil_mode=1)
    yield "max_dilation", single("MaxPool", x, ["x"], kernel_shape=[2, 2], dilations=[2, 2])
    yield "max_same_upper", single("MaxPool", {"x": [1, 2, 7, 7]}, ["x"], kernel_shape=[3, 3],
                                   strides=[2, 2], auto_pad="SAME_UPPER")
    yield "max_asym", single("MaxPool", x, ["x"], kernel_shape=[3, 2], pads=[0, 1, 2, 0])
    yield "avg_k2s2", single("AveragePool", x, ["x"], kernel_shape=[2, 2], strides=[2, 2])
    for include in (0, 1):
        yield f"avg_k3s2p1_cip{include}", single(
            "AveragePool", x, ["x"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
            count_include_pad=include)
        yield f"avg_ceil_cip{include}", single(
            "AveragePool", {"x": [1, 2, 9, 9]}, ["x"], kernel_shape=[3, 3], strides=[2, 2],
            pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=include)
    yield "avg_same_upper", single("AveragePool", {"x": [1, 2, 7, 7]}, ["x"],
                                   kernel_shape=[2, 2], strides=[2, 2], auto_pad="SAME_UPPER")
    yield "global_avg", single("GlobalAveragePool", {"x": [2, 3, 5, 7]}, ["x"])
    yield "reduce_mean_13", single("ReduceMean", x, ["x"], axes=[2, 3], opset=13)
    yield "reduce_mean_13_nokeep", single("ReduceMean", x, ["x"], axes=[-1], keepdims=0,
                                          opset=13, out_rank=3)
    yield "reduce_mean_18_input", single("ReduceMean", x, ["x", "axes"], {"axes": i64(2, 3)},
                                         opset=18)
    yield "reduce_mean_18_all", single("ReduceMean", x, ["x"], opset=18, keepdims=0,
                                       out_rank=0)


def shape_op_cases():
    x = {"x": [2, 3, 4, 5]}
    yield "concat_axis1", single("Concat", {"a": [1, 2, 3, 3], "b": [1, 4, 3, 3]}, ["a", "b"],
                                 axis=1)
    yield "concat_neg_const", single("Concat", {"a": [2, 3]}, ["a", "c", "a"], {"c": w(2, 2)},
                                     axis=-1)
    for axis in (0, 1, 2, -1):
        yield f"flatten_{axis}", single("Flatten", x, ["x"], axis=axis, out_rank=2)
    yield "reshape_minus1", single("Reshape", x, ["x", "s"], {"s": i64(2, -1)}, out_rank=2)
    yield "reshape_zero", single("Reshape", x, ["x", "s"], {"s": i64(0, 0, 20)}, out_rank=3)
    yield "transpose_default", single("Transpose", x, ["x"])
    yield "transpose_nhwc", single("Transpose", x, ["x"], perm=[0, 2, 3, 1])
    yield "squeeze_11", single("Squeeze", {"x": [1, 3, 1, 5]}, ["x"], axes=[0, 2], opset=11,
                               out_rank=2)
    yield "squeeze_13", single("Squeeze", {"x": [1, 3, 1, 5]}, ["x", "a"], {"a": i64(-2)},
                               opset=13, out_rank=3)
    yield "squeeze_all", single("Squeeze", {"x": [1, 3, 1, 5]}, ["x"], out_rank=2)
    yield "unsqueeze_11", single("Unsqueeze", {"x": [3, 5]}, ["x"], axes=[0, 3], opset=11,
                                 out_rank=4)
    yield "unsqueeze_13", single("Unsqueeze", {"x": [3, 5]}, ["x", "a"], {"a": i64(-1, 0)},
                                 opset=13, out_rank=4)
    yield "pad_const", single("Pad", {"x": [1, 2, 4, 4]}, ["x", "p", "v"],
                              {"p": i64(0, 0, 1, 2, 0, 0, 2, 1), "v": np.float32(0.5)})
    yield "pad_reflect", single("Pad", {"x": [1, 2, 4, 4]}, ["x", "p"],
                                {"p": i64(0, 0, 1, 2, 0, 0, 2, 1)}, mode="reflect")
    yield "pad_edge", single("Pad", {"x": [1, 2, 4, 4]}, ["x", "p"],
                             {"p": i64(0, 0, 1, 1, 0, 0, 1, 1)}, mode="edge")
    yield "pad_negative", single("Pad", {"x": [1, 2, 5, 5]}, ["x", "p"],
                                 {"p": i64(0, 0, -1, 2, 0, 0, 1, -2)})
    yield "pad_18_axes", single("Pad", {"x": [1, 2, 4, 4]}, ["x", "p", "", "a"],
                                {"p": i64(1, 2, 3, 0), "a": i64(2, -1)}, opset=18)
    yield "pad_19_wrap", single("Pad", {"x": [1, 2, 4, 4]}, ["x", "p"],
                                {"p": i64(0, 0, 1, 2, 0, 0, 2, 1)}, mode="wrap", opset=19)
    yield "identity", single("Identity", x, ["x"])
    yield "dropout_12", single("Dropout", x, ["x", "r"], {"r": np.float32(0.3)}, opset=12)
    yield "batchnorm_4d", single("BatchNormalization", {"x": [2, 3, 4, 4]},
                                 ["x", "s", "b", "m", "v"],
                                 {"s": w(3), "b": w(3), "m": w(3),
                                  "v": (np.abs(w(3)) + 0.5).astype(np.float32)}, epsilon=1e-3)
    yield "batchnorm_2d", single("BatchNormalization", {"x": [4, 3]}, ["x", "s", "b", "m", "v"],
                                 {"s": w(3), "b": w(3), "m": w(3),
                                  "v": (np.abs(w(3)) + 0.5).astype(np.float32)})
    yield "slice_steps", single("Slice", x, ["x", "s", "e", "a", "t"],
                                {"s": i64(1, -1), "e": i64(3, -6), "a": i64(1, 3),
                                 "t": i64(1, -2)})
    yield "slice_default_axes", single("Slice", x, ["x", "s", "e"],
                                       {"s": i64(0, 1), "e": i64(1, 100)})
    yield "gather_channels", single("Gather", x, ["x", "i"], {"i": i64(2, 0)}, axis=1)
    yield "gather_scalar", single("Gather", x, ["x", "i"], {"i": np.int64(-1)}, axis=3,
                                  out_rank=3)


def resize_cases():
    x = {"x": [1, 2, 4, 5]}
    empty = np.zeros(0, np.float32)
    yield "nearest_scales_asym", single("Resize", x, ["x", "", "sc"],
                                        {"sc": f32(1, 1, 2, 2)}, mode="nearest",
                                        coordinate_transformation_mode="asymmetric",
                                        nearest_mode="floor")
    yield "nearest_sizes_half", single("Resize", x, ["x", "", "", "sz"],
                                       {"sz": i64(1, 2, 7, 9)}, mode="nearest",
                                       nearest_mode="round_prefer_ceil")
    yield "nearest_default", single("Resize", x, ["x", "", "sc"], {"sc": f32(1, 1, 3, 2)})
    yield "linear_half_pixel", single("Resize", x, ["x", "", "sc"], {"sc": f32(1, 1, 2, 2)},
                                      mode="linear")
    yield "linear_align", single("Resize", x, ["x", "", "", "sz"], {"sz": i64(1, 2, 7, 3)},
                                 mode="linear", coordinate_transformation_mode="align_corners")
    yield "linear_pytorch", single("Resize", x, ["x", "", "", "sz"], {"sz": i64(1, 2, 1, 10)},
                                   mode="linear",
                                   coordinate_transformation_mode="pytorch_half_pixel")
    yield "linear_down", single("Resize", {"x": [1, 2, 8, 8]}, ["x", "", "", "sz"],
                                {"sz": i64(1, 2, 5, 3)}, mode="linear")
    yield "opset11_roi", single("Resize", x, ["x", "roi", "sc"],
                                {"roi": empty, "sc": f32(1, 1, 2, 2)}, mode="linear",
                                opset=11)
    yield "opset18_axes", single("Resize", x, ["x", "", "", "sz"], {"sz": i64(6, 10)},
                                 axes=[2, 3], mode="nearest", opset=18)
    yield "opset19_symmetric", single("Resize", x, ["x", "", "sc"], {"sc": f32(1, 1, 1.5, 2)},
                                      mode="linear", opset=19,
                                      coordinate_transformation_mode="half_pixel_symmetric")
    yield "upsample_opset9", single("Upsample", x, ["x", "sc"], {"sc": f32(1, 1, 2, 2)},
                                    opset=9, mode="nearest")


def structural_cases():
    """Issue 22's structural operators."""
    yield "lrn_defaults", single("LRN", {"x": [1, 8, 5, 5]}, ["x"], size=5)
    yield "lrn_batch2", single("LRN", {"x": [2, 3, 4, 2]}, ["x"], size=3, alpha=0.5, beta=0.6,
                               bias=2.0)
    x = {"x": [2, 3, 4, 5]}
    yield "reduce_sum_13_input", single("ReduceSum", x, ["x", "axes"], {"axes": i64(1, -1)},
                                        opset=13)
    yield "reduce_sum_11_attr", single("ReduceSum", x, ["x"], axes=[0, 2], keepdims=0, opset=11,
                                       out_rank=2)
    yield "reduce_max_13_attr", single("ReduceMax", x, ["x"], axes=[-2], keepdims=0, opset=13,
                                       out_rank=3)
    yield "reduce_max_18_all", single("ReduceMax", x, ["x"], opset=18, out_rank=4)
    for opset, inputs, consts, attrs in (
            (11, ["x"], {}, {"axis": 1, "split": [1, 2]}),
            (13, ["x", "s"], {"s": i64(3, 1, 1)}, {"axis": -1}),
            (18, ["x"], {}, {"axis": 3, "num_outputs": 2})):  # uneven: 3 + 2
        outputs = ["y0", "y1", "y2"][:len(consts.get("s", attrs.get("split", [0, 0])))]
        graph = helper.make_graph(
            [helper.make_node("Split", inputs, outputs, name="the_node", **attrs)], "split",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4, 5])],
            [helper.make_tensor_value_info(o, TensorProto.FLOAT, ["a", "b", "c", "d"])
             for o in outputs],
            [numpy_helper.from_array(v, n) for n, v in consts.items()])
        yield f"split_{opset}", helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)
    yield "expand_rank_up", single("Expand", {"x": [3, 1]}, ["x", "s"], {"s": i64(2, 1, 4)},
                                   out_rank=3)
    yield "expand_keep_dims", single("Expand", {"x": [1, 3, 1, 5]}, ["x", "s"],
                                     {"s": i64(2, 1, 4, 1)})
    yield "tile", single("Tile", {"x": [2, 3, 4]}, ["x", "r"], {"r": i64(1, 2, 3)})
    yield "layer_norm_last", single("LayerNormalization", {"x": [2, 5, 8]}, ["x", "s", "b"],
                                    {"s": w(8), "b": w(8)})
    yield "layer_norm_axis1_no_bias", single("LayerNormalization", {"x": [2, 3, 4]}, ["x", "s"],
                                             {"s": w(3, 4)}, axis=1, epsilon=1e-3)
    mask = RNG.random((1, 3, 1, 5)) > 0.5
    yield "where_const_cond", single("Where", {"a": [2, 3, 4, 5], "b": [5]}, ["c", "a", "b"],
                                     {"c": mask})
    yield "sum_three_broadcast", single("Sum", {"a": [2, 3, 4], "b": [4]}, ["a", "b", "c"],
                                        {"c": w(3, 1)}, out_rank=3)
    yield "sum_one", single("Sum", {"a": [2, 3]}, ["a"])
    yield "instance_norm", single("InstanceNormalization", {"x": [2, 3, 4, 5]}, ["x", "s", "b"],
                                  {"s": w(3), "b": w(3)}, epsilon=1e-3)
    # 1-D windows, run as 2-D with H = 1
    x1 = {"x": [2, 4, 11]}
    yield "conv1d_dilated_group", single("Conv", x1, ["x", "W", "B"],
                                         {"W": w(6, 2, 3), "B": w(6)}, group=2, dilations=[2],
                                         pads=[1, 2], strides=[2])
    yield "conv1d_same_upper_11", single("Conv", x1, ["x", "W"], {"W": w(3, 4, 4)},
                                         auto_pad="SAME_UPPER", opset=11)
    yield "conv_transpose1d", single("ConvTranspose", x1, ["x", "W"], {"W": w(4, 3, 3)},
                                     strides=[2], pads=[1, 0], output_padding=[1])
    yield "maxpool1d_ceil", single("MaxPool", x1, ["x"], kernel_shape=[3], strides=[2],
                                   pads=[1, 1], ceil_mode=1)
    yield "avgpool1d", single("AveragePool", x1, ["x"], kernel_shape=[4], strides=[3],
                              pads=[2, 1], count_include_pad=1, opset=11)
    # 3-D windows, run as 2-D ones depth by depth
    x3 = {"x": [2, 4, 5, 4, 3]}
    yield "conv3d_11", single("Conv", x3, ["x", "W", "B"], {"W": w(2, 4, 3, 2, 2), "B": w(2)},
                              pads=[1, 0, 1, 0, 1, 0], strides=[2, 1, 1], opset=11)
    yield "maxpool3d", single("MaxPool", x3, ["x"], kernel_shape=[2, 2, 2], pads=[1] * 6)
    yield "avgpool3d_13", single("AveragePool", x3, ["x"], kernel_shape=[3, 1, 2],
                                 pads=[2, 0, 0, 1, 0, 1], opset=13)


CASES = [
    (f"{family.__name__[:-6]}/{name}", model)
    for family in (conv_cases, conv_transpose_cases, gemm_cases, elementwise_cases,
                   activation_cases, unary_cases, pool_cases, shape_op_cases, resize_cases,
                   structural_cases)
    for name, model in family()
]


@pytest.mark.parametrize("model", [m for _, m in CASES], ids=[n for n, _ in CASES])
def test_one_node_matches_onnxruntime(model: onnx.ModelProto, tmp_path) -> None:
    graph, error = import_and_compare(model, tmp_path)
    assert error <= TOLERANCE, f"scaled error {error:.3g}"
    assert graph.nodes, "the optimised graph computes nothing"


def test_every_supported_op_is_covered() -> None:
    from dnn64build.frontend import SUPPORTED_OPS

    covered = {node.op_type for _, model in CASES for node in model.graph.node}
    covered |= {"Constant", "Shape", "Cast", "Floor", "Ceil"}  # tested in shape sub-graphs
    assert set(SUPPORTED_OPS) <= covered


@pytest.mark.parametrize("group", [1, 4])
def test_ir3_model_with_small_weights_matches_onnxruntime(group: int, tmp_path) -> None:
    """IR version 3 (old PyTorch exports): initializers are also graph inputs. Small weights
    (a depthwise kernel) once left the Conv's output shape unresolved."""
    weights = {"W": w(4, 4 // group, 3, 3), "B": w(4)}
    node = helper.make_node("Conv", ["x", "W", "B"], ["y"], group=group, dilations=[2, 2],
                            kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    graph = helper.make_graph(
        [node], "ir3",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 6, 6])]
        + [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape)
           for n, v in weights.items()],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, 4, 4])],
        [numpy_helper.from_array(v, n) for n, v in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 6)], ir_version=3)
    _, error = import_and_compare(model, tmp_path)
    assert error <= TOLERANCE, f"scaled error {error:.3g}"
