"""QuantizeLinear/DequantizeLinear vs onnxruntime; requantize vs intmath."""

from __future__ import annotations

import numpy as np
import pytest
from kernels_onnxref import run_node

from dnn64build.quant import intmath as im
from dnn64build.quant.qparams import QParams, quantize_values


@pytest.mark.parametrize("scale,zp", [(0.1, 0), (0.037, -20), (0.5, 127)])
def test_quantize_matches_onnxruntime(kernels, scale, zp) -> None:
    rng = np.random.default_rng(71)
    steps = np.arange(-300, 300) + 0.5  # exact ties: round half to even
    x = np.concatenate([rng.standard_normal(500) * 10, steps * scale, [1e30, -1e30, 0.0]])
    x = x.astype(np.float32)
    want = run_node("QuantizeLinear", {"x": x}, {},
                    {"s": np.array(scale, np.float32), "z": np.array(zp, np.int8)},
                    out_dtype="int8")
    y = np.empty(x.shape, np.int8)
    kernels.dnn64_quantize_f32_s8(x, x.size, scale, zp, y)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("scale", [0.1, 0.037, 0.5, 1 / 255, 3.0, 1e-3, 0.018657])
@pytest.mark.parametrize("zp", [0, -128, 17])
def test_quantize_near_ties_bit_exact(kernels, scale, zp) -> None:
    """Around every half step (where x * (1 / scale) and x / scale may round apart), a
    few ulps either side, large values and specials: as the reference's division."""
    halves = (np.arange(-300, 300) + 0.5).astype(np.float32) * np.float32(scale)
    walk = [halves]
    for direction in (np.inf, -np.inf):
        v = halves
        for _ in range(4):
            v = np.nextafter(v, np.float32(direction))
            walk.append(v)
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 1e30, -1e30,
                         255 * scale, -255 * scale, 256 * scale], np.float32)
    rng = np.random.default_rng(72)
    x = np.concatenate([*walk, specials, (rng.standard_normal(2000) * 50 * scale)]).astype(
        np.float32)
    want = quantize_values(x, QParams(scale, zp))
    y = np.empty(x.shape, np.int8)
    kernels.dnn64_quantize_f32_s8(x, x.size, scale, zp, y)
    np.testing.assert_array_equal(y, want)


# scales whose reciprocal is exact (ties stay ties), at the limits of the fast path's
# reciprocal (|1 / scale| in (1e-30, 1e30)) and beyond it
EDGE_SCALES = [0.25, 2.0 ** -20, 1.0000001e-30, 9.9e-31, 1.1e-30, 9.9e29, 1.01e30, 3.0e38]


def _around(values: np.ndarray, ulps: int) -> np.ndarray:
    """values and the ulps ulps either side of each."""
    out = [values]
    for direction in (np.inf, -np.inf):
        v = values
        for _ in range(ulps):
            v = np.nextafter(v, np.float32(direction))
            out.append(v)
    return np.concatenate(out).astype(np.float32)


@pytest.mark.parametrize("scale", [0.0385445058, 0.1, 1 / 255, *EDGE_SCALES])
@pytest.mark.parametrize("zp", [-8, 127])
def test_quantize_edges_match_onnxruntime(kernels, scale, zp) -> None:
    """Steps and half steps up to past the fast path's 512 (2^21 at 2^-12 step), ulps either
    side, float bit patterns drawn uniformly (denormals, NaNs, infinities, huge values):
    onnxruntime's QuantizeLinear and the reference's numpy quantisation."""
    s = np.float32(scale)
    steps = np.arange(-1030, 1031, 0.5, dtype=np.float32)
    rng = np.random.default_rng(73)
    bits = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    with np.errstate(over="ignore"):
        x = np.concatenate([_around(steps * s, 3), bits,
                            np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45,
                                      1.1754942e-38, 3.4028235e38, -3.4028235e38], np.float32)])
    y = np.empty(x.shape, np.int8)
    kernels.dnn64_quantize_f32_s8(x, x.size, scale, zp, y)
    with np.errstate(over="ignore", invalid="ignore"):
        ref = quantize_values(x, QParams(scale, zp))
    np.testing.assert_array_equal(y, ref)
    finite = np.isfinite(x)  # onnxruntime's NaN and infinity handling is its own
    want = run_node("QuantizeLinear", {"x": x[finite]}, {},
                    {"s": np.array(s, np.float32), "z": np.array(zp, np.int8)}, out_dtype="int8")
    np.testing.assert_array_equal(y[finite], want)


def test_dequantize_matches_onnxruntime(kernels) -> None:
    x = np.arange(-128, 128, dtype=np.int8)
    want = run_node("DequantizeLinear", {"x": x}, {},
                    {"s": np.array(0.037, np.float32), "z": np.array(-5, np.int8)})
    y = np.empty(x.shape, np.float32)
    kernels.dnn64_dequantize_s8_f32(x, x.size, 0.037, -5, y)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("real", [0.3, 1.0, 2.7, 0.0001])
def test_requantize_bit_exact(kernels, real) -> None:
    x = np.arange(-128, 128, dtype=np.int8)
    m, s = im.quantize_multiplier(real)
    want = im.requantize(x.astype(np.int64) - 7, m, s, -3)
    y = x.copy()
    kernels.dnn64_requantize_s8(y, y.size, 7, m, s, -3, y)  # in place
    np.testing.assert_array_equal(y, want)
