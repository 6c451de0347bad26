"""Structural operators of issue 22 (LRN, LayerNormalization, ReduceSum, ReduceMax): kernels
vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from kernels_ctypes import i32
from kernels_onnxref import assert_close_to_scale, run_node


@pytest.mark.parametrize("shape,size,alpha,beta,bias", [
    ((1, 8, 5, 5), 5, 1e-4, 0.75, 1.0),      # AlexNet / GoogLeNet
    ((2, 3, 4, 2), 3, 0.5, 0.6, 2.0),        # strong normalisation, batch 2
    ((1, 6, 7, 1), 3, 2.0, 1.2, 0.5),        # H x 1
    ((1, 2, 3, 3), 7, 1.0, 0.75, 1.0),       # window wider than the channels
])
def test_lrn_f32_matches_onnxruntime(kernels, shape, size, alpha, beta, bias) -> None:
    x = (3 * np.random.default_rng(71).standard_normal(shape)).astype(np.float32)
    attrs = {"size": size, "alpha": alpha, "beta": beta, "bias": bias}
    want = run_node("LRN", {"x": x}, attrs)
    y = np.empty_like(x)
    kernels.dnn64_lrn_f32(shape[0], shape[1], int(np.prod(shape[2:])), size, alpha, beta, bias,
                          x, y)
    assert_close_to_scale(y, want)



def test_lrn_f32_even_size_matches_the_spec_formula(kernels) -> None:
    """onnxruntime refuses an even size (and onnx.reference's LRN loops over the batch, not
    the channels): brute force from the spec's window [c - floor((size-1)/2),
    c + ceil((size-1)/2)]."""
    x = (3 * np.random.default_rng(72).standard_normal((2, 6, 3))).astype(np.float64)
    size, alpha, beta, bias = 4, 2.0, 1.2, 0.5
    want = np.empty_like(x)
    for c in range(6):
        window = x[:, max(0, c - 1):min(6, c + 3)]
        want[:, c] = x[:, c] / (bias + alpha / size * (window ** 2).sum(axis=1)) ** beta
    x32, y = x.astype(np.float32), np.empty(x.shape, np.float32)
    kernels.dnn64_lrn_f32(2, 6, 3, size, alpha, beta, bias, x32, y)
    assert_close_to_scale(y, want)


REDUCE_CASES = [((2, 3, 4, 5), (2, 3)), ((2, 3, 4, 5), (1,)), ((2, 3, 4, 5), (0, 2)),
                ((3, 4, 5), (0, 1, 2)), ((2, 1, 3, 2, 2, 3), (1, 3, 5))]


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMax"])
@pytest.mark.parametrize("shape,axes", REDUCE_CASES)
def test_reduce_f32_matches_onnxruntime(kernels, op, shape, axes) -> None:
    x = np.random.default_rng(73).standard_normal(shape).astype(np.float32)
    x.flat[-1] = -np.inf  # ReduceMax starts from the first element, not from a finite bound
    x.flat[0] = x.flat[1] = -np.inf if op == "ReduceMax" else 0.0
    if op == "ReduceSum":  # axes an input from opset 13, ReduceMax's only from 18
        want = run_node(op, {"x": x}, {"keepdims": 1}, {"axes": np.array(axes, np.int64)})
    else:
        want = run_node(op, {"x": x}, {"keepdims": 1, "axes": list(axes)})
    y = np.empty(want.shape, np.float32)
    fn = {"ReduceSum": kernels.dnn64_reduce_sum_f32, "ReduceMax": kernels.dnn64_reduce_max_f32}
    fn[op](len(shape), i32(shape), sum(1 << a for a in axes), x, y)
    np.testing.assert_array_equal(np.isinf(y), np.isinf(want))
    finite = ~np.isinf(want)
    assert_close_to_scale(y[finite], want[finite])


@pytest.mark.parametrize("shape,axes", REDUCE_CASES)
def test_reduce_max_s8_is_exact(kernels, shape, axes) -> None:
    x = np.random.default_rng(74).integers(-128, 128, shape, dtype=np.int8)
    want = x.max(axis=axes, keepdims=True)
    y = np.empty(want.shape, np.int8)
    kernels.dnn64_reduce_max_s8(len(shape), i32(shape), sum(1 << a for a in axes), x, y)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("shape,axis,bias", [((2, 3, 8), -1, True), ((4, 6, 5), 1, False),
                                             ((1, 197, 192), -1, True)])
def test_layer_norm_f32_matches_onnxruntime(kernels, shape, axis, bias) -> None:
    rng = np.random.default_rng(75)
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    row = shape[axis % len(shape):]
    consts = {"scale": rng.standard_normal(row).astype(np.float32)}
    if bias:
        consts["bias"] = rng.standard_normal(row).astype(np.float32)
    want = run_node("LayerNormalization", {"x": x}, {"axis": axis, "epsilon": 1e-3}, consts)
    inner = int(np.prod(row))
    y = np.empty_like(x)
    kernels.dnn64_layer_norm_f32(x.size // inner, inner, 1e-3, x, consts["scale"],
                                 consts.get("bias"), y)
    assert_close_to_scale(y, want)
