"""Independent numpy references for the kernel tests: integer convolutions and activations."""

from __future__ import annotations

import numpy as np

from dnn64build.quant import intmath as im


def conv_out(size: int, k: int, stride: int, pad_begin: int, pad_end: int, dil: int) -> int:
    return (size + pad_begin + pad_end - dil * (k - 1) - 1) // stride + 1


def conv_transpose_out(size: int, k: int, stride: int, pad_begin: int, pad_end: int, dil: int,
                       out_pad: int) -> int:
    return (size - 1) * stride - pad_begin - pad_end + dil * (k - 1) + out_pad + 1


def conv_acc_int(x: np.ndarray, x_zp: int, w: np.ndarray, bias: np.ndarray | None,
                 stride: tuple[int, int], pads: tuple[int, int, int, int],
                 dil: tuple[int, int], group: int) -> np.ndarray:
    """int64 Conv accumulators: pad x with its zero point, then sum shifted slices."""
    n, c_in, h, wd = x.shape
    c_out, icpg, kh, kw = w.shape
    xp = np.pad(x.astype(np.int64) - x_zp, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    ho = conv_out(h, kh, stride[0], pads[0], pads[2], dil[0])
    wo = conv_out(wd, kw, stride[1], pads[1], pads[3], dil[1])
    acc = np.zeros((n, c_out, ho, wo), np.int64)
    ocpg = c_out // group
    for oc in range(c_out):
        g = oc // ocpg
        for ky in range(kh):
            for kx in range(kw):
                y0, x0 = ky * dil[0], kx * dil[1]
                patch = xp[:, g * icpg:(g + 1) * icpg,
                           y0:y0 + stride[0] * (ho - 1) + 1:stride[0],
                           x0:x0 + stride[1] * (wo - 1) + 1:stride[1]]
                acc[:, oc] += np.einsum("nchw,c->nhw", patch, w[oc, :, ky, kx].astype(np.int64))
    if bias is not None:
        acc += bias.astype(np.int64)[None, :, None, None]
    return acc


def conv_transpose_acc_int(x: np.ndarray, x_zp: int, w: np.ndarray, bias: np.ndarray | None,
                           stride: tuple[int, int], pads: tuple[int, int, int, int],
                           dil: tuple[int, int], group: int, out_hw: tuple[int, int]) -> np.ndarray:
    """int64 ConvTranspose accumulators by scattering (ONNX weight [c_in, c_out/g, kh, kw])."""
    n, c_in, h, wd = x.shape
    _, ocpg, kh, kw = w.shape
    icpg = c_in // group
    ho, wo = out_hw
    # Scatter into a canvas big enough for every tap, then crop the begin pads.
    full_h = (h - 1) * stride[0] + dil[0] * (kh - 1) + 1
    full_w = (wd - 1) * stride[1] + dil[1] * (kw - 1) + 1
    canvas = np.zeros((n, ocpg * group, max(full_h, pads[0] + ho), max(full_w, pads[1] + wo)),
                      np.int64)
    xc = x.astype(np.int64) - x_zp
    for g in range(group):
        xs = xc[:, g * icpg:(g + 1) * icpg]
        for ky in range(kh):
            for kx in range(kw):
                contrib = np.einsum("nchw,co->nohw", xs, w[g * icpg:(g + 1) * icpg, :, ky, kx]
                                    .astype(np.int64))
                y0, x0 = ky * dil[0], kx * dil[1]
                canvas[:, g * ocpg:(g + 1) * ocpg,
                       y0:y0 + stride[0] * (h - 1) + 1:stride[0],
                       x0:x0 + stride[1] * (wd - 1) + 1:stride[1]] += contrib
    acc = canvas[:, :, pads[0]:pads[0] + ho, pads[1]:pads[1] + wo]
    if bias is not None:
        acc = acc + bias.astype(np.int64)[None, :, None, None]
    return acc


def transpose_weight_tiles(w: np.ndarray, group: int) -> np.ndarray:
    """ONNX ConvTranspose weight [c_in, c_out/g, kh, kw] -> the kernels' [c_out, c_in/g, kh, kw]."""
    c_in, ocpg, kh, kw = w.shape
    icpg = c_in // group
    out = np.empty((ocpg * group, icpg, kh, kw), w.dtype)
    for oc in range(ocpg * group):
        g = oc // ocpg
        out[oc] = w[g * icpg:(g + 1) * icpg, oc % ocpg]
    return np.ascontiguousarray(out)


def activation_f64(kind: str, v: np.ndarray, alpha: float = 0.0, beta: float = 0.0) -> np.ndarray:
    """The fused activations in float64, straight from their ONNX definitions."""
    v = v.astype(np.float64)
    sig = 1.0 / (1.0 + np.exp(-v))
    return {
        "none": lambda: v,
        "relu": lambda: np.maximum(v, 0.0),
        "clip": lambda: np.clip(v, alpha, beta),
        "leaky_relu": lambda: np.where(v < 0, alpha * v, v),
        "sigmoid": lambda: sig,
        "tanh": lambda: np.tanh(v),
        "hard_sigmoid": lambda: np.clip(alpha * v + beta, 0.0, 1.0),
        "hard_swish": lambda: v * np.clip(v / 6.0 + 0.5, 0.0, 1.0),
        "silu": lambda: v * sig,
    }[kind]()


def requant_params(rng: np.random.Generator, channels: int,
                   lo: float = 2e-4, hi: float = 2e-2) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel (multiplier, shift) from random real multipliers; the last one is > 1."""
    reals = rng.uniform(lo, hi, channels)
    reals[-1] = 3.0  # a positive shift, to exercise the saturating left shift
    pairs = [im.quantize_multiplier(float(r)) for r in reals]
    return (np.array([p[0] for p in pairs], np.int32), np.array([p[1] for p in pairs], np.int32))


def output_stage(acc: np.ndarray, mult: np.ndarray, shift: np.ndarray, zp: int, act_min: int,
                 act_max: int, lut: np.ndarray | None, axis: int = 1) -> np.ndarray:
    """intmath requantize, then the optional table."""
    y = im.requantize(acc, mult, shift, zp, act_min, act_max, axis=axis)
    return y if lut is None else lut[y.astype(np.int64) + 128]


def resize_src_coord(o: int, scale: float, n_in: int, n_out: int, coord: str) -> np.float32:
    """The kernels' fp32 source coordinate, op for op in float32."""
    f32 = np.float32
    if coord == "asymmetric":
        return f32(o) / f32(scale)
    if coord == "align_corners":
        return f32(0) if n_out == 1 else f32(o) * f32(n_in - 1) / f32(n_out - 1)
    if coord == "pytorch_half_pixel" and n_out == 1:
        return f32(0)
    return (f32(o) + f32(0.5)) / f32(scale) - f32(0.5)


def linear_taps_q11(n_in: int, n_out: int, scale: float, coord: str):
    """Per output index: i0, i1 and the Q11 weight of i1 (the documented int8 rule)."""
    out = []
    for o in range(n_out):
        v = resize_src_coord(o, scale, n_in, n_out, coord)
        v = min(max(v, np.float32(0)), np.float32(n_in - 1))
        i0 = int(v)
        f = v - np.float32(i0)
        out.append((i0, min(i0 + 1, n_in - 1), int(f * np.float32(2048) + np.float32(0.5))))
    return out


def resize_linear_s8_ref(x: np.ndarray, out_hw: tuple[int, int], scales: tuple[float, float],
                         coord: str) -> np.ndarray:
    """The documented int8 bilinear rule on [planes, h, w]: Q11 weights, rdbp by 22."""
    _, h, w = x.shape
    ho, wo = out_hw
    xi = x.astype(np.int64)
    out = np.empty((x.shape[0], ho, wo), np.int8)
    for oy, (y0, y1, wy1) in enumerate(linear_taps_q11(h, ho, scales[0], coord)):
        for ox, (x0, x1, wx1) in enumerate(linear_taps_q11(w, wo, scales[1], coord)):
            wy0, wx0 = 2048 - wy1, 2048 - wx1
            acc = (wy0 * (wx0 * xi[:, y0, x0] + wx1 * xi[:, y0, x1]) +
                   wy1 * (wx0 * xi[:, y1, x0] + wx1 * xi[:, y1, x1]))
            out[:, oy, ox] = im.rounding_divide_by_pot(acc, 22)
    return out
