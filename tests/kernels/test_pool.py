"""Pooling kernels: fp32 vs onnxruntime, int8 bit-exact vs numpy (TFLite rounding)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from kernels_ctypes import PoolGeom
from kernels_onnxref import assert_close_to_scale, run_node

from dnn64build.quant import intmath as im

# (n, c, h, w, kernel, strides, pads t/l/b/r, ceil_mode)
POOL_CASES = [
    ((1, 2, 8, 8), (2, 2), (2, 2), (0, 0, 0, 0), 0),
    ((2, 3, 9, 7), (3, 3), (2, 2), (1, 1, 1, 1), 0),
    ((1, 2, 7, 8), (3, 2), (2, 3), (1, 0, 2, 1), 1),  # ceil_mode, asymmetric pads
    ((1, 1, 5, 5), (3, 3), (1, 1), (2, 2, 2, 2), 0),  # pads as large as the window allows
]


def _out(size: int, k: int, s: int, pb: int, pe: int, ceil_mode: int) -> int:
    span = size + pb + pe - k
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + pb:  # ONNX: the last window must start inside
        out -= 1
    return out


def _geom(shape, k, s, p, ceil_mode) -> PoolGeom:
    n, c, h, w = shape
    return PoolGeom(n, c, h, w, _out(h, k[0], s[0], p[0], p[2], ceil_mode),
                    _out(w, k[1], s[1], p[1], p[3], ceil_mode), k[0], k[1], s[0], s[1], 1, 1,
                    p[0], p[1], p[2], p[3])


def _attrs(k, s, p, ceil_mode) -> dict:
    return {"kernel_shape": list(k), "strides": list(s), "pads": list(p), "ceil_mode": ceil_mode}


@pytest.mark.parametrize("case", POOL_CASES)
def test_maxpool_f32_matches_onnxruntime(kernels, case) -> None:
    x = np.random.default_rng(21).standard_normal(case[0]).astype(np.float32)
    want = run_node("MaxPool", {"x": x}, _attrs(*case[1:]))
    y = np.empty(want.shape, np.float32)
    kernels.dnn64_maxpool_f32(_geom(*case), x, y)
    np.testing.assert_array_equal(y, want)


def test_maxpool_dilated_matches_onnxruntime(kernels) -> None:
    x = np.random.default_rng(22).standard_normal((1, 2, 9, 9)).astype(np.float32)
    want = run_node("MaxPool", {"x": x}, {"kernel_shape": [3, 2], "dilations": [2, 3],
                                          "pads": [1, 1, 1, 1]})
    g = PoolGeom(1, 2, 9, 9, want.shape[2], want.shape[3], 3, 2, 1, 1, 2, 3, 1, 1, 1, 1)
    y = np.empty(want.shape, np.float32)
    kernels.dnn64_maxpool_f32(g, x, y)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("case", POOL_CASES)
@pytest.mark.parametrize("include_pad", [0, 1])
def test_avgpool_f32_matches_onnxruntime(kernels, case, include_pad) -> None:
    x = np.random.default_rng(23).standard_normal(case[0]).astype(np.float32)
    want = run_node("AveragePool", {"x": x},
                    {**_attrs(*case[1:]), "count_include_pad": include_pad})
    y = np.empty(want.shape, np.float32)
    kernels.dnn64_avgpool_f32(_geom(*case), include_pad, x, y)
    assert_close_to_scale(y, want)


def test_global_avgpool_f32_matches_onnxruntime(kernels) -> None:
    x = np.random.default_rng(24).standard_normal((2, 3, 7, 5)).astype(np.float32)
    want = run_node("GlobalAveragePool", {"x": x})
    y = np.empty(want.shape, np.float32)
    kernels.dnn64_global_avgpool_f32(6, 35, x, y)
    assert_close_to_scale(y, want)


def _windows(x: np.ndarray, g: PoolGeom, fill: int) -> np.ndarray:
    """All pooling windows as [n, c, ho, wo, kh*kw], padded positions set to `fill`."""
    big = 64
    xp = np.full((*x.shape[:2], x.shape[2] + 2 * big, x.shape[3] + 2 * big), fill, np.int64)
    xp[:, :, big:big + x.shape[2], big:big + x.shape[3]] = x
    taps = []
    for ky in range(g.k_h):
        for kx in range(g.k_w):
            y0 = big - g.pad_top + ky * g.dil_h
            x0 = big - g.pad_left + kx * g.dil_w
            taps.append(xp[:, :, y0:y0 + g.stride_h * g.h_out:g.stride_h,
                           x0:x0 + g.stride_w * g.w_out:g.stride_w])
    return np.stack(taps, axis=-1)


def _valid_counts(g: PoolGeom, h: int, w: int, lo_h: int, hi_h: int, lo_w: int,
                  hi_w: int) -> np.ndarray:
    """Taps per window inside rows [lo_h, hi_h) and columns [lo_w, hi_w)."""
    ones = np.zeros((1, 1, h, w), np.int64)
    marks = _windows(ones, g, 0)  # shape only
    counts = np.zeros(marks.shape[2:4], np.int64)
    for oy in range(g.h_out):
        for ox in range(g.w_out):
            rows = [oy * g.stride_h - g.pad_top + ky for ky in range(g.k_h)]
            cols = [ox * g.stride_w - g.pad_left + kx for kx in range(g.k_w)]
            counts[oy, ox] = (sum(lo_h <= r < hi_h for r in rows) *
                              sum(lo_w <= c < hi_w for c in cols))
    return counts


@pytest.mark.parametrize("case", POOL_CASES)
def test_maxpool_s8_bit_exact(kernels, case) -> None:
    x = np.random.default_rng(25).integers(-128, 128, case[0], dtype=np.int8)
    g = _geom(*case)
    want = _windows(x, g, -1000).max(axis=-1).astype(np.int8)
    y = np.empty(want.shape, np.int8)
    kernels.dnn64_maxpool_s8(g, x, y)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("dilations", [(1, 1), (2, 3)])
def test_maxpool_s8_matches_onnxruntime(kernels, dilations) -> None:
    """Windows inside the input along x (the kernel's unclipped path) between clipped ones
    at both edges, with and without dilation."""
    x = np.random.default_rng(27).integers(-128, 128, (1, 3, 13, 18), dtype=np.int8)
    attrs = {"kernel_shape": [3, 3], "strides": [2, 2], "dilations": list(dilations),
             "pads": [1, 2, 2, 2]}
    # int8 values are exact in fp32, and a maximum picks one of them
    want = run_node("MaxPool", {"x": x.astype(np.float32)}, attrs).astype(np.int8)
    g = PoolGeom(1, 3, 13, 18, want.shape[2], want.shape[3], 3, 3, 2, 2, *dilations,
                 1, 2, 2, 2)
    y = np.empty(want.shape, np.int8)
    kernels.dnn64_maxpool_s8(g, x, y)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("case", POOL_CASES)
@pytest.mark.parametrize("include_pad", [0, 1])
def test_avgpool_s8_bit_exact(kernels, case, include_pad) -> None:
    x = np.random.default_rng(26).integers(-128, 128, case[0], dtype=np.int8)
    g = _geom(*case)
    zp = -17
    h, w = case[0][2:]
    # padded taps hold the zero point (real 0); the divisor per ONNX/onnxruntime
    total = _windows(x, g, zp).sum(axis=-1)
    if include_pad:
        count = _valid_counts(g, h, w, -g.pad_top, h + g.pad_bottom, -g.pad_left, w + g.pad_right)
        # taps past the end pad (ceil_mode) are neither summed nor counted
        beyond = _valid_counts(g, h, w, -10**6, 10**6, -10**6, 10**6) - count
        total = total - beyond * zp
    else:
        count = _valid_counts(g, h, w, 0, h, 0, w)
        total = _windows(x, g, 0).sum(axis=-1)
    want = np.clip(im.divide_round_half_away(total, count), -120, 127).astype(np.int8)
    y = np.empty(want.shape, np.int8)
    kernels.dnn64_avgpool_s8(g, include_pad, zp, -120, 127, x, y)
    np.testing.assert_array_equal(y, want)


# (planes, hw): planes that start at every alignment (hw 7, 49), runs of more than the
# 128 words a 16-bit field of the word-wise sum holds (1029, 3136)
GAP_SHAPES = [(8, 36), (3, 1), (5, 7), (12, 49), (3, 1029), (2, 3136)]


@pytest.mark.parametrize("planes,hw", GAP_SHAPES)
@pytest.mark.parametrize("values", ["random", "max", "min"])
def test_global_avgpool_s8_bit_exact(kernels, planes, hw, values) -> None:
    x = np.random.default_rng(27).integers(-128, 128, (planes, hw), dtype=np.int8)
    if values != "random":
        x[:] = 127 if values == "max" else -128
    want = np.clip(im.divide_round_half_away(x.astype(np.int64).sum(axis=1), hw), -128, 100)
    y = np.empty(planes, np.int8)
    kernels.dnn64_global_avgpool_s8(planes, hw, -128, 100, x, y)
    np.testing.assert_array_equal(y, want.astype(np.int8))


@st.composite
def _pool_cases(draw):
    k = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    s = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    p = (draw(st.integers(0, k[0] - 1)), draw(st.integers(0, k[1] - 1)),
         draw(st.integers(0, k[0] - 1)), draw(st.integers(0, k[1] - 1)))
    h, w = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    assume(h + p[0] + p[2] >= k[0] and w + p[1] + p[3] >= k[1])
    return (2, 2, h, w), k, s, p, draw(st.integers(0, 1)), draw(st.integers(0, 1))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_pool_cases())
def test_pools_random_geometry_match_onnxruntime(kernels, case) -> None:
    shape, k, s, p, ceil_mode, include_pad = case
    x = np.random.default_rng(28).standard_normal(shape).astype(np.float32)
    attrs = _attrs(k, s, p, ceil_mode)
    want_max = run_node("MaxPool", {"x": x}, attrs)
    want_avg = run_node("AveragePool", {"x": x}, {**attrs, "count_include_pad": include_pad})
    # the caller passes onnxruntime's output size (ceil_mode is resolved there)
    g = PoolGeom(*shape, *want_max.shape[2:], *k, *s, 1, 1, *p)
    y = np.empty(want_max.shape, np.float32)
    kernels.dnn64_maxpool_f32(g, x, y)
    np.testing.assert_array_equal(y, want_max)
    kernels.dnn64_avgpool_f32(g, include_pad, x, y)
    assert_close_to_scale(y, want_avg)
