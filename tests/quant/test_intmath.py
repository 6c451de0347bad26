"""dnn64build.quant.intmath against hand-computed values and exact rational arithmetic."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from dnn64build.quant import intmath as im

I32 = st.integers(im.INT32_MIN, im.INT32_MAX)


def test_quantize_multiplier_hand_values() -> None:
    assert im.quantize_multiplier(0.0) == (0, 0)
    assert im.quantize_multiplier(0.5) == (1 << 30, 0)  # frexp: 0.5 * 2^0
    assert im.quantize_multiplier(1.0) == (1 << 30, 1)  # 0.5 * 2^1
    assert im.quantize_multiplier(0.75) == (1610612736, 0)  # 0.75 * 2^31
    # 0.1 = 0.8 * 2^-3; 0.8 * 2^31 = 1717986918.4 -> 1717986918
    assert im.quantize_multiplier(0.1) == (1717986918, -3)
    # q = 1 - 2^-40 rounds to exactly 2^31: halved, exponent bumped
    assert im.quantize_multiplier(1.0 - 2.0**-40) == (1 << 30, 1)
    assert im.quantize_multiplier(2.0**-40) == (0, 0)  # exponent -39 < -31
    assert im.quantize_multiplier(2.0**40) == (im.INT32_MAX, 30)  # exponent 41 > 30


def test_srdhm_hand_values() -> None:
    cases = [
        (im.INT32_MIN, im.INT32_MIN, im.INT32_MAX),  # the one overflow: saturates
        (1 << 30, 1 << 30, 1 << 29),  # 2^60 / 2^31 exactly
        (1, 1 << 30, 1),  # 0.5 -> 1: ties go up
        (-1, 1 << 30, 0),  # -0.5 -> 0: (-2^30 + 1 - 2^30) / 2^31 truncates to 0
        (-3, 1 << 30, -1),  # -1.5 -> -1
        (im.INT32_MAX, im.INT32_MAX, 2147483646),  # (2^31-1)^2 / 2^31 = 2^31 - 2 + tiny
        (im.INT32_MIN, im.INT32_MAX, -2147483647),  # exactly -(2^31 - 1)
        (0, im.INT32_MIN, 0),
    ]
    for a, b, want in cases:
        assert int(im.saturating_rounding_doubling_high_mul(a, b)) == want, (a, b)


def test_rdbp_hand_values() -> None:
    cases = [
        (5, 1, 3), (-5, 1, -3),  # +-2.5 -> +-3, away from zero
        (-3, 1, -2), (-1, 1, -1),  # -1.5 -> -2, -0.5 -> -1
        (7, 2, 2), (-7, 2, -2),  # +-1.75
        (6, 2, 2), (-6, 2, -2),  # +-1.5
        (123, 0, 123),
        (im.INT32_MAX, 31, 1),  # 0.99999...
        (im.INT32_MIN, 31, -1),  # exactly -1
        (-(1 << 30), 31, -1),  # -0.5 -> -1
        (1 << 30, 31, 1),  # 0.5 -> 1
    ]
    for x, e, want in cases:
        assert int(im.rounding_divide_by_pot(x, e)) == want, (x, e)


def test_mbqm_hand_values() -> None:
    half = 1 << 30  # 0.5 in Q31
    assert int(im.multiply_by_quantized_multiplier(1000, half, -1)) == 250
    # 5 * 0.125 = 0.625: srdhm(5, 0.5) = 2.5 -> 3, then 3 / 4 = 0.75 -> 1
    assert int(im.multiply_by_quantized_multiplier(5, half, -2)) == 1
    # -5 * 0.25 = -1.25: srdhm gives -2.5 -> -2 (ties up), then -2 / 2 = -1
    assert int(im.multiply_by_quantized_multiplier(-5, half, -1)) == -1
    assert int(im.multiply_by_quantized_multiplier(3, half, 1)) == 3  # 3 * 2 * 0.5
    # positive shift saturates: 2^30 << 2 -> INT32_MAX; * 0.5 = 2^30 - 0.5 -> 2^30
    assert int(im.multiply_by_quantized_multiplier(1 << 30, half, 2)) == 1 << 30
    assert int(im.multiply_by_quantized_multiplier(-(1 << 30), half, 2)) == -(1 << 30)


def test_requantize_per_tensor_hand_values() -> None:
    # 0.125 = 0.5 * 2^-2, zero point -5
    acc = np.array([100, -100, 7, 10**6, -(10**6)])
    got = im.requantize(acc, 1 << 30, -2, -5)
    # 12.5 -> 13; -12.5 -> -13; 0.875 -> 1; saturate high; saturate low
    assert got.tolist() == [8, -18, -4, 127, -128]
    # ReLU as a clamp at the zero point
    assert im.requantize(acc, 1 << 30, -2, -5, act_min=-5).tolist() == [8, -5, -4, 127, -5]


def test_requantize_per_channel_hand_values() -> None:
    acc = np.array([10, 20, 10, 20]).reshape(1, 2, 1, 2)
    got = im.requantize(acc, [1 << 30, 1 << 30], [0, -1], 0)
    # channel 0 * 0.5: 5, 10; channel 1 * 0.25: 2.5 -> 3, 5
    assert got.reshape(-1).tolist() == [5, 10, 3, 5]
    gemm = im.requantize(np.array([[10, 10]]), [1 << 30, 1 << 30], [0, -1], 1, axis=-1)
    assert gemm.tolist() == [[6, 4]]  # 5 + 1; 2.5 -> 3, + 1


def test_divide_round_half_away_hand_values() -> None:
    total = np.array([5, -5, 4, -4, 0, 3, -3, 7])
    count = np.array([2, 2, 3, 3, 3, 2, 2, 7])
    assert im.divide_round_half_away(total, count).tolist() == [3, -3, 1, -1, 0, 2, -2, 1]


def test_add_sub_hand_values() -> None:
    p = im.add_params(0.5, 0, 0.5, 0, 0.5, 0)
    # twice_max = 1: inputs * 0.5 = (2^30, 0); output 2^-19 = (2^30, -18)
    assert (p.a_multiplier, p.a_shift, p.out_multiplier, p.out_shift) == (1 << 30, 0, 1 << 30, -18)
    assert im.add_s8(3, 4, p).tolist() == 7  # 1.5 + 2.0 = 3.5 = 7 steps
    assert im.add_s8(100, 100, p).tolist() == 127  # saturates
    sub = im.add_params(0.5, -10, 0.5, 0, 0.5, 5)
    assert im.add_s8(10, 3, sub, subtract=True).tolist() == 22  # (10 + 10) - 3 + 5
    tie = im.add_params(0.5, 0, 0.5, 0, 1.0, 0)
    # 0.5 / 1.0 = 0.5 step: srdhm(2^19, 0.5) = 2^18, then / 2^19 -> 1; and -1 below
    assert im.add_s8(np.array([1, -1]), 0, tie).tolist() == [1, -1]


def test_mul_div_hand_values() -> None:
    p = im.mul_params(0.5, 2, 0.5, 0, 0.25, 0)  # real multiplier 1.0 = (2^30, 1)
    assert (p.multiplier, p.shift) == (1 << 30, 1)
    assert im.mul_s8(5, -4, p).tolist() == -12  # (5 - 2) * -4 = -12
    assert im.mul_s8(127, 127, p).tolist() == 127
    d = im.div_params(1.0, 0, 1.0, 0, 1.0, 3)  # 2^-16 = (2^30, -15)
    assert (d.multiplier, d.shift) == (1 << 30, -15)
    # 7/2 = 3.5 -> 4 (+3 = 7); -7/2 -> -4 (-1); 1/3 -> 0 (3); x/0: act_max, act_min, zp
    got = im.div_s8(np.array([7, -7, 1, 5, -5, 0]), np.array([2, 2, 3, 0, 0, 0]), d)
    assert got.tolist() == [7, -1, 3, 127, -128, 3]


def test_activation_lut_hand_values() -> None:
    lut = im.activation_lut(lambda v: v, 0.5, 0, 1.0, 0)
    # q = 1 -> 0.5 -> 1 (away); q = -1 -> -1; q = 3 -> 1.5 -> 2; q = 127 -> 63.5 -> 64
    assert [lut[q + 128] for q in (1, -1, 3, 127, -128)] == [1, -1, 2, 64, -64]
    relu = im.activation_lut(lambda v: np.maximum(v, 0), 0.1, -3, 0.1, -128)
    assert [relu[q + 128] for q in (-3, 7, -50)] == [-128, -118, -128]


def test_softmax_hand_values() -> None:
    table = im.softmax_exp_table(math.log(2.0))  # exp(-ln2 * d) = 2^-d
    assert table[:3].tolist() == [65536, 32768, 16384]
    assert (table[17], table[18]) == (1, 0)  # 0.5 rounds up, 0.25 down
    m, s = im.softmax_out_multiplier(1 / 256)  # 1 / 64
    assert (m, s) == (1 << 30, -5)
    # p = 0.5, 0.25, 0.125, 0.125 -> 128, 64, 32, 32 steps - 128
    assert im.softmax_s8(np.array([0, -1, -2, -2]), table, m, s, -128).tolist() == [0, -64, -96,
                                                                                     -96]


@given(I32, I32)
def test_srdhm_is_round_half_up_of_exact_product(a: int, b: int) -> None:
    want = math.floor(Fraction(a * b, 1 << 31) + Fraction(1, 2))
    want = min(want, im.INT32_MAX)
    assert int(im.saturating_rounding_doubling_high_mul(a, b)) == want


@given(I32, st.integers(0, 31))
def test_rdbp_is_round_half_away_of_exact_quotient(x: int, e: int) -> None:
    q = Fraction(x, 1 << e)
    want = math.floor(abs(q) + Fraction(1, 2)) * (1 if q >= 0 else -1)
    assert int(im.rounding_divide_by_pot(x, e)) == want


@given(st.floats(1e-12, 1e6, allow_nan=False))
def test_quantize_multiplier_is_accurate(real: float) -> None:
    m, s = im.quantize_multiplier(real)
    if real < 2.0**-32:
        return
    assert (1 << 30) <= m < (1 << 31)
    assert abs(m * 2.0 ** (s - 31) - real) <= real * 2.0**-31
