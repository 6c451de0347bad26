"""Region kernels: a region of the output equals that region of the whole-tensor kernel's
output (itself checked against onnxruntime), written at any strides; dnn64_region_keep
and dnn64_rows_region against numpy."""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from kernels_ctypes import ConvGeom, PoolGeom, Region, act_f32


def _out(size: int, k: int, s: int, d: int, pb: int, pe: int) -> int:
    return (size + pb + pe - (k - 1) * d - 1) // s + 1


def _span(o: tuple[int, int], k: int, s: int, p: int, d: int, size: int) -> tuple[int, int]:
    return max(o[0] * s - p, 0), min((o[1] - 1) * s - p + (k - 1) * d + 1, size)


@st.composite
def problems(draw: st.DrawFn):
    c, h, w = draw(st.integers(1, 3)), draw(st.integers(3, 12)), draw(st.integers(3, 12))
    k = [draw(st.integers(1, 3)), draw(st.integers(1, 3))]
    s = [draw(st.integers(1, 2)), draw(st.integers(1, 2))]
    d = [draw(st.integers(1, 2)), draw(st.integers(1, 2))]
    p = [draw(st.integers(0, k[i % 2] - 1)) for i in range(4)]
    oh, ow = _out(h, k[0], s[0], d[0], p[0], p[2]), _out(w, k[1], s[1], d[1], p[1], p[3])
    assume(oh >= 1 and ow >= 1)
    r0 = draw(st.integers(0, oh - 1))
    r1 = draw(st.integers(r0 + 1, oh))
    c0 = draw(st.integers(0, ow - 1))
    c1 = draw(st.integers(c0 + 1, ow))
    return c, h, w, k, s, d, p, oh, ow, (r0, r1), (c0, c1)


def _input_region(x: np.ndarray, rows, cols) -> tuple[np.ndarray, Region]:
    part = np.ascontiguousarray(x[:, :, rows[0]:rows[1], cols[0]:cols[1]])
    r, c = rows[1] - rows[0], cols[1] - cols[0]
    return part, Region(rows[0], r, cols[0], c, 0, c, r * c)


