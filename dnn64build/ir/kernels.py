"""Numpy implementations of the IR operators, written from the ONNX operator spec.

Each kernel takes the input arrays, the node's canonical attributes and the static
output shapes, and returns the output arrays. Float kernels compute in float32.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dnn64build.ir.ops import ACTIVATION_OF_OP

Kernel = Callable[[list[np.ndarray], dict, list[list[int]]], list[np.ndarray]]


# --- activations (also applied as a fused epilogue of Conv/ConvTranspose/Gemm) ---

def _sigmoid(x: np.ndarray) -> np.ndarray:
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype)


def _clip(x: np.ndarray, low: float | None, high: float | None) -> np.ndarray:
    if low is not None:
        x = np.maximum(x, np.asarray(low, x.dtype))
    if high is not None:
        x = np.minimum(x, np.asarray(high, x.dtype))
    return x


def _hard_sigmoid(x: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    return _clip(x * np.float32(alpha) + np.float32(beta), 0.0, 1.0)


# --- unary element-wise ops (issue 22), from the ONNX operator spec: fn(x, attrs) ---

def _float_op(fn: Callable[..., np.ndarray]) -> Callable[[np.ndarray, dict], np.ndarray]:
    """``fn(x, params)`` in x's float dtype, without numpy's warnings for log(0) and the like
    (the IEEE results, inf and nan, are the spec's)."""
    def run(x: np.ndarray, p: dict) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.asarray(fn(x, p)).astype(x.dtype)
    return run


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(x, 0.0)


def _gelu(x: np.ndarray, approximate: str) -> np.ndarray:
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def _elu(x: np.ndarray, alpha: float) -> np.ndarray:
    return np.where(x < 0, alpha * np.expm1(x), x)


def _shrink(x: np.ndarray, lambd: float, bias: float) -> np.ndarray:
    return np.where(x < -lambd, x + bias, np.where(x > lambd, x - bias, 0))


UNARY: dict[str, Callable[[np.ndarray, dict], np.ndarray]] = {
    name: _float_op(fn) for name, fn in {
        "neg": lambda x, p: -x,
        "abs": lambda x, p: np.abs(x),
        "exp": lambda x, p: np.exp(x),
        "log": lambda x, p: np.log(x),
        "sqrt": lambda x, p: np.sqrt(x),
        "reciprocal": lambda x, p: 1 / x,
        "pow": lambda x, p: np.power(x, p["exponent"]),
        "sign": lambda x, p: np.sign(x),
        "erf": lambda x, p: _erf(x),
        "gelu": lambda x, p: _gelu(x, p.get("approximate", "none")),
        "elu": lambda x, p: _elu(x, p["alpha"]),
        "selu": lambda x, p: p["gamma"] * np.where(x <= 0, p["alpha"] * np.expm1(x), x),
        "celu": lambda x, p: (np.maximum(x, 0)
                              + np.minimum(0, p["alpha"] * np.expm1(x / p["alpha"]))),
        "thresholded_relu": lambda x, p: np.where(x > p["alpha"], x, 0),
        "softplus": lambda x, p: _softplus(x),
        "softsign": lambda x, p: x / (1 + np.abs(x)),
        "mish": lambda x, p: x * np.tanh(_softplus(x)),
        "shrink": lambda x, p: _shrink(x, p["lambd"], p["bias"]),
        "swish": lambda x, p: x * _sigmoid(x * p["alpha"]),
    }.items()
}

ACTIVATIONS: dict[str, Callable[[np.ndarray, dict], np.ndarray]] = {
    "relu": lambda x, p: np.maximum(x, 0),
    "relu6": lambda x, p: _clip(x, 0.0, 6.0),
    "clip": lambda x, p: _clip(x, p.get("min"), p.get("max")),
    "leaky_relu": lambda x, p: np.where(x >= 0, x, x * np.float32(p["alpha"])),
    "hard_sigmoid": lambda x, p: _hard_sigmoid(x, p["alpha"], p["beta"]),
    "hard_swish": lambda x, p: x * _hard_sigmoid(x, 1 / 6, 0.5),
    "sigmoid": lambda x, p: _sigmoid(x),
    "tanh": lambda x, p: np.tanh(x),
    "silu": lambda x, p: x * _sigmoid(x),
    **UNARY,
}


def apply_activation(y: np.ndarray, attrs: dict) -> np.ndarray:
    """Apply a fused activation (attrs "activation"/"activation_params"), if any."""
    name = attrs.get("activation")
    return y if name is None else ACTIVATIONS[name](y, attrs.get("activation_params", {}))


# --- convolution and pooling (2-D, NCHW) ---

def _windows(xp: np.ndarray, kernel: list[int], strides: list[int], dilations: list[int],
             out_hw: list[int]):
    """Yield (kh, kw, view) where view[..., i, j] = xp[..., i*sh + kh*dh, j*sw + kw*dw]."""
    (kh_n, kw_n), (sh, sw), (dh, dw), (oh, ow) = kernel, strides, dilations, out_hw
    for kh in range(kh_n):
        for kw in range(kw_n):
            h0, w0 = kh * dh, kw * dw
            yield kh, kw, xp[..., h0:h0 + sh * (oh - 1) + 1:sh, w0:w0 + sw * (ow - 1) + 1:sw]


def _pad_hw(x: np.ndarray, pads: list[int], out_hw: list[int], attrs: dict,
            value: float) -> np.ndarray:
    """Pad H/W with ``pads`` plus what the last window needs past them (ceil_mode)."""
    top, left, bottom, right = pads
    k, s, d = attrs["kernel_shape"], attrs["strides"], attrs["dilations"]
    extra = [max(0, (out_hw[i] - 1) * s[i] + (k[i] - 1) * d[i] + 1
                 - (x.shape[2 + i] + pads[i] + pads[i + 2])) for i in range(2)]
    widths = ((0, 0), (0, 0), (top, bottom + extra[0]), (left, right + extra[1]))
    return np.pad(x, widths, constant_values=value)


def conv(inputs: list[np.ndarray], attrs: dict, out_shapes: list[list[int]]):
    x, w = inputs[0], inputs[1]
    n, c = x.shape[:2]
    m, cg, kh, kw = w.shape
    g = attrs["group"]
    out_hw = out_shapes[0][2:]
    xp = _pad_hw(x, attrs["pads"], out_hw, attrs, 0.0)
    cols = np.empty((n, c, kh, kw, *out_hw), dtype=x.dtype)
    for i, j, view in _windows(xp, [kh, kw], attrs["strides"], attrs["dilations"], out_hw):
        cols[:, :, i, j] = view
    cols = cols.reshape(n, g, cg * kh * kw, out_hw[0] * out_hw[1])
    wg = w.reshape(g, m // g, cg * kh * kw)
    y = np.matmul(wg[None], cols).reshape(n, m, *out_hw)
    if len(inputs) > 2 and inputs[2] is not None:
        y = y + inputs[2].reshape(1, m, 1, 1)
    return [apply_activation(y.astype(x.dtype), attrs)]


def conv_transpose(inputs: list[np.ndarray], attrs: dict, out_shapes: list[list[int]]):
    x, w = inputs[0], inputs[1]
    n, c, h, wi = x.shape
    _, mg, kh, kw = w.shape
    g = attrs["group"]
    (sh, sw), (dh, dw) = attrs["strides"], attrs["dilations"]
    top, left = attrs["pads"][:2]
    oh, ow = out_shapes[0][2:]
    full_h = max((h - 1) * sh + (kh - 1) * dh + 1, top + oh)
    full_w = max((wi - 1) * sw + (kw - 1) * dw + 1, left + ow)
    full = np.zeros((n, g, mg, full_h, full_w), dtype=np.float32)
    xg = x.reshape(n, g, c // g, h * wi)
    wg = w.reshape(g, c // g, mg, kh, kw)
    for i in range(kh):
        for j in range(kw):
            # contrib[n, g, m, h*w] = sum_c w[g, c, m, i, j] * x[n, g, c, h*w]
            contrib = np.matmul(wg[None, :, :, :, i, j].transpose(0, 1, 3, 2), xg)
            full[:, :, :, i * dh:i * dh + sh * (h - 1) + 1:sh,
                 j * dw:j * dw + sw * (wi - 1) + 1:sw] += contrib.reshape(n, g, mg, h, wi)
    y = full.reshape(n, g * mg, full_h, full_w)[:, :, top:top + oh, left:left + ow]
    if len(inputs) > 2 and inputs[2] is not None:
        y = y + inputs[2].reshape(1, -1, 1, 1)
    return [apply_activation(y.astype(x.dtype), attrs)]


def max_pool(inputs: list[np.ndarray], attrs: dict, out_shapes: list[list[int]]):
    x = inputs[0]
    out_hw = out_shapes[0][2:]
    xp = _pad_hw(x, attrs["pads"], out_hw, attrs, -np.inf)
    y = None
    for _, _, view in _windows(xp, attrs["kernel_shape"], attrs["strides"],
                               attrs["dilations"], out_hw):
        y = view.copy() if y is None else np.maximum(y, view)
    return [y]


def average_pool(inputs: list[np.ndarray], attrs: dict, out_shapes: list[list[int]]):
    x = inputs[0]
    out_hw = out_shapes[0][2:]
    pads = attrs["pads"]
    xp = _pad_hw(x, pads, out_hw, attrs, 0.0)
    # Divisor: count the input cells (and, with count_include_pad, the explicit pads but
    # not the extra cells ceil_mode adds) that each window covers.
    ones = np.ones((1, 1, *x.shape[2:]), dtype=np.float32)
    if attrs["count_include_pad"]:
        ones = np.pad(ones, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])),
                      constant_values=1.0)
        mask = np.pad(ones, ((0, 0), (0, 0), (0, xp.shape[2] - ones.shape[2]),
                             (0, xp.shape[3] - ones.shape[3])))
    else:
        mask = _pad_hw(ones, pads, out_hw, attrs, 0.0)
    total = np.zeros((x.shape[0], x.shape[1], *out_hw), dtype=np.float32)
    count = np.zeros((1, 1, *out_hw), dtype=np.float32)
    args = (attrs["kernel_shape"], attrs["strides"], attrs["dilations"], out_hw)
    for (_, _, view), (_, _, mview) in zip(_windows(xp, *args), _windows(mask, *args),
                                           strict=True):
        total += view
        count += mview
    return [(total / count).astype(x.dtype)]


# --- everything else ---

def gemm(inputs: list[np.ndarray], attrs: dict, out_shapes: list[list[int]]):
    a, b = inputs[0], inputs[1]
    a = a.T if attrs["transA"] else a
    b = b.T if attrs["transB"] else b
    y = np.float32(attrs["alpha"]) * (a @ b)
    if len(inputs) > 2 and inputs[2] is not None:
        y = y + np.float32(attrs["beta"]) * inputs[2]
    return [apply_activation(y.astype(inputs[0].dtype), attrs)]


def batch_norm(inputs: list[np.ndarray], attrs: dict, out_shapes: list[list[int]]):
    x, scale, bias, mean, var = inputs
    shape = (1, -1) + (1,) * (x.ndim - 2)
    inv = scale / np.sqrt(var + np.float32(attrs["epsilon"]))
    return [((x - mean.reshape(shape)) * inv.reshape(shape) + bias.reshape(shape))
            .astype(x.dtype)]


def softmax(inputs: list[np.ndarray], attrs: dict, out_shapes: list[list[int]]):
    x = inputs[0]
    e = np.exp(x - x.max(axis=attrs["axis"], keepdims=True))
    return [e / e.sum(axis=attrs["axis"], keepdims=True)]


def log_softmax(inputs: list[np.ndarray], attrs: dict, out_shapes: list[list[int]]):
    x = inputs[0]
    shifted = x - x.max(axis=attrs["axis"], keepdims=True)
    return [(shifted - np.log(np.exp(shifted).sum(axis=attrs["axis"], keepdims=True)))
            .astype(x.dtype)]


def _int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """ONNX integer Div: the quotient truncated toward zero."""
    q = np.abs(a) // np.abs(b)
    return (np.sign(a) * np.sign(b) * q).astype(np.result_type(a, b))


def div(inputs: list[np.ndarray], attrs: dict, out_shapes: list[list[int]]):
    a, b = inputs
    if np.issubdtype(a.dtype, np.integer):
        return [_int_div(a, b)]
    return [a / b]


def pad(inputs: list[np.ndarray], attrs: dict, out_shapes: list[list[int]]):
    x = inputs[0]
    rank = x.ndim
    pads = attrs["pads"]
    widths = [(max(pads[i], 0), max(pads[i + rank], 0)) for i in range(rank)]
    mode = {"constant": "constant", "reflect": "reflect", "edge": "edge",
            "wrap": "wrap"}[attrs["mode"]]
    kwargs = {"constant_values": attrs["value"]} if mode == "constant" else {}
    y = np.pad(x, widths, mode=mode, **kwargs)
    # Negative pads crop.
    crop = tuple(slice(max(-pads[i], 0), y.shape[i] - max(-pads[i + rank], 0))
                 for i in range(rank))
    return [y[crop]]


def _resize_coords(mode: str, out_len: int, in_len: int, scale: float) -> np.ndarray:
    """Input coordinate of each output index (ONNX coordinate_transformation_mode)."""
    x = np.arange(out_len, dtype=np.float64)
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if out_len > 1 else np.zeros_like(x)
    if mode == "align_corners":
        return x * (in_len - 1) / (out_len - 1) if out_len > 1 else np.zeros_like(x)
    if mode == "asymmetric":
        return x / scale
    if mode == "half_pixel_symmetric":
        adjustment = out_len / (scale * in_len)
        offset = in_len / 2 * (1 - adjustment)
        return offset + (x + 0.5) / scale - 0.5
    raise ValueError(f"coordinate_transformation_mode {mode!r}")


def _nearest(coords: np.ndarray, mode: str) -> np.ndarray:
    if mode == "floor":
        return np.floor(coords)
    if mode == "ceil":
        return np.ceil(coords)
    frac = coords - np.floor(coords)
    if mode == "round_prefer_floor":
        return np.where(frac == 0.5, np.floor(coords), np.round(coords))
    return np.where(frac == 0.5, np.ceil(coords), np.round(coords))  # round_prefer_ceil


def resize(inputs: list[np.ndarray], attrs: dict, out_shapes: list[list[int]]):
    y = inputs[0]
    for axis, (in_len, out_len, scale) in enumerate(
            zip(y.shape, out_shapes[0], attrs["scales"], strict=True)):
        if in_len == out_len and scale == 1.0:
            continue
        coords = _resize_coords(attrs["coordinate_transformation_mode"], out_len, in_len, scale)
        if attrs["mode"] == "nearest":
            index = np.clip(_nearest(coords, attrs["nearest_mode"]), 0, in_len - 1)
            y = np.take(y, index.astype(np.int64), axis=axis)
        else:
            low = np.floor(coords)
            weight = (coords - low).astype(np.float32)
            i0 = np.clip(low, 0, in_len - 1).astype(np.int64)
            i1 = np.clip(low + 1, 0, in_len - 1).astype(np.int64)
            shape = [1] * y.ndim
            shape[axis] = out_len
            weight = weight.reshape(shape)
            y = np.take(y, i0, axis=axis) * (1 - weight) + np.take(y, i1, axis=axis) * weight
    return [y.astype(inputs[0].dtype)]


def reshape(inputs: list[np.ndarray], attrs: dict, out_shapes: list[list[int]]):
    return [inputs[0].reshape(attrs["shape"])]


def flatten(inputs: list[np.ndarray], attrs: dict, out_shapes: list[list[int]]):
    x, axis = inputs[0], attrs["axis"]
    return [x.reshape(int(np.prod(x.shape[:axis])), int(np.prod(x.shape[axis:])))]


def squeeze(inputs: list[np.ndarray], attrs: dict, out_shapes: list[list[int]]):
    return [np.squeeze(inputs[0], axis=tuple(attrs["axes"]))]


def unsqueeze(inputs: list[np.ndarray], attrs: dict, out_shapes: list[list[int]]):
    return [np.expand_dims(inputs[0], axis=tuple(attrs["axes"]))]


def slice_(inputs: list[np.ndarray], attrs: dict, out_shapes: list[list[int]]):
    y = inputs[0]
    for start, end, axis, step in zip(attrs["starts"], attrs["ends"], attrs["axes"],
                                      attrs["steps"], strict=True):
        y = np.take(y, np.arange(start, end, step, dtype=np.int64), axis=axis)
    return [y]


def _power(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):  # NaN / inf are the spec's results
        return np.power(a, b)


# --- structural operators (issue 22) ---

def lrn(inputs: list[np.ndarray], attrs: dict, out_shapes: list[list[int]]):
    """ONNX LRN: x / (bias + alpha / size * sum of x^2 over neighbouring channels)^beta."""
    x = inputs[0]
    c, size = x.shape[1], attrs["size"]
    squares = np.pad(np.square(x), [(0, 0), ((size - 1) // 2, size // 2)]
                     + [(0, 0)] * (x.ndim - 2))
    sums = sum(squares[:, i:i + c] for i in range(size))
    scale = np.float32(attrs["alpha"] / size)
    return [(x / (np.float32(attrs["bias"]) + scale * sums) ** np.float32(attrs["beta"]))
            .astype(x.dtype)]


def layer_norm(inputs: list[np.ndarray], attrs: dict, out_shapes: list[list[int]]):
    """ONNX LayerNormalization (first output): normalised over the dims from ``axis`` on."""
    x, scale = inputs[0], inputs[1]
    axes = tuple(range(attrs["axis"], x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = np.square(x - mean).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + np.float32(attrs["epsilon"])) * scale
    if len(inputs) > 2 and inputs[2] is not None:
        y = y + inputs[2]
    return [y.astype(x.dtype)]


def _reduce(fn: Callable[..., np.ndarray]) -> Kernel:
    """ReduceMean/Sum/Max over attrs["axes"] (none: the input unchanged)."""
    def kernel(inputs: list[np.ndarray], attrs: dict, out_shapes: list[list[int]]):
        x = inputs[0]
        if not attrs["axes"]:
            return [x]
        return [np.asarray(fn(x, axis=tuple(attrs["axes"]), keepdims=bool(attrs["keepdims"])))
                .astype(x.dtype)]
    return kernel


def _elementwise(fn: Callable[..., np.ndarray]) -> Kernel:
    def kernel(inputs: list[np.ndarray], attrs: dict, out_shapes: list[list[int]]):
        return [np.asarray(fn(*inputs)).astype(inputs[0].dtype)]
    return kernel


def _activation(name: str) -> Kernel:
    """A stand-alone activation: its parameters are the node's attributes."""
    def kernel(inputs: list[np.ndarray], attrs: dict, out_shapes: list[list[int]]):
        return [ACTIVATIONS[name](inputs[0], attrs)]
    return kernel


KERNELS: dict[str, Kernel] = {
    "Conv": conv,
    "ConvTranspose": conv_transpose,
    "Gemm": gemm,
    "MatMul": _elementwise(np.matmul),
    "Add": _elementwise(np.add),
    "Sub": _elementwise(np.subtract),
    "Mul": _elementwise(np.multiply),
    "Div": div,
    **{op: _activation(name) for op, name in ACTIVATION_OF_OP.items()},
    "Pow": _elementwise(_power),
    "PRelu": _elementwise(lambda x, slope: np.where(x < 0, x * slope, x)),
    "Max": _elementwise(np.maximum),
    "Min": _elementwise(np.minimum),
    "LogSoftmax": log_softmax,
    "Softmax": softmax,
    "MaxPool": max_pool,
    "AveragePool": average_pool,
    "GlobalAveragePool": lambda i, a, o: [i[0].mean(axis=(2, 3), keepdims=True)],
    "ReduceMean": _reduce(np.mean),
    "Concat": lambda i, a, o: [np.concatenate(i, axis=a["axis"])],
    "Flatten": flatten,
    "Reshape": reshape,
    "Transpose": lambda i, a, o: [np.transpose(i[0], a["perm"])],
    "Squeeze": squeeze,
    "Unsqueeze": unsqueeze,
    "Pad": pad,
    "Resize": resize,
    "Identity": lambda i, a, o: [i[0]],
    "Dropout": lambda i, a, o: [i[0]],
    "BatchNormalization": batch_norm,
    "Shape": lambda i, a, o: [np.array(i[0].shape[a["start"]:a["end"]], dtype=np.int64)],
    "Gather": lambda i, a, o: [np.take(i[0], i[1], axis=a["axis"])],
    "Slice": slice_,
    "Cast": lambda i, a, o: [i[0].astype(a["to"])],
    "Floor": _elementwise(np.floor),
    "Ceil": _elementwise(np.ceil),
    # structural operators (issue 22)
    "LRN": lrn,
    "ReduceSum": _reduce(np.sum),
    "ReduceMax": _reduce(np.max),
    "Expand": lambda i, a, o: [np.broadcast_to(i[0], a["shape"]).copy()],
    "Tile": lambda i, a, o: [np.tile(i[0], a["repeats"])],
    "LayerNormalization": layer_norm,
    "Where": lambda i, a, o: [np.where(i[0], i[1], i[2])],
}
