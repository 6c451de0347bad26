"""Element-wise binary kernels with broadcasting: fp32 vs onnxruntime, int8 vs intmath."""

from __future__ import annotations

import numpy as np
import pytest
from kernels_ctypes import BINARY, AddS8Params, MinMaxS8Params, MulS8Params, bcast
from kernels_onnxref import assert_close_to_scale, run_node

from dnn64build.quant import intmath as im

SHAPES = [
    ((2, 3, 4, 5), (2, 3, 4, 5)),
    ((2, 3, 4, 5), (3, 1, 1)),  # per-channel
    ((1, 3, 1, 5), (2, 1, 4, 1)),  # both broadcast
    ((4,), (3, 1)),
    ((2, 1, 3, 1, 2, 3), (1, 2, 1, 4, 1, 3)),  # rank 6
    ((5,), ()),  # scalar
]
# int8 Add/Sub take tables of each input's rescaled values from 1024 elements on
LARGE_SHAPES = [((2, 8, 9, 10), (8, 1, 1)), ((4, 16, 20), (4, 16, 20))]


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Max", "Min"])
@pytest.mark.parametrize("a_shape,b_shape", SHAPES)
def test_binary_f32_matches_onnxruntime(kernels, op, a_shape, b_shape) -> None:
    rng = np.random.default_rng(31)
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    if op == "Div":
        b = np.where(np.abs(b) < 0.1, np.float32(0.5), b).astype(np.float32)
    want = run_node(op, {"a": a, "b": b})
    y = np.empty(want.shape, np.float32)
    out_shape = want.shape or (1,)
    kernels.dnn64_binary_f32(BINARY[op], bcast(out_shape, a_shape, b_shape), a, b, y)
    assert_close_to_scale(y, want)


@pytest.mark.parametrize("a_shape,b_shape", [((2, 3, 4, 5), (3, 1, 1)), ((4, 6), (4, 6)),
                                             ((5,), ())])
def test_prelu_and_pow_f32_match_onnxruntime(kernels, a_shape, b_shape) -> None:
    """PRelu (slope broadcast to x) and Pow: positive bases with any exponent, any base with
    integral exponents."""
    rng = np.random.default_rng(32)
    a = rng.standard_normal(a_shape).astype(np.float32)
    cases = [("PRelu", a, rng.standard_normal(b_shape).astype(np.float32)),
             ("Pow", np.abs(a) + np.float32(0.1), rng.uniform(-3, 3, b_shape).astype(np.float32)),
             ("Pow", a * 3, rng.integers(-3, 4, b_shape).astype(np.float32))]
    for op, x, b in cases:
        want = run_node(op, {"a": x, "b": b})
        y = np.empty(want.shape, np.float32)
        kernels.dnn64_binary_f32(BINARY[op], bcast(want.shape, a_shape, b_shape), x, b, y)
        np.testing.assert_allclose(y, want, rtol=2e-6, atol=1e-30, err_msg=op)


def test_binary_f32_in_place(kernels) -> None:
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.array([1, 2, 3, 4], np.float32)
    want = a * b
    kernels.dnn64_binary_f32(BINARY["Mul"], bcast((3, 4), (3, 4), (4,)), a, b, a)
    np.testing.assert_array_equal(a, want)


QUANT = [  # (a_scale, a_zp, b_scale, b_zp, out_scale, out_zp)
    (0.05, -3, 0.02, 10, 0.06, 5),
    (0.1, 0, 0.1, 0, 0.1, 0),
    (0.003, 127, 0.5, -128, 0.4, -20),
]


def _add_struct(p: im.AddParams, act_min: int, act_max: int,
                tables: np.ndarray | None = None) -> AddS8Params:
    """The kernel's parameters; ``tables`` (kept alive by the caller): the compiler's
    intmath.add_tables, else NULL (the kernel builds its own)."""
    return AddS8Params(p.a_zero_point, p.b_zero_point, p.out_zero_point, p.a_multiplier,
                       p.a_shift, p.b_multiplier, p.b_shift, p.out_multiplier, p.out_shift,
                       p.left_shift, act_min, act_max,
                       None if tables is None else tables.ctypes.data)


