"""Gemm and MatMul kernels: fp32 vs onnxruntime, int8 bit-exact vs numpy, tiling."""

from __future__ import annotations

import numpy as np
import pytest
from kernels_ctypes import act_f32, q8_out
from kernels_onnxref import assert_close_to_scale, run_node
from kernels_refs import activation_f64, output_stage, requant_params


def _tiles(n: int) -> list[tuple[int, int]]:
    a, b = n // 3, 2 * n // 3
    return [(0, a), (a, b - a), (b, n - b)]


def _b_tile(b: np.ndarray, trans_b: int, begin: int, count: int) -> np.ndarray:
    """The tile layout: rows of B[n, k] when transposed, else columns of B[k, n]."""
    return np.ascontiguousarray(b[begin:begin + count] if trans_b else b[:, begin:begin + count])


@pytest.mark.parametrize("m,k,n", [(1, 16, 10), (5, 7, 9), (3, 33, 4)])
@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("act", [None, ("relu", 0, 0), ("sigmoid", 0, 0)])
def test_gemm_f32_tiled_matches_onnxruntime(kernels, m, k, n, trans_b, act) -> None:
    rng = np.random.default_rng(11)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if trans_b else (k, n)).astype(np.float32)
    c = rng.standard_normal(n).astype(np.float32)
    want = run_node("Gemm", {"a": a}, {"transB": trans_b}, {"b": b, "c": c})
    if act:
        want = activation_f64(act[0], want, act[1], act[2])
    y = np.full((m, n), np.nan, np.float32)
    cact = act_f32(*act) if act else None
    for begin, count in _tiles(n):
        kernels.dnn64_gemm_f32(m, k, n, a, _b_tile(b, trans_b, begin, count), trans_b,
                               np.ascontiguousarray(c[begin:begin + count]), begin, count, cact, y)
    assert_close_to_scale(y, want)


@pytest.mark.parametrize("a_shape,b_shape", [((2, 3, 4), (2, 4, 5)), ((3, 2, 6), (6, 3)),
                                             ((4, 3), (2, 3, 2))])
def test_matmul_f32_matches_onnxruntime(kernels, a_shape, b_shape) -> None:
    rng = np.random.default_rng(12)
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    want = run_node("MatMul", {"a": a, "b": b})
    batch = want.shape[0]
    m, k = a_shape[-2:]
    n = b_shape[-1]
    y = np.empty(want.shape, np.float32)
    kernels.dnn64_matmul_f32(batch, m, k, n, a, m * k if a.ndim == 3 else 0, b,
                             k * n if b.ndim == 3 else 0, y)
    assert_close_to_scale(y, want)


@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("a_zp,out_zp,act_min", [(-5, 7, -128), (100, -128, -128), (0, 3, 3)])
@pytest.mark.parametrize("k", [37, 2100])  # 2100: rows of B in chunks of 2048
def test_gemm_s8_tiled_bit_exact(kernels, trans_b, a_zp, out_zp, act_min, k) -> None:
    rng = np.random.default_rng(13)
    m, n = 4, 11
    a = rng.integers(-128, 128, (m, k), dtype=np.int8)
    w = rng.integers(-127, 128, (n, k), dtype=np.int8)  # per-output-channel rows
    bias = rng.integers(-4000, 4000, n).astype(np.int32)
    mult, shift = requant_params(rng, n)
    acc = (a.astype(np.int64) - a_zp) @ w.astype(np.int64).T + bias
    want = output_stage(acc, mult, shift, out_zp, act_min, 127, None, axis=-1)
    b = w if trans_b else np.ascontiguousarray(w.T)
    y = np.zeros((m, n), np.int8)
    for begin, count in _tiles(n):
        sl = slice(begin, begin + count)
        kernels.dnn64_gemm_s8(m, k, n, a, a_zp, _b_tile(b, trans_b, begin, count), trans_b,
                              np.ascontiguousarray(bias[sl]), np.ascontiguousarray(mult[sl]),
                              np.ascontiguousarray(shift[sl]), begin, count,
                              q8_out(out_zp, act_min, 127), y)
    np.testing.assert_array_equal(y, want)


def test_matmul_s8_bit_exact(kernels) -> None:
    rng = np.random.default_rng(14)
    batch, m, k, n = 3, 4, 9, 5
    a = rng.integers(-128, 128, (batch, m, k), dtype=np.int8)
    b = rng.integers(-128, 128, (k, n), dtype=np.int8)  # broadcast over the batch
    acc = (a.astype(np.int64) + 9) @ (b.astype(np.int64) - 4)
    from dnn64build.quant import intmath as im
    mult, shift = im.quantize_multiplier(0.0021)
    want = im.requantize(acc, mult, shift, -10)
    y = np.zeros(want.shape, np.int8)
    kernels.dnn64_matmul_s8(batch, m, k, n, a, m * k, -9, b, 0, 4, mult, shift, q8_out(-10), y)
    np.testing.assert_array_equal(y, want)
