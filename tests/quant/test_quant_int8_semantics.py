"""run_int8 node semantics on hand-computed values: output-stage rounding ties,
saturation, negative zero points, clamps, conversions, pooling division.

The fixed-point primitives themselves are tested in test_intmath.py; here every expected
value is worked out by hand from docs/quant-ir.md.
"""

from __future__ import annotations

import numpy as np
import pytest
from quant_testlib import int8_graph

from dnn64build.quant import run_int8
from dnn64build.quant.qparams import activation_qparams, clamp_bounds, f32

Q = {"scale": 0.1, "zero_point": 0}
CONV_1X1 = {"kernel_shape": [1, 1], "strides": [1, 1], "dilations": [1, 1],
            "pads": [0, 0, 0, 0], "group": 1}
ONE = (1 << 30, 1)  # quantize_multiplier(1.0)
QUARTER = (1 << 30, -1)  # quantize_multiplier(0.25)


def _conv(x: list[int], w: int, bias: int, mult: tuple[int, int], x_zp: int = 0,
          out_zp: int = 0, act: tuple[int, int] = (-128, 127)) -> list[int]:
    p = {"x_zero_point": x_zp, "out_zero_point": out_zp, "multiplier": [mult[0]],
         "shift": [mult[1]], "act_min": act[0], "act_max": act[1], "lut": None}
    g = int8_graph("Conv", {"x": ([1, 1, 1, len(x)], Q)}, [1, 1, 1, len(x)],
                   {**CONV_1X1, "int8": p},
                   {"w": np.array([[[[w]]]], np.int8), "b": np.array([bias], np.int32)})
    return run_int8(g, {"x": np.array(x, np.int8).reshape(1, 1, 1, -1)})["y"].ravel().tolist()


def test_conv_output_stage_rounds_ties_half_away_from_zero() -> None:
    # acc * 0.25: 6 -> 1.5 -> 2, -6 -> -1.5 -> -2, 2 -> 0.5 -> 1, -2 -> -1, 4 -> 1
    assert _conv([6, -6, 2, -2, 4], 1, 0, QUARTER) == [2, -2, 1, -1, 1]


def test_conv_output_stage_adds_negative_zero_points() -> None:
    # x_zp -100: acc = 2 * (x + 100) + 3; * 0.25 as TFLite does it (0.5 in the doubling
    # high mul, rounded, then a rounding shift by 1); + (-7)
    # x=-100: 3 -> 1.5 -> 2 -> 1 -> -6; x=-95: 13 -> 6.5 -> 7 -> 3.5 -> 4 -> -3 (the double
    # rounding gives 4 where 13 / 4 = 3.25 would round to 3); x=-90: 23 -> 11.5 -> 12 -> 6 -> -1
    assert _conv([-100, -95, -90], 2, 3, QUARTER, x_zp=-100, out_zp=-7) == [-6, -3, -1]


def test_conv_output_stage_saturates() -> None:
    # (127 + 128) * 127 = 32385 -> 127; (-128 - 127) * 127 = -32385 -> -128
    assert _conv([127], 127, 0, ONE, x_zp=-128) == [127]
    assert _conv([-128], 127, 0, ONE, x_zp=127) == [-128]
    # bias alone beyond int8: 1000 -> 127, and a multiplier 1.0 leaves small values exact
    assert _conv([0, 5, -5], 1, 1000, ONE) == [127, 127, 127]
    assert _conv([0, 5, -5], 1, 0, ONE) == [0, 5, -5]


def test_conv_output_stage_clamps_to_fused_relu_bounds() -> None:
    # out zp -20: ReLU's act_min is the zero point; values below it clamp there
    assert _conv([-30, -20, 0, 10], 1, 0, ONE, out_zp=-20, act=(-20, 127)) == [-20, -20, -20,
                                                                             -10]


