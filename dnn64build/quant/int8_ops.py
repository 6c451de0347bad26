"""The int8 operators of the quantised IR in numpy: the definition the C kernels reproduce.

Each function takes the node's input arrays (int8 activations, int8/int32 constants), the
node's attributes (integer parameters in ``attrs["int8"]``, see docs/quant-ir.md) and the
static output shape. Integer sums are formed in float64: every partial sum is an integer
below 2**53 (products are at most 255 * 128, reductions at most 65793 terms), so the
result is exact whatever order BLAS adds in.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dnn64build.ir.kernels import KERNELS
from dnn64build.ir.ops import ACTIVATION_OPS, SCALAR_OPERAND_ACTIVATIONS, VIEW_OPS
from dnn64build.quant import intmath
from dnn64build.quant.qparams import QParams, quantize_values

Int8Op = Callable[[list[np.ndarray], dict, list[int]], np.ndarray]


def _output_stage(acc: np.ndarray, p: dict, axis: int) -> np.ndarray:
    """``clamp(zp + mbqm(acc, M[c], shift[c]), act_min, act_max)`` then the optional table."""
    y = intmath.requantize(acc, p["multiplier"], p["shift"], p["out_zero_point"],
                           p["act_min"], p["act_max"], axis=axis)
    return _lut(y, p["lut"]) if p.get("lut") is not None else y


def _lut(x: np.ndarray, table: list[int]) -> np.ndarray:
    return np.asarray(table, dtype=np.int8)[x.astype(np.int64) + 128]


def _as_int(total: np.ndarray) -> np.ndarray:
    return np.rint(total).astype(np.int64)


def _windows(xp: np.ndarray, attrs: dict, out_hw: list[int]):
    """Views ``xp[..., oy*sh + ky*dh, ox*sw + kx*dw]`` for every tap (ky, kx)."""
    (kh, kw), (sh, sw), (dh, dw) = attrs["kernel_shape"], attrs["strides"], attrs["dilations"]
    oh, ow = out_hw
    for ky in range(kh):
        for kx in range(kw):
            y0, x0 = ky * dh, kx * dw
            yield xp[..., y0:y0 + sh * (oh - 1) + 1:sh, x0:x0 + sw * (ow - 1) + 1:sw]


def _pad_to_windows(x: np.ndarray, attrs: dict, out_hw: list[int], value: float,
                    extra_value: float) -> np.ndarray:
    """Pad H/W by the explicit pads (``value``) and what the last window needs (``extra``)."""
    top, left, bottom, right = attrs["pads"]
    k, s, d = attrs["kernel_shape"], attrs["strides"], attrs["dilations"]
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=value)
    extra = [max(0, (out_hw[i] - 1) * s[i] + (k[i] - 1) * d[i] + 1 - xp.shape[2 + i])
             for i in range(2)]
    return np.pad(xp, ((0, 0), (0, 0), (0, extra[0]), (0, extra[1])),
                  constant_values=extra_value)


def conv(inputs: list[np.ndarray], attrs: dict, out_shape: list[int]) -> np.ndarray:
    x, w, bias = inputs
    p = attrs["int8"]
    n = x.shape[0]
    m, cg, kh, kw = w.shape
    g = attrs["group"]
    out_hw = out_shape[2:]
    xc = x.astype(np.float64) - p["x_zero_point"]
    xp = _pad_to_windows(xc, attrs, out_hw, 0.0, 0.0)
    cols = np.stack(list(_windows(xp, attrs, out_hw)), axis=2)  # [n, c, taps, oh, ow]
    cols = cols.reshape(n, g, cg * kh * kw, out_hw[0] * out_hw[1])
    wg = w.astype(np.float64).reshape(g, m // g, cg * kh * kw)
    acc = _as_int(np.matmul(wg[None], cols)).reshape(n, m, *out_hw)
    return _output_stage(acc + bias.reshape(1, m, 1, 1), p, axis=1)


def conv_transpose(inputs: list[np.ndarray], attrs: dict, out_shape: list[int]) -> np.ndarray:
    """group == 1: y[oy, ox] gathers x[iy, ix] * w[:, oc, ky, kx] with oy = iy*s - pad + ky*d."""
    x, w, bias = inputs
    p = attrs["int8"]
    n, c, h, wi = x.shape
    _, m, kh, kw = w.shape
    (sh, sw), (dh, dw) = attrs["strides"], attrs["dilations"]
    top, left = attrs["pads"][:2]
    oh, ow = out_shape[2:]
    full_h = max((h - 1) * sh + (kh - 1) * dh + 1, top + oh)
    full_w = max((wi - 1) * sw + (kw - 1) * dw + 1, left + ow)
    full = np.zeros((n, m, full_h, full_w))
    xc = (x.astype(np.float64) - p["x_zero_point"]).reshape(n, c, h * wi)
    wf = w.astype(np.float64)
    for ky in range(kh):
        for kx in range(kw):
            contrib = np.matmul(wf[:, :, ky, kx].T, xc).reshape(n, m, h, wi)
            full[:, :, ky * dh:ky * dh + sh * (h - 1) + 1:sh,
                 kx * dw:kx * dw + sw * (wi - 1) + 1:sw] += contrib
    acc = _as_int(full[:, :, top:top + oh, left:left + ow])
    return _output_stage(acc + bias.reshape(1, m, 1, 1), p, axis=1)


def gemm(inputs: list[np.ndarray], attrs: dict, out_shape: list[int]) -> np.ndarray:
    """Gemm with B = [N, K] (transB 1) or MatMul with a constant B = [K, N]."""
    a, b, bias = inputs
    p = attrs["int8"]
    bt = b.astype(np.float64)
    bt = bt.T if attrs.get("transB", 0) else bt
    acc = _as_int(np.matmul(a.astype(np.float64) - p["x_zero_point"], bt))
    return _output_stage(acc + bias.astype(np.int64), p, axis=-1)


def matmul(inputs: list[np.ndarray], attrs: dict, out_shape: list[int]) -> np.ndarray:
    if "x_zero_point" in attrs["int8"]:
        return gemm(inputs, attrs, out_shape)
    a, b = inputs
    p = attrs["int8"]
    acc = _as_int(np.matmul(a.astype(np.float64) - p["a_zero_point"],
                            b.astype(np.float64) - p["b_zero_point"]))
    return _output_stage(acc, p, axis=-1)


def max_pool(inputs: list[np.ndarray], attrs: dict, out_shape: list[int]) -> np.ndarray:
    xp = _pad_to_windows(inputs[0].astype(np.float64), attrs, out_shape[2:], -np.inf, -np.inf)
    y = np.max(np.stack(list(_windows(xp, attrs, out_shape[2:]))), axis=0)
    return np.clip(y, -128, 127).astype(np.int8)  # a window with no input gives -128


def average_pool(inputs: list[np.ndarray], attrs: dict, out_shape: list[int]) -> np.ndarray:
    """Sum over counted positions (padding counts as x_zero_point), divided with rounding."""
    x = inputs[0]
    p = attrs["int8"]
    out_hw = out_shape[2:]
    ones = np.ones((1, 1, *x.shape[2:]))
    include_pad = attrs["count_include_pad"]
    xp = _pad_to_windows(x.astype(np.float64), attrs, out_hw, p["x_zero_point"], 0.0)
    counted = _pad_to_windows(ones, attrs, out_hw, 1.0 if include_pad else 0.0, 0.0)
    total = sum(_windows(xp * counted, attrs, out_hw))
    count = sum(_windows(counted, attrs, out_hw))
    y = intmath.divide_round_half_away(_as_int(total), _as_int(count))
    return np.clip(y, p["act_min"], p["act_max"]).astype(np.int8)


def global_average_pool(inputs: list[np.ndarray], attrs: dict, out_shape: list[int]):
    x = inputs[0]
    p = attrs["int8"]
    total = x.astype(np.int64).sum(axis=(2, 3), keepdims=True)
    y = intmath.divide_round_half_away(total, x.shape[2] * x.shape[3])
    return np.clip(y, p["act_min"], p["act_max"]).astype(np.int8)


def reduce_mean(inputs: list[np.ndarray], attrs: dict, out_shape: list[int]) -> np.ndarray:
    p = attrs["int8"]
    total = (inputs[0].astype(np.int64) - p["x_zero_point"]).sum(axis=tuple(attrs["axes"]))
    y = intmath.multiply_by_quantized_multiplier(total, p["multiplier"], p["shift"])
    y = np.clip(y.astype(np.int64) + p["out_zero_point"], -128, 127)
    return y.astype(np.int8).reshape(out_shape)


def reduce_max(inputs: list[np.ndarray], attrs: dict, out_shape: list[int]) -> np.ndarray:
    if not attrs["axes"]:
        return inputs[0]
    return inputs[0].max(axis=tuple(attrs["axes"])).reshape(out_shape)


def softmax(inputs: list[np.ndarray], attrs: dict, out_shape: list[int]) -> np.ndarray:
    p = attrs["int8"]
    return intmath.softmax_s8(inputs[0], p["exp_table"], p["multiplier"], p["shift"],
                              p["out_zero_point"], axis=attrs["axis"])


def add_params_of(p: dict) -> intmath.AddParams:
    keys = ("a_zero_point", "b_zero_point", "out_zero_point", "a_multiplier", "a_shift",
            "b_multiplier", "b_shift", "out_multiplier", "out_shift", "left_shift")
    return intmath.AddParams(*(p[k] for k in keys))


def _mul_params(p: dict) -> intmath.MulParams:
    keys = ("a_zero_point", "b_zero_point", "out_zero_point", "multiplier", "shift")
    return intmath.MulParams(*(p[k] for k in keys))


def add(inputs: list[np.ndarray], attrs: dict, out_shape: list[int]) -> np.ndarray:
    p = attrs["int8"]
    return intmath.add_s8(*inputs, add_params_of(p), p["act_min"], p["act_max"])


def sub(inputs: list[np.ndarray], attrs: dict, out_shape: list[int]) -> np.ndarray:
    p = attrs["int8"]
    return intmath.add_s8(*inputs, add_params_of(p), p["act_min"], p["act_max"], subtract=True)


def mul(inputs: list[np.ndarray], attrs: dict, out_shape: list[int]) -> np.ndarray:
    p = attrs["int8"]
    return intmath.mul_s8(*inputs, _mul_params(p), p["act_min"], p["act_max"])


def div(inputs: list[np.ndarray], attrs: dict, out_shape: list[int]) -> np.ndarray:
    p = attrs["int8"]
    return intmath.div_s8(*inputs, _mul_params(p), p["act_min"], p["act_max"])


def _minmax(maximum: bool) -> Int8Op:
    def run(inputs: list[np.ndarray], attrs: dict, out_shape: list[int]) -> np.ndarray:
        p = attrs["int8"]
        keys = ("a_zero_point", "b_zero_point", "out_zero_point", "a_multiplier", "a_shift",
                "b_multiplier", "b_shift")
        return intmath.minmax_s8(*inputs, intmath.MinMaxParams(*(p[k] for k in keys)),
                                 maximum)
    return run


def lut(inputs: list[np.ndarray], attrs: dict, out_shape: list[int]) -> np.ndarray:
    return _lut(inputs[0], attrs["int8"]["lut"])


def pad(inputs: list[np.ndarray], attrs: dict, out_shape: list[int]) -> np.ndarray:
    return KERNELS["Pad"](inputs[:1], {**attrs, "value": attrs["int8"]["pad_value"]},
                          [out_shape])[0]


def _source_coords(mode: str, out_len: int, in_len: int, scale: float) -> np.ndarray:
    """Source coordinate of each output index, computed in float32 as the C kernel does."""
    o = np.arange(out_len, dtype=np.float32)
    s = np.float32(scale)
    if mode == "asymmetric":
        return o / s
    if mode == "align_corners":
        if out_len == 1:
            return np.zeros(1, np.float32)
        return o * np.float32(in_len - 1) / np.float32(out_len - 1)
    if mode == "pytorch_half_pixel" and out_len == 1:
        return np.zeros(1, np.float32)
    return (o + np.float32(0.5)) / s - np.float32(0.5)  # half_pixel, pytorch_half_pixel


def _nearest_index(coords: np.ndarray, mode: str, in_len: int) -> np.ndarray:
    low = np.floor(coords)
    frac = coords - low
    if mode == "floor":
        index = low
    elif mode == "ceil":
        index = np.ceil(coords)
    elif mode == "round_prefer_ceil":
        index = np.where(frac >= 0.5, low + 1, low)
    else:  # round_prefer_floor
        index = np.where(frac > 0.5, low + 1, low)
    return np.clip(index, 0, in_len - 1).astype(np.int64)


def _linear_taps(coords: np.ndarray, in_len: int):
    """(i0, i1, w0, w1): clamped neighbours and Q11 weights of each source coordinate."""
    c = np.clip(coords, np.float32(0), np.float32(in_len - 1))
    i0 = np.floor(c).astype(np.int64)
    i1 = np.minimum(i0 + 1, in_len - 1)
    frac = c - i0.astype(np.float32)
    w1 = (frac * np.float32(1 << intmath.RESIZE_WEIGHT_BITS) + np.float32(0.5)).astype(np.int64)
    return i0, i1, (1 << intmath.RESIZE_WEIGHT_BITS) - w1, w1


def resize(inputs: list[np.ndarray], attrs: dict, out_shape: list[int]) -> np.ndarray:
    x = inputs[0]
    h_in, w_in = x.shape[-2:]
    h_out, w_out = out_shape[-2:]
    mode = attrs["coordinate_transformation_mode"]
    ys = _source_coords(mode, h_out, h_in, attrs["scales"][-2])
    xs = _source_coords(mode, w_out, w_in, attrs["scales"][-1])
    if attrs["mode"] == "nearest":
        iy = _nearest_index(ys, attrs["nearest_mode"], h_in)
        ix = _nearest_index(xs, attrs["nearest_mode"], w_in)
        return x[..., iy[:, None], ix[None, :]]
    y0, y1, wy0, wy1 = _linear_taps(ys, h_in)
    x0, x1, wx0, wx1 = _linear_taps(xs, w_in)
    v = x.astype(np.int64)
    top = wx0 * v[..., y0[:, None], x0[None, :]] + wx1 * v[..., y0[:, None], x1[None, :]]
    bottom = wx0 * v[..., y1[:, None], x0[None, :]] + wx1 * v[..., y1[:, None], x1[None, :]]
    acc = wy0[:, None] * top + wy1[:, None] * bottom
    return intmath.rounding_divide_by_pot(acc, 2 * intmath.RESIZE_WEIGHT_BITS).astype(np.int8)


def concat(inputs: list[np.ndarray], attrs: dict, out_shape: list[int]) -> np.ndarray:
    return np.concatenate(inputs, axis=attrs["axis"])


def _data_movement(op: str) -> Int8Op:
    def run(inputs: list[np.ndarray], attrs: dict, out_shape: list[int]) -> np.ndarray:
        return KERNELS[op](inputs, attrs, [out_shape])[0]
    return run


def quantize_linear(inputs: list[np.ndarray], attrs: dict, out_shape: list[int]) -> np.ndarray:
    return quantize_values(inputs[0], QParams.from_quant(attrs["int8"]))


def dequantize_linear(inputs: list[np.ndarray], attrs: dict, out_shape: list[int]):
    p = attrs["int8"]
    return (inputs[0].astype(np.int32) - p["zero_point"]).astype(np.float32) * np.float32(
        p["scale"])


def requantize(inputs: list[np.ndarray], attrs: dict, out_shape: list[int]) -> np.ndarray:
    p = attrs["int8"]
    y = intmath.multiply_by_quantized_multiplier(
        inputs[0].astype(np.int64) - p["x_zero_point"], p["multiplier"], p["shift"])
    return np.clip(y.astype(np.int64) + p["out_zero_point"], -128, 127).astype(np.int8)


INT8_OPS: dict[str, Int8Op] = {
    "Conv": conv,
    "ConvTranspose": conv_transpose,
    "Gemm": gemm,
    "MatMul": matmul,
    "MaxPool": max_pool,
    "AveragePool": average_pool,
    "GlobalAveragePool": global_average_pool,
    "ReduceMean": reduce_mean,
    "Softmax": softmax,
    "Add": add,
    "Sub": sub,
    "Mul": mul,
    "Div": div,
    "Max": _minmax(maximum=True),
    "Min": _minmax(maximum=False),
    **dict.fromkeys((*ACTIVATION_OPS, *SCALAR_OPERAND_ACTIVATIONS), lut),
    "Pad": pad,
    "Resize": resize,
    "Concat": concat,
    **{op: _data_movement(op) for op in (*VIEW_OPS, "Transpose")},
    "QuantizeLinear": quantize_linear,
    "DequantizeLinear": dequantize_linear,
    "Requantize": requantize,
    # structural operators (issue 22); an int8 ReduceSum is a ReduceMean of count 1
    "ReduceSum": reduce_mean,
    "ReduceMax": reduce_max,
    **{op: _data_movement(op) for op in ("Slice", "Expand", "Tile")},
}
