"""Conv and ConvTranspose kernels: fp32 vs onnxruntime, int8 bit-exact vs numpy, tiling."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from kernels_ctypes import ConvGeom, act_f32, q8_out
from kernels_onnxref import assert_close_to_scale, run_node
from kernels_refs import (
    activation_f64,
    conv_acc_int,
    conv_out,
    conv_transpose_acc_int,
    conv_transpose_out,
    output_stage,
    requant_params,
    transpose_weight_tiles,
)

from dnn64build.quant import intmath as im

# (n, c_in, h, w, c_out, kernel, strides, pads t/l/b/r, dilations, group)
CONV_CASES = [
    (1, 3, 9, 11, 4, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
    (2, 4, 10, 7, 6, (3, 2), (2, 1), (0, 1, 2, 0), (1, 2), 2),  # groups, asymmetric pads
    (1, 5, 8, 8, 5, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 5),  # depthwise fast path
    (1, 3, 7, 6, 6, (3, 3), (1, 1), (1, 0, 1, 2), (1, 1), 3),  # depthwise, multiplier 2
    (2, 6, 5, 4, 7, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),  # 1x1 fast path
    (1, 2, 12, 12, 3, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), 1),  # dilated
    (1, 1, 3, 3, 2, (5, 5), (1, 1), (2, 2, 2, 2), (1, 1), 1),  # kernel wider than input
    (1, 4, 6, 6, 3, (1, 1), (2, 2), (1, 1, 0, 0), (1, 1), 1),  # strided 1x1: generic path
    # 1x1 register blocks: 4-channel blocks plus a remainder of 3, an odd pixel count,
    # strips (int8 and fp32) and, with 100 input channels, fp32's in-place reads
    (1, 20, 3, 7, 11, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    (2, 100, 5, 3, 6, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    (1, 2100, 1, 3, 5, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),  # int8: no strip fits
    # int8 1x1 with many input channels: chunks of 64 (a short last one), two groups of
    # output channels (32 + 5: blocks of 4 and a remainder), 16-pixel strips and a short one
    (1, 200, 7, 5, 37, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    # int8 1x1, 8 channels: two whole 4-channel blocks, the last one with a positive shift
    (1, 9, 3, 5, 8, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    (2, 12, 4, 5, 20, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 4),  # grouped 1x1 (ShuffleNet)
    # rows of more than 64 outputs inside the input (summed 64 at a time)
    (1, 2, 3, 70, 3, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
    (1, 4, 9, 9, 4, (5, 5), (1, 1), (2, 2, 2, 2), (1, 1), 4),  # depthwise 5x5, mostly border
    # depthwise 5x5 stride 2 (few-channel rows), and one with uneven pads on a padded plane
    (1, 3, 13, 14, 3, (5, 5), (2, 2), (2, 2, 2, 2), (1, 1), 3),
    (1, 2, 7, 7, 2, (5, 5), (1, 1), (2, 1, 2, 3), (1, 1), 2),
    (1, 3, 11, 12, 4, (3, 3), (2, 2), (1, 1, 0, 0), (1, 1), 1),  # stem-like: stride 2
]


def _geom(n, c_in, h, w, c_out, k, s, p, d, g, out_hw=None) -> ConvGeom:
    ho, wo = out_hw or (conv_out(h, k[0], s[0], p[0], p[2], d[0]),
                        conv_out(w, k[1], s[1], p[1], p[3], d[1]))
    return ConvGeom(n, c_in, h, w, c_out, ho, wo, k[0], k[1], s[0], s[1], d[0], d[1], p[0], p[1], g)


def _conv_attrs(k, s, p, d, g) -> dict:
    return {"kernel_shape": list(k), "strides": list(s), "pads": list(p), "dilations": list(d),
            "group": g}


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv_f32_matches_onnxruntime(kernels, case) -> None:
    n, c_in, h, w, c_out, k, s, p, d, g = case
    rng = np.random.default_rng(1)
    x = rng.standard_normal((n, c_in, h, w)).astype(np.float32)
    wt = rng.standard_normal((c_out, c_in // g, *k)).astype(np.float32)
    b = rng.standard_normal(c_out).astype(np.float32)
    want = run_node("Conv", {"x": x}, _conv_attrs(k, s, p, d, g), {"w": wt, "b": b})
    geom = _geom(*case)
    y = np.full(want.shape, np.nan, np.float32)
    kernels.dnn64_conv_f32(geom, x, wt, b, 0, c_out, None, y)
    assert_close_to_scale(y, want)


@pytest.mark.parametrize("kind,alpha,beta", [
    ("relu", 0, 0), ("clip", 0.0, 6.0), ("leaky_relu", 0.1, 0), ("sigmoid", 0, 0),
    ("tanh", 0, 0), ("hard_sigmoid", 0.2, 0.5), ("hard_swish", 0, 0), ("silu", 0, 0)])
@pytest.mark.parametrize("case", [CONV_CASES[1], CONV_CASES[4]])
def test_conv_f32_fused_activation(kernels, case, kind, alpha, beta) -> None:
    n, c_in, h, w, c_out, k, s, p, d, g = case
    rng = np.random.default_rng(2)
    x = (3 * rng.standard_normal((n, c_in, h, w))).astype(np.float32)
    wt = rng.standard_normal((c_out, c_in // g, *k)).astype(np.float32)
    conv = run_node("Conv", {"x": x}, _conv_attrs(k, s, p, d, g), {"w": wt})
    want = activation_f64(kind, conv, alpha, beta)
    y = np.empty(conv.shape, np.float32)
    kernels.dnn64_conv_f32(_geom(*case), x, wt, None, 0, c_out, act_f32(kind, alpha, beta), y)
    assert_close_to_scale(y, want)


def _tiles(c_out: int) -> list[tuple[int, int]]:
    a, b = c_out // 3, 2 * c_out // 3
    return [(0, a), (a, b - a), (b, c_out - b)]


@pytest.mark.parametrize("case", [CONV_CASES[1], CONV_CASES[2], CONV_CASES[4], CONV_CASES[3]])
def test_conv_f32_three_tiles_equal_one_call(kernels, case) -> None:
    n, c_in, h, w, c_out, k, s, p, d, g = case
    rng = np.random.default_rng(3)
    x = rng.standard_normal((n, c_in, h, w)).astype(np.float32)
    wt = rng.standard_normal((c_out, c_in // g, *k)).astype(np.float32)
    b = rng.standard_normal(c_out).astype(np.float32)
    geom = _geom(*case)
    whole = np.empty((n, c_out, geom.h_out, geom.w_out), np.float32)
    kernels.dnn64_conv_f32(geom, x, wt, b, 0, c_out, None, whole)
    tiled = np.full_like(whole, np.nan)
    for begin, count in _tiles(c_out):
        kernels.dnn64_conv_f32(geom, x, np.ascontiguousarray(wt[begin:begin + count]),
                               np.ascontiguousarray(b[begin:begin + count]), begin, count, None,
                               tiled)
        # a tile writes its channels and nothing else
        assert not np.isnan(tiled[:, :begin + count]).any()
        assert np.isnan(tiled[:, begin + count:]).all()
    np.testing.assert_array_equal(tiled, whole)


def _int8_conv_data(case, seed: int):
    n, c_in, h, w, c_out, k, s, p, d, g = case
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, (n, c_in, h, w), dtype=np.int8)
    wt = rng.integers(-127, 128, (c_out, c_in // g, *k), dtype=np.int8)
    bias = rng.integers(-3000, 3000, c_out).astype(np.int32)
    mult, shift = requant_params(rng, c_out)
    return x, wt, bias, mult, shift


@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parametrize("x_zp,out_zp,act_min,act_max,use_lut", [
    (-7, 3, -128, 127, False), (0, -128, -128, 127, False), (12, -20, -20, 90, True)])
def test_conv_s8_bit_exact(kernels, case, x_zp, out_zp, act_min, act_max, use_lut) -> None:
    n, c_in, h, w, c_out, k, s, p, d, g = case
    x, wt, bias, mult, shift = _int8_conv_data(case, 4)
    lut = im.activation_lut(np.tanh, 0.05, out_zp, 1 / 128, 0) if use_lut else None
    want = output_stage(conv_acc_int(x, x_zp, wt, bias, s, p, d, g), mult, shift, out_zp,
                        act_min, act_max, lut)
    y = np.zeros(want.shape, np.int8)
    kernels.dnn64_conv_s8(_geom(*case), x, x_zp, wt, bias, mult, shift, 0, c_out,
                          q8_out(out_zp, act_min, act_max, lut), y)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("case", [CONV_CASES[0], CONV_CASES[2], CONV_CASES[4]])
def test_conv_s8_three_tiles_equal_one_call(kernels, case) -> None:
    n, c_in, h, w, c_out, k, s, p, d, g = case
    x, wt, bias, mult, shift = _int8_conv_data(case, 5)
    geom = _geom(*case)
    q = q8_out(-4)
    whole = np.empty((n, c_out, geom.h_out, geom.w_out), np.int8)
    kernels.dnn64_conv_s8(geom, x, 5, wt, bias, mult, shift, 0, c_out, q, whole)
    tiled = np.zeros_like(whole)
    for begin, count in _tiles(c_out):
        sl = slice(begin, begin + count)
        kernels.dnn64_conv_s8(geom, x, 5, np.ascontiguousarray(wt[sl]),
                              np.ascontiguousarray(bias[sl]), np.ascontiguousarray(mult[sl]),
                              np.ascontiguousarray(shift[sl]), begin, count, q, tiled)
    np.testing.assert_array_equal(tiled, whole)


def test_conv_s8_without_bias(kernels) -> None:
    case = CONV_CASES[0]
    x, wt, _, mult, shift = _int8_conv_data(case, 6)
    want = output_stage(conv_acc_int(x, 1, wt, None, case[6], case[7], case[8], case[9]),
                        mult, shift, 0, -128, 127, None)
    y = np.zeros(want.shape, np.int8)
    kernels.dnn64_conv_s8(_geom(*case), x, 1, wt, None, mult, shift, 0, case[4], q8_out(0), y)
    np.testing.assert_array_equal(y, want)


# int8 1x1 Convs by channel pairs (kernels/dnn64_pointwise.c, planes of 2 pixels or
# more): odd channel counts (a half-empty last pair), odd pixel counts, tiny planes,
# more than 32 output channels (a short last block), 65 and 150 pairs (chunks of 64),
# strips (a 51-pixel plane in two), groups
PAIR_CASES = [
    (1, 7, 3, 3, 9, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    (1, 1, 1, 2, 3, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    (2, 3, 1, 3, 37, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    (1, 129, 3, 17, 37, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    (1, 300, 1, 3, 5, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    (1, 10, 5, 7, 66, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 2),
]

# requantisation that passes the sum through: mult 2^30, shift 1
_IDENTITY = (1 << 30, 1)


def _pair_conv(kernels, case, x, x_zp, wt, bias, mult, shift) -> None:
    n, c_in, h, w, c_out, k, s, p, d, g = case
    want = output_stage(conv_acc_int(x, x_zp, wt, bias, s, p, d, g), mult, shift, 3, -128,
                        127, None)
    y = np.zeros(want.shape, np.int8)
    kernels.dnn64_conv_s8(_geom(*case), x, x_zp, wt, bias, mult, shift, 0, c_out, q8_out(3), y)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("case", PAIR_CASES)
@pytest.mark.parametrize("x_zp", [0, 127, -128, -9])
def test_conv_s8_1x1_pairs_at_the_extremes(kernels, case, x_zp) -> None:
    """Inputs -128/127, weights -128/127: the pairs' largest products and sums."""
    n, c_in, h, w, c_out, k, s, p, d, g = case
    rng = np.random.default_rng(x_zp + 200)
    x = rng.choice(np.array([-128, 127], np.int8), (n, c_in, h, w))
    wt = rng.choice(np.array([-128, 127], np.int8), (c_out, c_in // g, *k))
    bias = rng.integers(-3000, 3000, c_out).astype(np.int32)
    _pair_conv(kernels, case, x, x_zp, wt, bias, *requant_params(rng, c_out, 1e-6, 1e-4))


@pytest.mark.parametrize("c_in", [4, 8, 132, 264])
@pytest.mark.parametrize("extreme", [-128, 127])
def test_conv_s8_1x1_pairs_exact_to_one(kernels, c_in, extreme) -> None:
    """Every pair's sum counted exactly: channels 4i+2, 4i+3 repeat the inputs of 4i,
    4i+1 with the weights negated, so each output's sum is its bias alone (passed
    through unscaled), whatever the pairs' products (|x_a * w_b| up to 16384)."""
    case = (1, c_in, 3, 5, 6, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1)
    rng = np.random.default_rng(c_in)
    x = rng.choice(np.array([extreme, -extreme - 1, 0, 1], np.int8), (1, c_in, 3, 5))
    wt = rng.choice(np.array([-128, 127, -127, 5], np.int8), (6, c_in, 1, 1))
    twins = np.arange(c_in).reshape(-1, 4)
    x[:, twins[:, 2:]] = x[:, twins[:, :2]]
    wt[:, twins[:, 2:]] = -wt[:, twins[:, :2]].astype(np.int16).clip(-127, 127)
    wt[:, twins[:, :2]] = -wt[:, twins[:, 2:]]
    bias = rng.integers(-120, 120, 6).astype(np.int32)
    mult = np.full(6, _IDENTITY[0], np.int32)
    shift = np.full(6, _IDENTITY[1], np.int32)
    _pair_conv(kernels, case, x, 0, wt, bias, mult, shift)
    want = bias + 3  # the identity stage, out_zp 3
    y = np.zeros((1, 6, 3, 5), np.int8)
    kernels.dnn64_conv_s8(_geom(*case), x, 0, wt, bias, mult, shift, 0, 6, q8_out(3), y)
    np.testing.assert_array_equal(y, np.broadcast_to(want[None, :, None, None], y.shape))


def test_conv_s8_1x1_all_min(kernels) -> None:
    """Inputs and weights all -128: every channel pair's dot product is 32768, the
    top of the range the pairs hold (the low word wraps to -2^31 + 16384)."""
    case = PAIR_CASES[0]
    n, c_in, h, w, c_out, k, s, p, d, g = case
    x = np.full((n, c_in, h, w), -128, np.int8)
    wt = np.full((c_out, c_in, *k), -128, np.int8)
    bias = np.full(c_out, -(c_in * 16384) + 7, np.int32)
    mult = np.full(c_out, _IDENTITY[0], np.int32)
    shift = np.full(c_out, _IDENTITY[1], np.int32)
    _pair_conv(kernels, case, x, 0, wt, bias, mult, shift)


# (n, c_in, h, w, c_out, kernel, strides, pads, dilations, group, output_padding)
CONVT_CASES = [
    (1, 3, 4, 5, 2, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, (1, 1)),
    (2, 4, 3, 3, 6, (2, 3), (1, 2), (0, 1, 0, 2), (1, 1), 2, (0, 1)),
    (1, 2, 5, 4, 3, (3, 2), (2, 3), (0, 0, 0, 0), (2, 1), 1, (0, 0)),
    (1, 4, 3, 3, 4, (4, 4), (2, 2), (1, 1, 1, 1), (1, 1), 4, (0, 0)),  # depthwise upsampler
]


def _convt_geom(case) -> ConvGeom:
    n, c_in, h, w, c_out, k, s, p, d, g, op = case
    ho = conv_transpose_out(h, k[0], s[0], p[0], p[2], d[0], op[0])
    wo = conv_transpose_out(w, k[1], s[1], p[1], p[3], d[1], op[1])
    return _geom(n, c_in, h, w, c_out, k, s, p, d, g, (ho, wo))


@pytest.mark.parametrize("case", CONVT_CASES)
def test_conv_transpose_f32_matches_onnxruntime(kernels, case) -> None:
    n, c_in, h, w, c_out, k, s, p, d, g, op = case
    rng = np.random.default_rng(7)
    x = rng.standard_normal((n, c_in, h, w)).astype(np.float32)
    wt = rng.standard_normal((c_in, c_out // g, *k)).astype(np.float32)
    b = rng.standard_normal(c_out).astype(np.float32)
    attrs = {**_conv_attrs(k, s, p, d, g), "output_padding": list(op)}
    want = run_node("ConvTranspose", {"x": x}, attrs, {"w": wt, "b": b})
    geom = _convt_geom(case)
    assert (geom.h_out, geom.w_out) == want.shape[2:]
    tiles = transpose_weight_tiles(wt, g)
    y = np.full(want.shape, np.nan, np.float32)
    for begin, count in _tiles(c_out):
        sl = slice(begin, begin + count)
        kernels.dnn64_conv_transpose_f32(geom, x, np.ascontiguousarray(tiles[sl]),
                                         np.ascontiguousarray(b[sl]), begin, count, None, y)
    assert_close_to_scale(y, want)


@pytest.mark.parametrize("case", CONVT_CASES)
def test_conv_transpose_s8_bit_exact(kernels, case) -> None:
    n, c_in, h, w, c_out, k, s, p, d, g, op = case
    rng = np.random.default_rng(8)
    x = rng.integers(-128, 128, (n, c_in, h, w), dtype=np.int8)
    wt = rng.integers(-127, 128, (c_in, c_out // g, *k), dtype=np.int8)
    bias = rng.integers(-3000, 3000, c_out).astype(np.int32)
    mult, shift = requant_params(rng, c_out)
    geom = _convt_geom(case)
    acc = conv_transpose_acc_int(x, -3, wt, bias, s, p, d, g, (geom.h_out, geom.w_out))
    want = output_stage(acc, mult, shift, 6, -100, 127, None)
    tiles = transpose_weight_tiles(wt, g)
    y = np.zeros(want.shape, np.int8)
    for begin, count in _tiles(c_out):
        sl = slice(begin, begin + count)
        kernels.dnn64_conv_transpose_s8(
            geom, x, -3, np.ascontiguousarray(tiles[sl]), np.ascontiguousarray(bias[sl]),
            np.ascontiguousarray(mult[sl]), np.ascontiguousarray(shift[sl]), begin, count,
            q8_out(6, -100, 127), y)
    np.testing.assert_array_equal(y, want)


@st.composite
def _conv_geometries(draw):
    group = draw(st.integers(1, 3))
    c_in = group * draw(st.integers(1, 3))
    c_out = group * draw(st.integers(1, 3))
    k = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    s = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    d = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    p = tuple(draw(st.integers(0, 3)) for _ in range(4))
    h, w = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    assume(h + p[0] + p[2] >= d[0] * (k[0] - 1) + 1 and w + p[1] + p[3] >= d[1] * (k[1] - 1) + 1)
    return (draw(st.integers(1, 2)), c_in, h, w, c_out, k, s, p, d, group)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_conv_geometries(), seed=st.integers(0, 2**31))
def test_conv_random_geometry(kernels, case, seed) -> None:
    """fp32 vs onnxruntime and int8 vs numpy on random pads/strides/dilations/groups."""
    n, c_in, h, w, c_out, k, s, p, d, g = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c_in, h, w)).astype(np.float32)
    wt = rng.standard_normal((c_out, c_in // g, *k)).astype(np.float32)
    want = run_node("Conv", {"x": x}, _conv_attrs(k, s, p, d, g), {"w": wt})
    geom = _geom(*case)
    y = np.empty(want.shape, np.float32)
    kernels.dnn64_conv_f32(geom, x, wt, None, 0, c_out, None, y)
    assert_close_to_scale(y, want)

    xq, wq, bias, mult, shift = _int8_conv_data(case, seed)
    want_q = output_stage(conv_acc_int(xq, 3, wq, bias, s, p, d, g), mult, shift, -1, -128, 127,
                          None)
    yq = np.empty(want_q.shape, np.int8)
    kernels.dnn64_conv_s8(geom, xq, 3, wq, bias, mult, shift, 0, c_out, q8_out(-1), yq)
    np.testing.assert_array_equal(yq, want_q)
