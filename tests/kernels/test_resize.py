"""Resize kernels: fp32 and nearest vs onnxruntime, int8 bilinear bit-exact vs numpy."""

from __future__ import annotations

import numpy as np
import pytest
from kernels_ctypes import COORD, NEAREST
from kernels_onnxref import assert_close_to_scale, run_node
from kernels_refs import resize_linear_s8_ref

SCALES = [(2.0, 2.0), (1.5, 3.0), (0.5, 0.75), (0.6, 1.7)]


def _run_resize(x: np.ndarray, scales: tuple[float, float], attrs: dict) -> np.ndarray:
    s = np.array([1, 1, *scales], np.float32)
    return run_node("Resize", {"x": x}, attrs, {"scales": s}, input_order=["x", "", "scales"],
                    out_dtype=x.dtype.name)


@pytest.mark.parametrize("scales", SCALES)
@pytest.mark.parametrize("coord", ["half_pixel", "asymmetric", "align_corners",
                                   "pytorch_half_pixel"])
@pytest.mark.parametrize("nearest", ["round_prefer_floor", "floor", "round_prefer_ceil", "ceil"])
def test_resize_nearest_matches_onnxruntime(kernels, scales, coord, nearest) -> None:
    x = np.random.default_rng(51).standard_normal((2, 3, 5, 6)).astype(np.float32)
    want = _run_resize(x, scales, {"mode": "nearest", "coordinate_transformation_mode": coord,
                                   "nearest_mode": nearest})
    y = np.empty(want.shape, np.float32)
    kernels.dnn64_resize_nearest(4, 6, 5, 6, want.shape[2], want.shape[3], *scales, COORD[coord],
                                 NEAREST[nearest], x, y)
    np.testing.assert_array_equal(y, want)


def test_resize_nearest_int8_from_sizes(kernels) -> None:
    x = np.random.default_rng(52).integers(-128, 128, (1, 2, 4, 7), dtype=np.int8)
    sizes = np.array([1, 2, 9, 3], np.int64)
    want = run_node("Resize", {"x": x}, {"mode": "nearest"}, {"sizes": sizes},
                    input_order=["x", "", "", "sizes"], out_dtype="int8")
    y = np.empty(want.shape, np.int8)
    kernels.dnn64_resize_nearest(1, 2, 4, 7, 9, 3, 9 / 4, 3 / 7, COORD["half_pixel"],
                                 NEAREST["round_prefer_floor"], x, y)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("scales", SCALES)
@pytest.mark.parametrize("coord", ["half_pixel", "asymmetric", "align_corners",
                                   "pytorch_half_pixel"])
def test_resize_linear_f32_matches_onnxruntime(kernels, scales, coord) -> None:
    x = np.random.default_rng(53).standard_normal((1, 3, 5, 6)).astype(np.float32)
    want = _run_resize(x, scales, {"mode": "linear", "coordinate_transformation_mode": coord})
    y = np.empty(want.shape, np.float32)
    kernels.dnn64_resize_linear_f32(3, 5, 6, want.shape[2], want.shape[3], *scales, COORD[coord],
                                    x, y)
    assert_close_to_scale(y, want)


@pytest.mark.parametrize("scales", SCALES)
@pytest.mark.parametrize("coord", ["half_pixel", "asymmetric", "align_corners"])
def test_resize_linear_s8_bit_exact(kernels, scales, coord) -> None:
    x = np.random.default_rng(54).integers(-128, 128, (2, 5, 6), dtype=np.int8)
    ho, wo = int(5 * scales[0]), int(6 * scales[1])
    want = resize_linear_s8_ref(x, (ho, wo), scales, coord)
    y = np.empty_like(want)
    kernels.dnn64_resize_linear_s8(2, 5, 6, ho, wo, *scales, COORD[coord], x, y)
    np.testing.assert_array_equal(y, want)
    # and it stays near the fp32 bilinear result: half a step of rounding plus the Q11
    # weight error (at most 2^-12 per axis on a value range of 255)
    ref = _run_resize(x[None].astype(np.float32), scales,
                      {"mode": "linear", "coordinate_transformation_mode": coord})[0]
    assert np.max(np.abs(y - ref)) <= 0.5 + 2 * 255 / 4096
