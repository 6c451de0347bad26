"""Reference kernels against hand-computed values (independent of onnxruntime)."""

from __future__ import annotations

import numpy as np
import pytest

from dnn64build.ir import Graph, Node, Tensor, reference


def one_node(op: str, x: np.ndarray, out_shape: list[int], attrs: dict,
             consts: dict[str, np.ndarray] | None = None) -> np.ndarray:
    consts = consts or {}
    graph = Graph("t", ["x"], ["y"],
                  {"x": Tensor(list(x.shape), str(x.dtype), "input"),
                   "y": Tensor(out_shape, str(x.dtype), "output")},
                  [Node("n", op, ["x", *consts], ["y"], attrs)])
    for name, value in consts.items():
        graph.add_constant(name, value)
    return reference.run(graph, {"x": x})["y"]


WINDOW = {"kernel_shape": [3, 3], "strides": [1, 1], "dilations": [1, 1], "pads": [1, 1, 1, 1]}


def test_conv_sums_the_padded_neighbourhood() -> None:
    x = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
    w = np.ones((1, 1, 3, 3), np.float32)
    y = one_node("Conv", x, [1, 1, 3, 3], {**WINDOW, "group": 1}, {"w": w})
    assert y[0, 0, 0, 0] == 0 + 1 + 3 + 4 and y[0, 0, 1, 1] == 36


def test_conv_fused_relu6_and_bias() -> None:
    x = np.array([[[[-2.0]], [[10.0]]]], np.float32)  # 1x2x1x1
    w = np.eye(2, dtype=np.float32).reshape(2, 2, 1, 1)
    attrs = {"kernel_shape": [1, 1], "strides": [1, 1], "dilations": [1, 1],
             "pads": [0, 0, 0, 0], "group": 1, "activation": "relu6", "activation_params": {}}
    y = one_node("Conv", x, [1, 2, 1, 1], attrs, {"w": w, "b": np.array([1, 1], np.float32)})
    assert y.reshape(-1).tolist() == [0.0, 6.0]


@pytest.mark.parametrize(("include", "corner"), [(1, 4 / 9), (0, 1.0)])
def test_average_pool_count_include_pad(include: int, corner: float) -> None:
    x = np.ones((1, 1, 4, 4), np.float32)
    y = one_node("AveragePool", x, [1, 1, 4, 4],
                 {**WINDOW, "ceil_mode": 0, "count_include_pad": include})
    assert y[0, 0, 0, 0] == pytest.approx(corner) and y[0, 0, 1, 1] == pytest.approx(1.0)


def test_max_pool_ceil_mode_keeps_the_partial_window() -> None:
    x = np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5)
    attrs = {"kernel_shape": [2, 2], "strides": [2, 2], "dilations": [1, 1],
             "pads": [0, 0, 0, 0], "ceil_mode": 1}
    y = one_node("MaxPool", x, [1, 1, 3, 3], attrs)
    assert y[0, 0].tolist() == [[6, 8, 9], [16, 18, 19], [21, 23, 24]]


def test_resize_nearest_asymmetric_and_linear_align_corners() -> None:
    x = np.array([[[[1.0, 2.0]]]], np.float32)
    nearest = one_node("Resize", x, [1, 1, 1, 4],
                       {"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
                        "nearest_mode": "floor", "scales": [1.0, 1.0, 1.0, 2.0]})
    assert nearest.reshape(-1).tolist() == [1, 1, 2, 2]
    x = np.array([[[[0.0, 2.0]]]], np.float32)
    linear = one_node("Resize", x, [1, 1, 1, 3],
                      {"mode": "linear", "coordinate_transformation_mode": "align_corners",
                       "nearest_mode": "floor", "scales": [1.0, 1.0, 1.0, 1.5]})
    assert linear.reshape(-1).tolist() == [0, 1, 2]


def test_conv_transpose_scatters_each_input() -> None:
    x = np.array([[[[1.0, 2.0]]]], np.float32)  # 1x1x1x2
    w = np.ones((1, 1, 2, 2), np.float32)
    attrs = {"kernel_shape": [2, 2], "strides": [2, 2], "dilations": [1, 1],
             "pads": [0, 0, 0, 0], "group": 1, "output_padding": [0, 0]}
    y = one_node("ConvTranspose", x, [1, 1, 2, 4], attrs, {"w": w})
    assert y[0, 0].tolist() == [[1, 1, 2, 2], [1, 1, 2, 2]]


def test_integer_div_truncates_toward_zero() -> None:
    x = np.array([-7, 7], np.int64)
    y = one_node("Div", x, [2], {}, {"d": np.array([2, -2], np.int64)})
    assert y.tolist() == [-3, -3]


def test_slice_with_negative_step() -> None:
    x = np.arange(6, dtype=np.float32)
    y = one_node("Slice", x, [3], {"starts": [5], "ends": [-1], "axes": [0], "steps": [-2]})
    assert y.tolist() == [5, 3, 1]


def test_pending_parameter_inputs_are_absorbed_at_run_time() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = one_node("Reshape", x, [3, 2], {"allowzero": 0}, {"s": np.array([-1, 2], np.int64)})
    assert y.tolist() == [[0, 1], [2, 3], [4, 5]]


def test_run_checks_inputs() -> None:
    graph = Graph("t", ["x"], ["y"], {"x": Tensor([2], "float32", "input"),
                                      "y": Tensor([2], "float32", "output")},
                  [Node("n", "Relu", ["x"], ["y"])])
    with pytest.raises(ValueError, match="missing input 'x'"):
        reference.run(graph, {})
    with pytest.raises(ValueError, match=r"shape \[3\], expected \[2\]"):
        reference.run(graph, {"x": np.zeros(3)})
