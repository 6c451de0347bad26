"""Concat, Pad and Transpose (type-agnostic copies): vs onnxruntime and numpy."""

from __future__ import annotations

import numpy as np
import pytest
from kernels_ctypes import PAD_MODE, i32
from kernels_onnxref import run_node


@pytest.mark.parametrize("axis", [0, 1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.int8])
def test_concat_matches_onnxruntime(kernels, axis, dtype) -> None:
    rng = np.random.default_rng(41)
    shapes = []
    for extra in (2, 1, 3):
        s = [2, 3, 4, 5]
        s[axis] = extra
        shapes.append(tuple(s))
    xs = [rng.integers(-128, 128, s).astype(dtype) for s in shapes]
    want = run_node("Concat", {f"x{i}": x for i, x in enumerate(xs)}, {"axis": axis},
                    out_dtype=np.dtype(dtype).name)
    y = np.zeros(want.shape, dtype)
    outer = int(np.prod(want.shape[:axis]))
    inner = int(np.prod(want.shape[axis + 1:]))
    offset = 0
    for x in xs:
        span = x.shape[axis] * inner
        kernels.dnn64_concat_copy(x.itemsize, outer, span, want.shape[axis] * inner, offset, x, y)
        offset += span
    np.testing.assert_array_equal(y, want)


PAD_CASES = [
    ((2, 3, 4, 5), (0, 0, 1, 2), (0, 0, 2, 1)),
    ((1, 2, 5, 6), (0, 1, 3, 5), (0, 1, 4, 5)),  # reflect pads up to dim - 1
    ((3, 7), (2, 0), (1, 3)),
    ((2, 4, 3, 5), (0, 1, 0, 0), (1, 2, 0, 0)),  # trailing dims unpadded: moved as one run
]


@pytest.mark.parametrize("in_shape,begin,end", PAD_CASES)
@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_pad_f32_matches_onnxruntime(kernels, in_shape, begin, end, mode) -> None:
    x = np.random.default_rng(42).standard_normal(in_shape).astype(np.float32)
    pads = np.array([*begin, *end], np.int64)
    value = np.array(1.25, np.float32)
    want = run_node("Pad", {"x": x}, {"mode": mode}, {"pads": pads, "value": value},
                    input_order=["x", "pads", "value"])
    y = np.empty(want.shape, np.float32)
    kernels.dnn64_pad(4, len(in_shape), i32(in_shape), i32(begin), i32(want.shape),
                      PAD_MODE[mode], value, x, y)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_pad_s8_matches_numpy(kernels, mode) -> None:
    x = np.random.default_rng(43).integers(-128, 128, (2, 3, 4), dtype=np.int8)
    widths = ((1, 0), (2, 3), (0, 3))
    kwargs = {"constant_values": -7} if mode == "constant" else {}
    want = np.pad(x, widths, mode=mode, **kwargs)
    y = np.empty(want.shape, np.int8)
    kernels.dnn64_pad(1, 3, i32(x.shape), i32([w[0] for w in widths]), i32(want.shape),
                      PAD_MODE[mode], np.array(-7, np.int8), x, y)
    np.testing.assert_array_equal(y, want)


def test_pad_negative_crops(kernels) -> None:
    x = np.arange(30, dtype=np.float32).reshape(5, 6)
    want = run_node("Pad", {"x": x}, {}, {"pads": np.array([-1, 2, -2, -3], np.int64)},
                    input_order=["x", "pads"])
    y = np.empty(want.shape, np.float32)
    kernels.dnn64_pad(4, 2, i32(x.shape), i32([-1, 2]), i32(want.shape), 0, None, x, y)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("begin,end", [((0, -3, 0, 0), (0, 0, 0, 0)),
                                       ((0, 0, 0, 0), (0, -3, 0, 0)),
                                       ((0, -1, 0, -1), (0, -2, -1, 0))])
def test_pad_s8_crops_channels(kernels, begin, end) -> None:
    """A Slice of an NCHW tensor's channels (codegen's dnn64_pad with negative pads)."""
    x = np.random.default_rng(45).integers(-128, 128, (1, 6, 3, 4), dtype=np.int8)
    want = x[tuple(slice(-b, n + e) for b, e, n in zip(begin, end, x.shape, strict=True))]
    y = np.empty(want.shape, np.int8)
    kernels.dnn64_pad(1, 4, i32(x.shape), i32(begin), i32(want.shape), 0, None, x, y)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("shape,perm", [
    ((2, 3, 4, 5), (0, 2, 3, 1)), ((2, 3, 4, 5), (3, 1, 0, 2)), ((7, 9), (1, 0)),
    ((2, 1, 3, 2, 2, 3), (5, 0, 3, 1, 4, 2)), ((4,), (0,)),
    ((1, 2, 3, 4, 5), (0, 2, 1, 3, 4)),  # a channel shuffle: rows of 4 x 5 move whole
    ((3, 1, 4, 2), (1, 0, 3, 2))])
def test_transpose_matches_onnxruntime(kernels, shape, perm) -> None:
    x = np.random.default_rng(44).standard_normal(shape).astype(np.float32)
    want = run_node("Transpose", {"x": x}, {"perm": list(perm)})
    y = np.empty(want.shape, np.float32)
    kernels.dnn64_transpose(4, len(shape), i32(shape), i32(perm), x, y)
    np.testing.assert_array_equal(y, want)
    for dtype in (np.int8, np.int16):
        xi = np.arange(x.size).astype(dtype).reshape(shape)
        yi = np.empty(want.shape, dtype)
        kernels.dnn64_transpose(xi.itemsize, len(shape), i32(shape), i32(perm), xi, yi)
        np.testing.assert_array_equal(yi, np.transpose(xi, perm))


@pytest.mark.parametrize("dtype", [np.float32, np.int8])
def test_gather_matches_numpy_and_clamps_outside_rows(kernels, dtype) -> None:
    rng = np.random.default_rng(7)
    x = rng.integers(-128, 128, (2, 5, 3)).astype(dtype)
    indices = np.array([4, -1, 0, 2, -5], np.int32)
    y = np.zeros((2, len(indices), 3), dtype)
    kernels.dnn64_gather(x.itemsize, 2, 5, 3, x, indices, len(indices), y)
    np.testing.assert_array_equal(y, np.take(x, indices, axis=1))
    # ONNX leaves an index outside [-rows, rows) an error: the kernel reads the nearest row
    outside = np.array([5, 99, -6], np.int32)
    y = np.zeros((2, 3, 3), dtype)
    kernels.dnn64_gather(x.itemsize, 2, 5, 3, x, outside, 3, y)
    np.testing.assert_array_equal(y, np.take(x, [4, 4, 0], axis=1))
