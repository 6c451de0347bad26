"""Structural operators of issue 22 (LRN, ...): fp32 kernels vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
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