def test_conv_output_stage_applies_lookup_table_after_clamp() -> None:
    table = [(i - 128) // 2 for i in range(256)]  # y = floor(q / 2)
    p = {"x_zero_point": 0, "out_zero_point": 0, "multiplier": [ONE[0]], "shift": [ONE[1]],
         "act_min": -128, "act_max": 127, "lut": table}
    g = int8_graph("Conv", {"x": ([1, 1, 1, 3], Q)}, [1, 1, 1, 3], {**CONV_1X1, "int8": p},
                   {"w": np.array([[[[2]]]], np.int8), "b": np.array([0], np.int32)})
    out = run_int8(g, {"x": np.array([[[[100, -3, 5]]]], np.int8)})["y"].ravel().tolist()
    assert out == [63, -3, 5]  # 200 -> 127 -> 63; -6 -> -3; 10 -> 5


def test_gemm_per_channel_multipliers_and_bias() -> None:
    # a = [10, -4] with zp 2 -> [8, -6]; column 0: w [1, 1], bias 2 -> 4 * 1.0 = 4;
    # column 1: w [3, -1], bias -1 -> 24 + 6 - 1 = 29; * 0.25: 14.5 -> 15, 7.5 -> 8 (the
    # double rounding of test_conv_output_stage_adds_negative_zero_points); + 1
    p = {"x_zero_point": 2, "out_zero_point": 1, "multiplier": [ONE[0], QUARTER[0]],
         "shift": [ONE[1], QUARTER[1]], "act_min": -128, "act_max": 127, "lut": None}
    g = int8_graph("Gemm", {"a": ([1, 2], Q)}, [1, 2],
                   {"alpha": 1.0, "beta": 1.0, "transA": 0, "transB": 1, "int8": p},
                   {"w": np.array([[1, 1], [3, -1]], np.int8), "b": np.array([2, -1], np.int32)})
    assert run_int8(g, {"a": np.array([[10, -4]], np.int8)})["y"].tolist() == [[5, 9]]


def test_quantize_linear_rounds_half_to_even_and_saturates() -> None:
    from dnn64build.ir.graph import Graph, Node, Tensor

    g = Graph("t", ["x"], ["y"], {"x": Tensor([7], "float32", "input"),
                                  "y": Tensor([7], "int8", "output")},
              [Node("q", "QuantizeLinear", ["x"], ["y"],
                    {"int8": {"scale": 0.5, "zero_point": -3}})])
    x = np.array([0.25, 0.75, -0.25, -0.75, 1000.0, -1000.0, np.nan], np.float32)
    # x / 0.5 = 0.5, 1.5, -0.5, -1.5 -> 0, 2, -0, -2 (ties to even); then + (-3)
    assert run_int8(g, {"x": x})["y"].tolist() == [-3, -1, -3, -5, 127, -128, -3]


def test_dequantize_and_requantize() -> None:
    from dnn64build.ir.graph import Graph, Node, Tensor

    g = Graph("t", ["x"], ["y"], {"x": Tensor([3], "int8", "input"),
                                  "y": Tensor([3], "float32", "output")},
              [Node("dq", "DequantizeLinear", ["x"], ["y"],
                    {"int8": {"scale": 0.5, "zero_point": -128}})])
    assert run_int8(g, {"x": np.array([-128, 0, 127], np.int8)})["y"].tolist() == [
        0.0, 64.0, 127.5]
    # requantize by 0.25 from zp 10 to zp -5: (x - 10) * 0.25 - 5, ties away from zero
    p = {"x_zero_point": 10, "multiplier": QUARTER[0], "shift": QUARTER[1], "out_zero_point": -5}
    g = int8_graph("Requantize", {"x": ([4], Q)}, [4], {"int8": p})
    assert run_int8(g, {"x": np.array([16, 4, 12, -128], np.int8)})["y"].tolist() == [
        -3, -7, -4, -40]  # 1.5 -> 2, -1.5 -> -2, 0.5 -> 1, -34.5 -> -35


def test_average_pool_divides_half_away_and_counts_padding_as_zero_point() -> None:
    attrs = {"kernel_shape": [2, 2], "strides": [2, 2], "dilations": [1, 1],
             "pads": [0, 0, 0, 0], "ceil_mode": 0, "count_include_pad": 0,
             "int8": {"x_zero_point": 0, "act_min": -128, "act_max": 127}}
    g = int8_graph("AveragePool", {"x": ([1, 1, 2, 4], Q)}, [1, 1, 1, 2], attrs)
    x = np.array([[[[1, 2, -1, -2], [1, 2, -1, -2]]]], np.int8)  # sums 6, -6 over 4
    assert run_int8(g, {"x": x})["y"].ravel().tolist() == [2, -2]
    # 1x1 input, 2x2 window with pads [1, 1, 0, 0] counting pads: x = 9, three pads of
    # zero point 3: (9 + 9) / 4 = 4.5 -> 5
    attrs.update(pads=[1, 1, 0, 0], count_include_pad=1,
                 int8={"x_zero_point": 3, "act_min": -128, "act_max": 127})
    g = int8_graph("AveragePool", {"x": ([1, 1, 1, 1], Q)}, [1, 1, 1, 1], attrs)
    assert run_int8(g, {"x": np.full((1, 1, 1, 1), 9, np.int8)})["y"].item() == 5


def test_max_pool_window_without_input_gives_minus_128() -> None:
    attrs = {"kernel_shape": [1, 1], "strides": [2, 2], "dilations": [1, 1],
             "pads": [0, 0, 0, 0], "ceil_mode": 1, "int8": {}}
    # a 1x3 input, stride 2, ceil_mode: windows at 0 and 2 both hold an input
    g = int8_graph("MaxPool", {"x": ([1, 1, 1, 3], Q)}, [1, 1, 1, 2], attrs)
    assert run_int8(g, {"x": np.array([[[[-5, 7, -9]]]], np.int8)})["y"].ravel().tolist() == [
        -5, -9]
    attrs["pads"] = [0, 2, 0, 0]  # the first window covers only padding
    g = int8_graph("MaxPool", {"x": ([1, 1, 1, 3], Q)}, [1, 1, 1, 3], attrs)
    # windows start at -2 (padding only), 0 and 2
    assert run_int8(g, {"x": np.array([[[[-5, 7, -9]]]], np.int8)})["y"].ravel().tolist() == [
        -128, -5, -9]


@pytest.mark.parametrize(("low", "high", "scale", "zero_point"), [
    (-1.0, 1.0, 2.0 / 255, -1),      # -128 + 127.5 = -0.5 -> -1 (ties away from zero)
    (0.0, 6.0, 6.0 / 255, -128),
    (-3.0, -1.0, 3.0 / 255, 127),    # widened to [-3, 0]
    (2.0, 5.1, 5.1 / 255, -128),     # widened to [0, 5.1]
    (0.0, 0.0, 1.0, 0),              # all-zero tensor
])
def test_activation_qparams(low: float, high: float, scale: float, zero_point: int) -> None:
    q = activation_qparams(low, high)
    assert q.scale == f32(scale)
    assert q.zero_point == zero_point


def test_clamp_bounds_of_fused_clip() -> None:
    q = activation_qparams(-1.0, 1.0)  # scale 2/255, zp -1
    # ReLU: act_min = zp; Clip(-0.5, 0.5): -1 + round(-63.75) = -65, -1 + 64 = 63
    assert clamp_bounds(0.0, None, q) == (-1, 127)
    assert clamp_bounds(-0.5, 0.5, q) == (-65, 63)
    assert clamp_bounds(-10.0, 10.0, q) == (-128, 127)