def _mul_struct(p: im.MulParams, act_min: int, act_max: int) -> MulS8Params:
    return MulS8Params(p.a_zero_point, p.b_zero_point, p.out_zero_point, p.multiplier, p.shift,
                       act_min, act_max)


def _int8_pair(a_shape, b_shape, seed):
    rng = np.random.default_rng(seed)
    return (rng.integers(-128, 128, a_shape, dtype=np.int8),
            rng.integers(-128, 128, b_shape, dtype=np.int8))


@pytest.mark.parametrize("q", QUANT)
@pytest.mark.parametrize("a_shape,b_shape", SHAPES[:5] + LARGE_SHAPES)
@pytest.mark.parametrize("op", ["max", "min"])
def test_minmax_s8_bit_exact_and_the_real_max_rounded(kernels, q, a_shape, b_shape, op) -> None:
    a, b = _int8_pair(a_shape, b_shape, 33)
    out_shape = np.broadcast_shapes(a_shape, b_shape)
    p = im.minmax_params(*q)
    want = im.minmax_s8(a, b, p, maximum=op == "max")
    y = np.empty(out_shape, np.int8)
    params = MinMaxS8Params(p.a_zero_point, p.b_zero_point, p.out_zero_point, p.a_multiplier,
                            p.a_shift, p.b_multiplier, p.b_shift)
    getattr(kernels, f"dnn64_{op}_s8")(bcast(out_shape, a_shape, b_shape), a, b, params, y)
    np.testing.assert_array_equal(y, want)
    # against the definition: the real max (min), in output steps, rounded and clamped
    real = getattr(np, f"{op}imum")((a.astype(np.float64) - q[1]) * q[0],
                                    (b.astype(np.float64) - q[3]) * q[2])
    exact = np.clip(np.round(real / q[4]) + q[5], -128, 127)
    assert np.max(np.abs(y - exact)) <= 1


@pytest.mark.parametrize("q", QUANT)
@pytest.mark.parametrize("a_shape,b_shape", SHAPES[:5] + LARGE_SHAPES)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_binary_s8_bit_exact(kernels, q, a_shape, b_shape, op) -> None:
    a, b = _int8_pair(a_shape, b_shape, 32)
    out_shape = np.broadcast_shapes(a_shape, b_shape)
    act_min, act_max = -100, 120
    if op in ("add", "sub"):
        p = im.add_params(*q)
        want = im.add_s8(a, b, p, act_min, act_max, subtract=op == "sub")
        params = _add_struct(p, act_min, act_max)
    elif op == "mul":
        p = im.mul_params(*q)
        want = im.mul_s8(a, b, p, act_min, act_max)
        params = _mul_struct(p, act_min, act_max)
    else:
        p = im.div_params(*q)
        want = im.div_s8(a, b, p, act_min, act_max)
        params = _mul_struct(p, act_min, act_max)
    y = np.empty(out_shape, np.int8)
    getattr(kernels, f"dnn64_{op}_s8")(bcast(out_shape, a_shape, b_shape), a, b, params, y)
    np.testing.assert_array_equal(y, want)


