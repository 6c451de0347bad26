"""Softmax and ReduceMean: fp32 vs onnxruntime, int8 bit-exact vs intmath/numpy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from kernels_ctypes import i32
from kernels_onnxref import assert_close_to_scale, run_node

from dnn64build.quant import intmath as im


def _outer_inner(shape: tuple[int, ...], axis: int) -> tuple[int, int, int]:
    return math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])


@pytest.mark.parametrize("shape,axis", [((3, 10), 1), ((2, 4, 3, 5), 1), ((2, 3, 7), 2),
                                        ((5, 2), 0)])
def test_softmax_f32_matches_onnxruntime(kernels, shape, axis) -> None:
    x = (4 * np.random.default_rng(61).standard_normal(shape)).astype(np.float32)
    x.flat[0] = 80.0  # large logits must not overflow
    want = run_node("Softmax", {"x": x}, {"axis": axis})
    y = np.empty_like(x)
    kernels.dnn64_softmax_f32(*_outer_inner(shape, axis), x, y)
    assert_close_to_scale(y, want)


@pytest.mark.parametrize("shape,axis", [((3, 10), 1), ((2, 4, 3, 5), 1), ((2, 3, 7), 2),
                                        ((5, 2), 0)])
def test_log_softmax_f32_matches_onnxruntime(kernels, shape, axis) -> None:
    x = (4 * np.random.default_rng(63).standard_normal(shape)).astype(np.float32)
    x.flat[0] = 80.0  # large logits must not overflow
    want = run_node("LogSoftmax", {"x": x}, {"axis": axis})
    y = x.copy()
    kernels.dnn64_log_softmax_f32(*_outer_inner(shape, axis), y, y)  # in place
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape,axis", [((3, 10), 1), ((2, 4, 3, 5), 1), ((4, 1000), 1)])
@pytest.mark.parametrize("in_scale", [0.02, 0.1, 0.5])
def test_softmax_s8_bit_exact(kernels, shape, axis, in_scale) -> None:
    x = np.random.default_rng(62).integers(-128, 128, shape, dtype=np.int8)
    table = im.softmax_exp_table(in_scale)
    mult, shift = im.softmax_out_multiplier(1 / 256)
    want = im.softmax_s8(x, table, mult, shift, -128, axis=axis)
    y = np.empty_like(x)
    kernels.dnn64_softmax_s8(*_outer_inner(shape, axis), x, table, mult, shift, -128, y)
    np.testing.assert_array_equal(y, want)
    # the integer softmax is within 1.5 output steps of the real one
    real = run_node("Softmax", {"x": (x.astype(np.float32) * in_scale)}, {"axis": axis})
    assert np.max(np.abs((y.astype(np.float64) + 128) / 256 - real)) <= 1.5 / 256


REDUCE_CASES = [((2, 3, 4, 5), (2, 3)), ((2, 3, 4, 5), (1,)), ((2, 3, 4, 5), (0, 2)),
                ((3, 4, 5), (0, 1, 2)), ((2, 1, 3, 2, 2, 3), (1, 3, 5))]


@pytest.mark.parametrize("shape,axes", REDUCE_CASES)
def test_reduce_mean_f32_matches_onnxruntime(kernels, shape, axes) -> None:
    x = np.random.default_rng(63).standard_normal(shape).astype(np.float32)
    want = run_node("ReduceMean", {"x": x}, {"axes": list(axes), "keepdims": 1})
    y = np.empty(want.shape, np.float32)
    kernels.dnn64_reduce_mean_f32(len(shape), i32(shape), sum(1 << a for a in axes), x, y)
    assert_close_to_scale(y, want)


# trailing axes (contiguous sums): a classifier's spatial mean, long runs, extreme values
REDUCE_S8_CASES = [*REDUCE_CASES, ((1, 64, 7, 7), (2, 3)), ((2, 3, 1100), (2,))]


@pytest.mark.parametrize("shape,axes", REDUCE_S8_CASES)
@pytest.mark.parametrize("values", ["random", "max", "min"])
def test_reduce_mean_s8_bit_exact(kernels, shape, axes, values) -> None:
    x = np.random.default_rng(64).integers(-128, 128, shape, dtype=np.int8)
    if values != "random":
        x[:] = 127 if values == "max" else -128
    count = math.prod(shape[a] for a in axes)
    mult, shift = im.quantize_multiplier(0.05 / (0.03 * count))
    total = (x.astype(np.int64) - 9).sum(axis=axes)
    want = np.clip(im.multiply_by_quantized_multiplier(total, mult, shift).astype(np.int64) - 4,
                   -128, 127).astype(np.int8)
    y = np.empty(want.shape, np.int8)
    kernels.dnn64_reduce_mean_s8(len(shape), i32(shape), sum(1 << a for a in axes), 9, mult,
                                 shift, -4, x, y)
    np.testing.assert_array_equal(y, want)