@settings(max_examples=150, deadline=None)
@given(problem=problems(), depthwise=st.booleans())
def test_conv_region_equals_the_whole_kernel(kernels, problem, depthwise) -> None:
    c, h, w, k, s, d, p, oh, ow, rows, cols = problem
    rng = np.random.default_rng(0)
    c_out, group = (c, c) if depthwise else (2, 1)
    x = rng.standard_normal((1, c, h, w)).astype(np.float32)
    wt = rng.standard_normal((c_out, c // group, *k)).astype(np.float32)
    b = rng.standard_normal(c_out).astype(np.float32)
    g = ConvGeom(1, c, h, w, c_out, oh, ow, k[0], k[1], s[0], s[1], d[0], d[1], p[0], p[1],
                 group)
    act = act_f32("relu")
    whole = np.zeros((1, c_out, oh, ow), np.float32)
    kernels.dnn64_conv_f32(g, x, wt, b, 0, c_out, act, whole)
    xs, xr = _input_region(x, _span(rows, k[0], s[0], p[0], d[0], h),
                           _span(cols, k[1], s[1], p[1], d[1], w))
    # written into the whole output's layout (row stride ow), the rest untouched
    y = np.full((1, c_out, oh, ow), 7.0, np.float32)
    yr = Region(rows[0], rows[1] - rows[0], cols[0], cols[1] - cols[0],
                rows[0] * ow + cols[0], ow, oh * ow)
    kernels.dnn64_conv_region_f32(g, xr, xs, wt, b, 0, c_out, act, yr, y)
    inside = (slice(None), slice(None), slice(*rows), slice(*cols))
    np.testing.assert_array_equal(y[inside], whole[inside])
    y[inside] = 7.0
    assert (y == 7.0).all()


@settings(max_examples=150, deadline=None)
@given(problem=problems(), average=st.booleans(), include_pad=st.integers(0, 1))
def test_pool_region_equals_the_whole_kernel(kernels, problem, average, include_pad) -> None:
    c, h, w, k, s, d, p, oh, ow, rows, cols = problem
    if average:
        d = [1, 1]
        oh, ow = _out(h, k[0], s[0], 1, p[0], p[2]), _out(w, k[1], s[1], 1, p[1], p[3])
        assume(rows[1] <= oh and cols[1] <= ow)
    x = np.random.default_rng(1).integers(-128, 128, (1, c, h, w)).astype(np.int8)
    g = PoolGeom(1, c, h, w, oh, ow, k[0], k[1], s[0], s[1], d[0], d[1], *p)
    whole = np.zeros((1, c, oh, ow), np.int8)
    xs, xr = _input_region(x, _span(rows, k[0], s[0], p[0], d[0], h),
                           _span(cols, k[1], s[1], p[1], d[1], w))
    r, cc = rows[1] - rows[0], cols[1] - cols[0]
    y = np.zeros((1, c, r, cc), np.int8)  # a compact output region
    yr = Region(rows[0], r, cols[0], cc, 0, cc, r * cc)
    if average:
        kernels.dnn64_avgpool_s8(g, include_pad, 3, -128, 127, x, whole)
        kernels.dnn64_avgpool_region_s8(g, include_pad, 3, -128, 127, xr, xs, yr, y)
    else:
        kernels.dnn64_maxpool_s8(g, x, whole)
        kernels.dnn64_maxpool_region_s8(g, xr, xs, yr, y)
    np.testing.assert_array_equal(y, whole[:, :, rows[0]:rows[1], cols[0]:cols[1]])


@settings(max_examples=200, deadline=None)
@given(planes=st.integers(1, 4), width=st.integers(1, 5), old_rows=st.integers(0, 6),
       new_rows=st.integers(1, 8), data=st.data())
def test_region_keep_moves_the_kept_rows_to_the_front(kernels, planes, width, old_rows,
                                                      new_rows, data) -> None:
    keep_from = data.draw(st.integers(0, old_rows))
    keep_rows = data.draw(st.integers(0, min(old_rows - keep_from, new_rows)))
    size = planes * max(old_rows, new_rows) * width * 4
    buf = np.arange(size, dtype=np.uint8)
    old = buf[:planes * old_rows * width * 4].reshape(planes, old_rows, width * 4).copy()
    kernels.dnn64_region_keep(buf, planes, width * 4, old_rows, keep_from, keep_rows, new_rows)
    new = buf[:planes * new_rows * width * 4].reshape(planes, new_rows, width * 4)
    np.testing.assert_array_equal(new[:, :keep_rows], old[:, keep_from:keep_from + keep_rows])


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_rows_region_addresses_the_rows_a_buffer_holds(kernels, data) -> None:
    """A buffer holding rows [held_lo, held_hi) of every plane of a [planes, h, w] tensor:
    the region of rows [lo, hi) the kernel describes reads exactly tensor[:, lo:hi]."""
    planes, h, w = (data.draw(st.integers(1, n)) for n in (3, 9, 7))
    held_lo = data.draw(st.integers(0, h - 1))
    held_hi = data.draw(st.integers(held_lo + 1, h))
    lo = data.draw(st.integers(held_lo, held_hi - 1))
    hi = data.draw(st.integers(lo + 1, held_hi))
    tensor = np.arange(planes * h * w).reshape(planes, h, w)
    buf = tensor[:, held_lo:held_hi].ravel()
    r = kernels.dnn64_rows_region(held_lo, held_hi, lo, hi, w)
    assert (r.row0, r.rows, r.col0, r.cols) == (lo, hi - lo, 0, w)
    got = np.array([[[buf[r.offset + p * r.plane_stride + i * r.row_stride + k]
                      for k in range(r.cols)] for i in range(r.rows)] for p in range(planes)])
    np.testing.assert_array_equal(got, tensor[:, lo:hi])