# Parameters beyond what add_params gives, for the tables with the output stage folded
# in: small out_shift (exact path for 2 sums in 2^-out_shift), zero or positive out_shift
# and a zero multiplier (no folding at all), large zero points and multipliers.
FOLDED = [
    im.AddParams(-3, 10, 5, 1073741824, 0, 1717986918, -2, 1789569707, -19),
    im.AddParams(127, -128, -20, 1649267442, -8, 1073741824, 0, 1342177280, -18),
    im.AddParams(0, 0, 0, 1073741824, 0, 1073741824, 0, 1310720000, -5),
    im.AddParams(5, -7, 100, 2147483647, 0, 1073741825, -1, 2147483647, -1, left_shift=8),
    im.AddParams(-128, 127, -128, 1500000000, -1, 1900000000, 0, 1234567890, -2, left_shift=6),
    im.AddParams(1, 2, 3, 1073741824, -3, 1073741824, -4, 1900000000, -3, left_shift=12),
    im.AddParams(0, 0, 0, 1073741824, 0, 1073741824, 0, 1073741824, 1, left_shift=4),
    im.AddParams(0, 0, 0, 1073741824, 0, 1073741824, 0, 0, 0),
]


@pytest.mark.parametrize("p", FOLDED)
@pytest.mark.parametrize("op", ["add", "sub"])
@pytest.mark.parametrize("built_by", ["kernel", "compiler"])
def test_add_s8_every_input_pair(kernels, p, op, built_by) -> None:
    """All 65,536 pairs of int8 inputs, dense and with b broadcast along a row, with the
    tables the kernel builds and with those the compiler passes (intmath.add_tables;
    None where the parameters do not fold)."""
    a = np.repeat(np.arange(-128, 128, dtype=np.int8), 256).reshape(256, 256)
    b = np.tile(np.arange(-128, 128, dtype=np.int8), 256).reshape(256, 256)
    tables = im.add_tables(p, subtract=op == "sub") if built_by == "compiler" else None
    for act_min, act_max in ((-128, 127), (-100, 90)):
        want = im.add_s8(a, b, p, act_min, act_max, subtract=op == "sub")
        params = _add_struct(p, act_min, act_max, tables)
        y = np.empty(a.shape, np.int8)
        fn = getattr(kernels, f"dnn64_{op}_s8")
        fn(bcast(a.shape, a.shape, b.shape), a, b, params, y)
        np.testing.assert_array_equal(y, want)
        row = b[:1].copy()
        y = np.empty(a.shape, np.int8)
        fn(bcast(a.shape, a.shape, row.shape), a, row, params, y)
        np.testing.assert_array_equal(y, im.add_s8(a, row, p, act_min, act_max,
                                                   subtract=op == "sub"))


@pytest.mark.parametrize("into", ["a", "b"])
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 16, 8, 5), (1, 3, 7, 53)])
@pytest.mark.parametrize("built_by", ["kernel", "compiler"])
def test_add_s8_in_place_over_either_input(kernels, into, shape, built_by) -> None:
    """A residual Add(+ReLU) written over whichever input dies there: each element's
    inputs are requantised before its output is stored, so y may be a or b (without
    tables, with the kernel's from 1024 elements, with the compiler's at any size; a
    length not a multiple of four for the four-a-pass rows)."""
    a, b = _int8_pair(shape, shape, 34)
    p = im.add_params(*QUANT[0])
    tables = im.add_tables(p) if built_by == "compiler" else None
    assert built_by == "kernel" or tables is not None
    act_min = QUANT[0][5]  # ReLU: clamp at the output zero point
    want = im.add_s8(a, b, p, act_min, 127)
    y = a if into == "a" else b
    kernels.dnn64_add_s8(bcast(a.shape, a.shape, b.shape), a, b,
                         _add_struct(p, act_min, 127, tables), y)
    np.testing.assert_array_equal(y, want)


def test_int8_add_is_close_to_real_add() -> None:
    """intmath.add_s8 itself against real arithmetic: within one output step."""
    a, b = _int8_pair((1000,), (1000,), 33)
    sa, za, sb, zb, so, zo = QUANT[0]
    got = im.add_s8(a, b, im.add_params(*QUANT[0])).astype(np.float64)
    real = ((a.astype(np.float64) - za) * sa + (b.astype(np.float64) - zb) * sb) / so + zo
    inside = (real > -128) & (real < 127)
    assert np.max(np.abs(got[inside] - real[inside])) <= 0.5 + 1e-3
