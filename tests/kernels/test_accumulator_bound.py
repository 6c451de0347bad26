"""The int8 kernels at the edge of the accumulator bound (docs/quant-ir.md): inputs that
drive the int32 sum to exactly +-(2**31 - 1) give the integer references' results (and
test_sanitize.py reruns this file under UBSan, which aborts on a signed overflow)."""

from __future__ import annotations

import numpy as np
import pytest
from kernels_ctypes import ConvGeom, q8_out
from kernels_refs import conv_acc_int, output_stage

from dnn64build.quant import int8_ops
from dnn64build.quant import intmath as im
from dnn64build.quant.overflow import MAX_ACTIVATION_PRODUCT_TERMS, weighted_accumulator_bound

INT32_MAX = 2**31 - 1
MULT, SHIFT = im.quantize_multiplier(2.0**-25)  # brings +-2**31 into the int8 range


def _int8_params(x_zp: int, channels: int) -> dict:
    return {"x_zero_point": x_zp, "out_zero_point": 0, "multiplier": [MULT] * channels,
            "shift": [SHIFT] * channels, "act_min": -128, "act_max": 127, "lut": None}


# x at its extreme away from the zero point, so every term is 255 * 127 with one sign
@pytest.mark.parametrize("x_value,x_zp,sign", [(127, -128, 1), (-128, 127, -1)])
def test_gemm_s8_at_the_bound(kernels, x_value, x_zp, sign) -> None:
    m, k, n = 2, 64, 3
    a = np.full((m, k), x_value, np.int8)
    w = np.full((n, k), 127, np.int8)
    bias = np.full(n, sign * (INT32_MAX - k * 255 * 127), np.int32)
    assert weighted_accumulator_bound(w, bias, 0, x_zp).max() == INT32_MAX
    acc = (a.astype(np.int64) - x_zp) @ w.astype(np.int64).T + bias
    assert np.all(acc == sign * INT32_MAX)
    mult, shift = np.full(n, MULT, np.int32), np.full(n, SHIFT, np.int32)
    want = output_stage(acc, mult, shift, 0, -128, 127, None, axis=-1)
    reference = int8_ops.gemm([a, w, bias], {"transB": 1, "int8": _int8_params(x_zp, n)},
                              [m, n])
    np.testing.assert_array_equal(reference, want)
    y = np.zeros((m, n), np.int8)
    kernels.dnn64_gemm_s8(m, k, n, a, x_zp, w, 1, bias, mult, shift, 0, n, q8_out(0), y)
    np.testing.assert_array_equal(y, want)
    assert abs(int(want[0, 0])) == 64  # 2**31 * 2**-25: the sum really reached the edge


@pytest.mark.parametrize("kernel,pads", [((1, 1), (0, 0, 0, 0)), ((3, 3), (1, 1, 1, 1))])
def test_conv_s8_at_the_bound(kernels, kernel, pads) -> None:
    """1x1 (row-buffered) and generic paths; inner pixels reach the bound exactly."""
    c_in, c_out, h, wd = 8, 2, 5, 5
    x_zp = -128
    x = np.full((1, c_in, h, wd), 127, np.int8)
    w = np.full((c_out, c_in, *kernel), 127, np.int8)
    w[1] = -127  # channel 1 sums to -INT32_MAX
    terms = c_in * kernel[0] * kernel[1]
    bias = np.array([1, -1], np.int32) * (INT32_MAX - terms * 255 * 127)
    assert weighted_accumulator_bound(w, bias, 0, x_zp).max() == INT32_MAX
    acc = conv_acc_int(x, x_zp, w, bias, (1, 1), pads, (1, 1), 1)
    assert acc[0, 0, 2, 2] == INT32_MAX and acc[0, 1, 2, 2] == -INT32_MAX
    mult, shift = np.full(c_out, MULT, np.int32), np.full(c_out, SHIFT, np.int32)
    want = output_stage(acc, mult, shift, 0, -128, 127, None)
    attrs = {"kernel_shape": list(kernel), "strides": [1, 1], "pads": list(pads),
             "dilations": [1, 1], "group": 1, "int8": _int8_params(x_zp, c_out)}
    np.testing.assert_array_equal(int8_ops.conv([x, w, bias], attrs, list(want.shape)), want)
    y = np.zeros(want.shape, np.int8)
    geom = ConvGeom(1, c_in, h, wd, c_out, h, wd, kernel[0], kernel[1], 1, 1, 1, 1,
                    pads[0], pads[1], 1)
    kernels.dnn64_conv_s8(geom, x, x_zp, w, bias, mult, shift, 0, c_out, q8_out(0), y)
    np.testing.assert_array_equal(y, want)


def test_matmul_s8_of_two_activations_at_the_longest_accepted_reduction(kernels) -> None:
    k = MAX_ACTIVATION_PRODUCT_TERMS
    a = np.full((1, 1, k), 127, np.int8)
    b = np.full((k, 1), -128, np.int8)
    acc = np.array([[[k * 255 * -255]]], np.int64)  # (127 + 128) * (-128 - 127), k times
    assert acc.min() >= -INT32_MAX
    want = im.requantize(acc, MULT, SHIFT, 0)
    params = {"a_zero_point": -128, "b_zero_point": 127, "out_zero_point": 0,
              "multiplier": MULT, "shift": SHIFT, "act_min": -128, "act_max": 127, "lut": None}
    np.testing.assert_array_equal(int8_ops.matmul([a, b], {"int8": params}, [1, 1, 1]), want)
    y = np.zeros(want.shape, np.int8)
    kernels.dnn64_matmul_s8(1, 1, k, 1, a, k, -128, b, 0, 127, MULT, SHIFT, q8_out(0), y)
    np.testing.assert_array_equal(y, want)
