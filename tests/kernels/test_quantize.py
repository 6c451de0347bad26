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
