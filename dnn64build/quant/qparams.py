"""Quantisation parameters: activation (scale, zero point) from a range, weights and bias.

Every scale is rounded to float32 first (the kernels and the generated C hold scales as
``float``); everything derived from a scale (multipliers, biases, tables) is computed in
float64 from those float32 values, so the C side and numpy agree exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dnn64build.quant.intmath import INT32_MAX, INT32_MIN, round_half_away


@dataclass(frozen=True)
class QParams:
    """Per-tensor asymmetric int8 quantisation: real = (q - zero_point) * scale."""

    scale: float
    zero_point: int

    def as_quant(self) -> dict:
        return {"scale": self.scale, "zero_point": self.zero_point}

    @staticmethod
    def from_quant(quant: dict) -> QParams:
        return QParams(f32(quant["scale"]), int(quant["zero_point"]))


def f32(value: float) -> float:
    """``value`` rounded to the nearest float32, as a Python float."""
    return float(np.float32(value))


def activation_qparams(low: float, high: float) -> QParams:
    """int8 parameters covering [low, high] widened to include 0 (real 0 is exact)."""
    low, high = min(float(low), 0.0), max(float(high), 0.0)
    if not (np.isfinite(low) and np.isfinite(high)):
        raise ValueError(f"non-finite activation range [{low}, {high}]")
    if high - low <= 0.0:
        return QParams(1.0, 0)  # an all-zero tensor: any scale represents it
    scale = f32((high - low) / 255.0)
    zero_point = round_half_away(-128.0 - low / scale)
    return QParams(scale, min(max(zero_point, -128), 127))


def quantize_values(x: np.ndarray, q: QParams) -> np.ndarray:
    """fp32 -> int8 as QuantizeLinear: ``clamp(round_half_even(x / scale) + zp)`` in float32."""
    v = np.asarray(x, dtype=np.float32) / np.float32(q.scale)
    v = np.where(np.isnan(v), np.float32(0.0), np.clip(v, -256.0, 256.0))
    return np.clip(np.rint(v).astype(np.int64) + q.zero_point, -128, 127).astype(np.int8)


def weight_scales(w: np.ndarray, axis: int) -> np.ndarray:
    """Per-channel symmetric scales (float32 values in float64): max |w_c| / 127."""
    moved = np.moveaxis(np.asarray(w, dtype=np.float64), axis, 0).reshape(w.shape[axis], -1)
    peak = np.abs(moved).max(axis=1) if moved.size else np.zeros(w.shape[axis])
    scales = np.where(peak > 0, peak / 127.0, 1.0)
    return scales.astype(np.float32).astype(np.float64)


def quantize_weights(w: np.ndarray, scales: np.ndarray, axis: int, low: int = -127
                     ) -> np.ndarray:
    """int8 weights ``clamp(round_half_even(w / scale_c), low, 127)``: symmetric [-127, 127]
    for weights quantised here, ``low`` -128 to keep a pre-quantised model's -128."""
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.rint(np.asarray(w, dtype=np.float64) / scales.reshape(shape))
    return np.clip(q, low, 127).astype(np.int8)


def quantize_bias(b: np.ndarray, in_scale: float, w_scales: np.ndarray) -> np.ndarray:
    """int32 bias with per-channel scale ``in_scale * w_scale[c]``, rounded half to even."""
    q = np.rint(np.asarray(b, dtype=np.float64) / (in_scale * w_scales))
    return np.clip(q, INT32_MIN, INT32_MAX).astype(np.int32)


def clamp_bounds(low: float | None, high: float | None, q: QParams) -> tuple[int, int]:
    """act_min/act_max of a fused ReLU/Clip in the output's steps."""
    act_min, act_max = -128, 127
    if low is not None:
        act_min = max(act_min, q.zero_point + round_half_away(low / q.scale))
    if high is not None:
        act_max = min(act_max, q.zero_point + round_half_away(high / q.scale))
    return act_min, max(act_min, act_max)
