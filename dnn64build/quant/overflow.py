"""The int32 accumulators of the int8 kernels never overflow: the bounds that prove it.

Signed overflow is undefined behaviour in C, so every int8 node must be proven safe
before code is generated for it (docs/quant-ir.md, "Accumulator bound").

Weighted ops (Conv, ConvTranspose, Gemm, MatMul with constant B) compute, per output
channel c, ``acc = bias[c]`` then ``acc += (x - zx) * w`` once per term, in some order.
With x in [-128, 127], ``|x - zx| <= D(zx) = max(127 - zx, 128 + zx)``, so after any
number of terms ``|acc| <= |bias[c]| + D(zx) * sum|w_c|`` (the triangle inequality; the
sum is over every weight of channel c, a superset of the terms a ConvTranspose output or
a padded Conv window uses). When that bound is at most ``INT32_MAX`` every partial sum,
and each product (at most 255 * 128), is an int32. ``-INT32_MAX > INT32_MIN``, so the
negative side is covered too. The bound uses the actual quantised weights and bias.

MatMul of two activations computes ``acc += (a - za) * (b - zb)`` from 0. Each factor is
at most 255 in magnitude, so K terms stay below ``K * 255 * 255``, which is at most
``INT32_MAX`` for K <= 33025 (33025 * 65025 = 2147450625; 33026 terms may reach
2147515650). The zero points are only known after calibration, so the bound assumes the
worst ones.

A channel whose bound fails is usually a dead one (weights near 0, e.g. 1e-29, so a tiny
weight scale turns a small float bias into an int32 beyond range). Weights quantised here
then get a wider scale for that channel (``widen_scales``, as TFLite's converter does when
the bias would overflow); fixed scales of a pre-quantised model are kept, and a node that
still fails the proof is refused.
"""

from __future__ import annotations

import numpy as np

from dnn64build.errors import UserError
from dnn64build.quant.intmath import INT32_MAX

MAX_ACTIVATION_PRODUCT_TERMS = INT32_MAX // (255 * 255)  # 33025


def weighted_accumulator_bound(w: np.ndarray, bias: np.ndarray, axis: int,
                               x_zero_point: int) -> np.ndarray:
    """Per output channel (``w``'s ``axis``): the largest ``|acc|`` the kernel can reach."""
    dist = max(127 - x_zero_point, 128 + x_zero_point)
    other = tuple(a for a in range(w.ndim) if a != axis)
    weight_sum = np.abs(w.astype(np.int64)).sum(axis=other)
    return np.abs(bias.astype(np.int64)).reshape(-1) + dist * weight_sum


def widen_scales(w: np.ndarray, bias: np.ndarray, axis: int, scales: np.ndarray,
                 x_scale: float, x_zero_point: int) -> np.ndarray:
    """Per-channel weight scales, each widened where needed so that the quantised channel
    meets the bound. Quantising to ``q = round(v / s)`` errs by at most 1/2 a step, so
    ``|bias_q| + D * sum|w_q| <= (|b| / x_scale + D * sum|w|) / s + 1/2 + D * n / 2`` for n
    weights per channel: a scale at least ``(|b| / x_scale + D * sum|w|) / (INT32_MAX -
    1/2 - D * n / 2)`` keeps the right side within int32."""
    dist = max(127 - x_zero_point, 128 + x_zero_point)
    moved = np.moveaxis(np.asarray(w, dtype=np.float64), axis, 0).reshape(w.shape[axis], -1)
    room = INT32_MAX - 0.5 - dist * moved.shape[1] / 2
    if room <= 0:  # over 16 million weights per channel: no scale helps
        return scales
    real = np.abs(np.asarray(bias, dtype=np.float64)).reshape(-1) / x_scale
    needed = (real + dist * np.abs(moved).sum(axis=1)) / room
    widened = np.maximum(scales, needed).astype(np.float32)
    widened = np.where(widened < needed, np.nextafter(widened, np.float32(np.inf)), widened)
    return widened.astype(np.float64)


def check_weighted_accumulator(node: str, op: str, w: np.ndarray, bias: np.ndarray,
                               axis: int, x_zero_point: int) -> None:
    """UserError naming the node and the bound if some channel's int32 sum may overflow."""
    bound = weighted_accumulator_bound(w, bias, axis, x_zero_point)
    worst = int(np.argmax(bound))
    if bound[worst] <= INT32_MAX:
        return
    raise UserError(
        f"int8 accumulator may overflow in output channel {worst}: |bias| "
        f"{abs(int(bias.reshape(-1)[worst]))} + {max(127 - x_zero_point, 128 + x_zero_point)}"
        f" x sum|w| = {int(bound[worst])} > 2**31 - 1 (int32)",
        where=f"node {node!r} ({op})",
        hint=f"keep it in fp32 (quantize: {{fp32_nodes: [{node}]}}), or calibrate on data "
        "with a wider input range (a tiny input scale makes the int32 bias huge); the bound "
        "is explained in docs/quant-ir.md")
