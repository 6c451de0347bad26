"""The exact int8 arithmetic of the kernels, defined in numpy.

This module is the source of truth: every int8 kernel in ``kernels/`` reproduces
these functions bit for bit, and the tests hold the C code to them.

Conventions (the same as TFLite and gemmlowp):

- A real multiplier ``m > 0`` is stored as ``(multiplier, shift)`` with
  ``m ~= multiplier * 2**(shift - 31)``, ``multiplier`` a Q31 value in
  ``[2**30, 2**31)`` (or 0), ``shift`` in ``[-31, 30]``; positive ``shift``
  is a left shift.
- ``saturating_rounding_doubling_high_mul`` and ``rounding_divide_by_pot``
  are gemmlowp's: the first rounds to nearest with ties toward +infinity
  (its nudge is asymmetric) and saturates only ``INT32_MIN * INT32_MIN``; the
  second rounds half away from zero.
- Division by a count (average pooling) rounds half away from zero, as TFLite.
- Lookup tables (activations) round half away from zero, then clamp.

Arrays are computed in int64 and returned as int32 (or int8 where stated);
scalars are accepted wherever arrays are.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1

# Element-wise add/sub rescale both inputs to a common Q(20) before summing (TFLite int8).
ADD_LEFT_SHIFT = 20
# Element-wise div forms the quotient of the centred inputs in Q(16) before rescaling.
DIV_QUOTIENT_BITS = 16
# Softmax: exp table entries are Q(16) (exp(0) = 65536); probabilities are Q(14).
SOFTMAX_EXP_BITS = 16
SOFTMAX_PROB_BITS = 14
# Linear resize weights are Q(11) per axis, so a 2-D blend is Q(22).
RESIZE_WEIGHT_BITS = 11


def _i64(x: ArrayLike) -> NDArray[np.int64]:
    return np.asarray(x, dtype=np.int64)


def round_half_away(x: float) -> int:
    """Round a Python float to the nearest integer, ties away from zero (C ``round``)."""
    r = math.floor(abs(x) + 0.5)
    return int(r if x >= 0 else -r)


def quantize_multiplier(real_multiplier: float) -> tuple[int, int]:
    """Split ``real_multiplier >= 0`` into a Q31 ``multiplier`` and a power-of-two ``shift``.

    TFLite's ``QuantizeMultiplier``: ``frexp`` gives ``q`` in [0.5, 1) and an
    exponent; ``q * 2**31`` is rounded half away from zero; a result of exactly
    ``2**31`` is halved and the exponent bumped; exponents below -31 give
    ``(0, 0)`` (the product is then 0 anyway); exponents above 30 saturate to
    ``(INT32_MAX, 30)``.
    """
    if not real_multiplier >= 0 or math.isinf(real_multiplier):
        raise ValueError(f"multiplier must be finite and >= 0, got {real_multiplier!r}")
    if real_multiplier == 0:
        return 0, 0
    q, shift = math.frexp(real_multiplier)
    q_fixed = round_half_away(q * (1 << 31))
    if q_fixed == 1 << 31:
        q_fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    if shift > 30:
        return INT32_MAX, 30
    return q_fixed, shift


def saturating_rounding_doubling_high_mul(a: ArrayLike, b: ArrayLike) -> NDArray[np.int32]:
    """gemmlowp ``SaturatingRoundingDoublingHighMul``: ``a * b / 2**31`` rounded, saturated.

    The nudge is ``+2**30`` for a non-negative product and ``1 - 2**30`` for a
    negative one, then C division (truncation toward zero) by ``2**31``: that
    is round to nearest with ties toward +infinity (0.5 -> 1, -0.5 -> 0). The
    only overflow, ``INT32_MIN * INT32_MIN``, gives ``INT32_MAX``.
    """
    a64, b64 = _i64(a), _i64(b)
    ab = a64 * b64
    nudged = ab + np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    high = np.where(nudged >= 0, nudged >> 31, -((-nudged) >> 31))
    overflow = (a64 == INT32_MIN) & (b64 == INT32_MIN)
    return np.where(overflow, INT32_MAX, high).astype(np.int32)


def rounding_divide_by_pot(x: ArrayLike, exponent: ArrayLike) -> NDArray[np.int32]:
    """gemmlowp ``RoundingDivideByPOT``: ``x / 2**exponent`` rounded half away from zero.

    ``exponent`` must be in [0, 31]. The remainder (low bits) is compared with a
    threshold of half the divisor, one more for a negative ``x``.
    """
    x64, e64 = _i64(x), _i64(exponent)
    if np.any((e64 < 0) | (e64 > 31)):
        raise ValueError("rounding_divide_by_pot: exponent must be in [0, 31]")
    mask = (np.int64(1) << e64) - 1
    remainder = x64 & mask
    threshold = (mask >> 1) + (x64 < 0)
    return ((x64 >> e64) + (remainder > threshold)).astype(np.int32)


def multiply_by_quantized_multiplier(
    x: ArrayLike, multiplier: ArrayLike, shift: ArrayLike
) -> NDArray[np.int32]:
    """TFLite ``MultiplyByQuantizedMultiplier``: ``x * multiplier * 2**(shift - 31)``, rounded.

    A positive ``shift`` is applied to ``x`` first as a left shift that
    saturates to int32 (TFLite leaves that overflow undefined); a negative one
    is a final ``rounding_divide_by_pot``.
    """
    x64, s64 = _i64(x), _i64(shift)
    left = np.maximum(s64, 0)
    right = np.maximum(-s64, 0)
    shifted = np.clip(x64 << left, INT32_MIN, INT32_MAX)
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(shifted, multiplier), right)


def _along_axis(values: ArrayLike, ndim: int, axis: int) -> NDArray[np.int64]:
    """Reshape a per-channel 1-D array so that it broadcasts along ``axis`` of an ndim array."""
    v = _i64(values)
    if v.ndim == 0:
        return v
    shape = [1] * ndim
    shape[axis] = v.shape[0]
    return v.reshape(shape)


def requantize(
    acc: ArrayLike,
    multiplier: ArrayLike,
    shift: ArrayLike,
    out_zero_point: int,
    act_min: int = -128,
    act_max: int = 127,
    axis: int = 1,
) -> NDArray[np.int8]:
    """int32 accumulators to int8: ``clamp(mbqm(acc, M[c], shift[c]) + zp, act_min, act_max)``.

    ``multiplier``/``shift`` are scalars (per tensor) or 1-D arrays indexed by
    the output channel along ``axis`` (1 for NCHW, -1 for a Gemm's [M, N]).
    """
    a = _i64(acc)
    m = _along_axis(multiplier, a.ndim, axis)
    s = _along_axis(shift, a.ndim, axis)
    y = _i64(multiply_by_quantized_multiplier(a, m, s)) + out_zero_point
    return np.clip(y, act_min, act_max).astype(np.int8)


def divide_round_half_away(total: ArrayLike, count: ArrayLike) -> NDArray[np.int32]:
    """TFLite average pooling: ``total / count`` rounded half away from zero (``count > 0``).

    ``(total + count // 2) // count`` for a positive total, else
    ``(total - count // 2) / count`` with C truncation.
    """
    t, c = _i64(total), _i64(count)
    half = c // 2
    pos = (t + half) // c
    neg_num = t - half
    neg = -((-neg_num) // c)  # truncation toward zero of a non-positive numerator
    return np.where(t > 0, pos, neg).astype(np.int32)


@dataclass(frozen=True)
class AddParams:
    """Integer parameters of an int8 element-wise add or sub (TFLite ``ArithmeticParams``)."""

    a_zero_point: int
    b_zero_point: int
    out_zero_point: int
    a_multiplier: int
    a_shift: int
    b_multiplier: int
    b_shift: int
    out_multiplier: int
    out_shift: int
    left_shift: int = ADD_LEFT_SHIFT


def add_params(
    a_scale: float, a_zero_point: int, b_scale: float, b_zero_point: int,
    out_scale: float, out_zero_point: int,
) -> AddParams:
    """TFLite's int8 Add preparation: inputs rescaled to ``2 * max(a_scale, b_scale)`` in Q20."""
    twice_max = 2.0 * max(a_scale, b_scale)
    am, ash = quantize_multiplier(a_scale / twice_max)
    bm, bsh = quantize_multiplier(b_scale / twice_max)
    om, osh = quantize_multiplier(twice_max / ((1 << ADD_LEFT_SHIFT) * out_scale))
    return AddParams(a_zero_point, b_zero_point, out_zero_point, am, ash, bm, bsh, om, osh)


def add_s8(
    a: ArrayLike, b: ArrayLike, p: AddParams, act_min: int = -128, act_max: int = 127,
    subtract: bool = False,
) -> NDArray[np.int8]:
    """int8 ``a + b`` (or ``a - b``) with numpy broadcasting, TFLite's integer formula.

    ``((x - zp) << 20)`` rescaled per input, summed (or subtracted) in int32,
    rescaled to the output, plus the output zero point, clamped.
    """
    a_s, b_s = _add_sides(a, b, p)
    raw = a_s - b_s if subtract else a_s + b_s
    y = _i64(multiply_by_quantized_multiplier(raw, p.out_multiplier, p.out_shift))
    return np.clip(y + p.out_zero_point, act_min, act_max).astype(np.int8)


def _add_sides(a: ArrayLike, b: ArrayLike, p: AddParams) -> tuple[NDArray[np.int64], ...]:
    """Each input of an int8 add rescaled on its own: ``((x - zp) << 20)`` by its multiplier."""
    return tuple(_i64(multiply_by_quantized_multiplier((_i64(x) - zp) << p.left_shift, m, s))
                 for x, zp, m, s in ((a, p.a_zero_point, p.a_multiplier, p.a_shift),
                                     (b, p.b_zero_point, p.b_multiplier, p.b_shift)))


def add_tables(p: AddParams, subtract: bool = False) -> NDArray[np.int32] | None:
    """The tables the int8 Add/Sub kernel folds the output stage into (the proof is in
    kernels/dnn64_eltwise.c), for the compiler to build once: with v = -128..127, M the
    output multiplier and e = -out_shift, ``ta[v + 128] = floor((as(v) M + 2^30) / 2^31)
    + 2^(e-1) + zp 2^e`` then ``tb[v + 128] = floor(bs(v) (+-M) / 2^31)``, 512 values;
    None where the kernel does not fold (e outside 1..30, M <= 0, an entry outside
    [-2^30, 2^30))."""
    e, m = -p.out_shift, p.out_multiplier
    if not 1 <= e <= 30 or m <= 0:
        return None
    v = np.arange(-128, 128, dtype=np.int64)
    a_s, b_s = _add_sides(v, v, p)
    ta = ((a_s * m + (1 << 30)) >> 31) + (1 << (e - 1)) + p.out_zero_point * (1 << e)
    tb = (b_s * (-m if subtract else m)) >> 31
    tables = np.concatenate([ta, tb])
    if tables.min() < -(1 << 30) or tables.max() >= 1 << 30:
        return None
    return tables.astype(np.int32)


@dataclass(frozen=True)
class MulParams:
    """Integer parameters of an int8 element-wise mul or div."""

    a_zero_point: int
    b_zero_point: int
    out_zero_point: int
    multiplier: int
    shift: int


def mul_params(
    a_scale: float, a_zero_point: int, b_scale: float, b_zero_point: int,
    out_scale: float, out_zero_point: int,
) -> MulParams:
    """TFLite's int8 Mul preparation: one multiplier for ``a_scale * b_scale / out_scale``."""
    m, s = quantize_multiplier(a_scale * b_scale / out_scale)
    return MulParams(a_zero_point, b_zero_point, out_zero_point, m, s)


def mul_s8(
    a: ArrayLike, b: ArrayLike, p: MulParams, act_min: int = -128, act_max: int = 127
) -> NDArray[np.int8]:
    """int8 ``a * b``: ``zp_out + mbqm((a - zp_a) * (b - zp_b), M, shift)``, clamped."""
    prod = (_i64(a) - p.a_zero_point) * (_i64(b) - p.b_zero_point)
    y = _i64(multiply_by_quantized_multiplier(prod, p.multiplier, p.shift)) + p.out_zero_point
    return np.clip(y, act_min, act_max).astype(np.int8)


def div_params(
    a_scale: float, a_zero_point: int, b_scale: float, b_zero_point: int,
    out_scale: float, out_zero_point: int,
) -> MulParams:
    """int8 Div preparation: the Q16 quotient is rescaled by ``a_scale / (b_scale * out_scale)``."""
    m, s = quantize_multiplier(a_scale / (b_scale * out_scale * (1 << DIV_QUOTIENT_BITS)))
    return MulParams(a_zero_point, b_zero_point, out_zero_point, m, s)


def div_s8(
    a: ArrayLike, b: ArrayLike, p: MulParams, act_min: int = -128, act_max: int = 127
) -> NDArray[np.int8]:
    """int8 ``a / b`` (dnn64's own definition; TFLite has no int8 Div).

    ``num = a - zp_a``, ``den = b - zp_b``; ``t = num * 2**16 / den`` rounded
    half away from zero; ``y = zp_out + mbqm(t, M, shift)``, clamped. A zero
    denominator gives ``act_max`` for ``num > 0``, ``act_min`` for ``num < 0``
    and ``clamp(zp_out)`` for ``num == 0``.
    """
    num = np.broadcast_to(_i64(a) - p.a_zero_point, np.broadcast_shapes(np.shape(a), np.shape(b)))
    den = np.broadcast_to(_i64(b) - p.b_zero_point, num.shape)
    safe_den = np.where(den == 0, 1, den)
    n = np.where(den < 0, -num, num) << DIV_QUOTIENT_BITS
    d = np.abs(safe_den)
    mag = (2 * np.abs(n) + d) // (2 * d)  # |n| / d rounded half up = half away from zero
    t = np.where(n < 0, -mag, mag)
    y = _i64(multiply_by_quantized_multiplier(t, p.multiplier, p.shift)) + p.out_zero_point
    y = np.where(den == 0, np.where(num > 0, act_max, np.where(num < 0, act_min,
                                                                p.out_zero_point)), y)
    return np.clip(y, act_min, act_max).astype(np.int8)


def activation_lut(
    fn: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    in_scale: float, in_zero_point: int, out_scale: float, out_zero_point: int,
) -> NDArray[np.int8]:
    """The 256-entry table of an int8 activation: entry ``q + 128`` is the output for input ``q``.

    ``clamp(round_half_away(fn((q - zp_in) * s_in) / s_out) + zp_out, -128, 127)``
    computed in float64 at compile time; the kernel only looks it up. An infinite result
    saturates; a NaN (Log, Sqrt, Pow of a negative value) gives the real 0, ``zp_out``.
    """
    q = np.arange(-128, 128, dtype=np.float64)
    with np.errstate(all="ignore"):
        v = np.asarray(fn((q - in_zero_point) * in_scale), dtype=np.float64) / out_scale
    v = np.where(np.isnan(v), 0.0, v)
    r = np.sign(v) * np.floor(np.abs(v) + 0.5)
    return np.clip(r + out_zero_point, -128, 127).astype(np.int8)


def softmax_exp_table(in_scale: float) -> NDArray[np.int32]:
    """``T[d] = round(exp(-in_scale * d) * 2**16)`` for ``d = max - x`` in [0, 255]."""
    d = np.arange(256, dtype=np.float64)
    return np.floor(np.exp(-in_scale * d) * (1 << SOFTMAX_EXP_BITS) + 0.5).astype(np.int32)


def softmax_out_multiplier(out_scale: float) -> tuple[int, int]:
    """The multiplier taking a Q14 probability to output steps: ``1 / (2**14 * out_scale)``."""
    return quantize_multiplier(1.0 / ((1 << SOFTMAX_PROB_BITS) * out_scale))


def softmax_s8(
    x: ArrayLike, exp_table: ArrayLike, multiplier: int, shift: int, out_zero_point: int,
    axis: int = -1,
) -> NDArray[np.int8]:
    """int8 softmax along ``axis``, integer-only (dnn64's own definition).

    ``e = T[max - x]``; ``sum = sum(e)`` (int32, axis length <= 32767);
    ``p = (e * 2**14 + sum // 2) // sum`` (Q14, rounded half up);
    ``y = clamp(zp_out + mbqm(p, M, shift), -128, 127)``.
    """
    xi = _i64(x)
    table = _i64(exp_table)
    e = table[xi.max(axis=axis, keepdims=True) - xi]
    total = e.sum(axis=axis, keepdims=True)
    p = (e * (1 << SOFTMAX_PROB_BITS) + total // 2) // total
    y = _i64(multiply_by_quantized_multiplier(p, multiplier, shift)) + out_zero_point
    return np.clip(y, -128, 127).astype(np.int8)


# --- int8 Max / Min (issue 22) ---

@dataclass(frozen=True)
class MinMaxParams:
    """Integer parameters of an int8 element-wise Max or Min: each input's rescale to the
    output steps (``a_scale / out_scale`` and ``b_scale / out_scale``)."""

    a_zero_point: int
    b_zero_point: int
    out_zero_point: int
    a_multiplier: int
    a_shift: int
    b_multiplier: int
    b_shift: int


def minmax_params(
    a_scale: float, a_zero_point: int, b_scale: float, b_zero_point: int,
    out_scale: float, out_zero_point: int,
) -> MinMaxParams:
    a_m, a_s = quantize_multiplier(a_scale / out_scale)
    b_m, b_s = quantize_multiplier(b_scale / out_scale)
    return MinMaxParams(a_zero_point, b_zero_point, out_zero_point, a_m, a_s, b_m, b_s)


def minmax_s8(a: ArrayLike, b: ArrayLike, p: MinMaxParams, maximum: bool) -> NDArray[np.int8]:
    """int8 ``max(a, b)`` / ``min(a, b)`` (dnn64's own definition): each input rescaled to
    the output, ``clamp(zp_out + mbqm(x - zp_x, M_x, shift_x), -128, 127)``, then the larger
    (smaller) one; the rescale never decreases, so this is the max (min) of the reals, each
    rounded once."""
    def rescaled(x: ArrayLike, zero_point: int, multiplier: int, shift: int) -> NDArray:
        y = multiply_by_quantized_multiplier(_i64(x) - zero_point, multiplier, shift)
        return np.clip(_i64(y) + p.out_zero_point, -128, 127)

    ra = rescaled(a, p.a_zero_point, p.a_multiplier, p.a_shift)
    rb = rescaled(b, p.b_zero_point, p.b_multiplier, p.b_shift)
    return (np.maximum(ra, rb) if maximum else np.minimum(ra, rb)).astype(np.int8)
