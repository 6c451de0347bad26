"""dnn64_math: fp32 exp/tanh/sigmoid/log accuracy against float64, as dnn64_math.h documents."""

from __future__ import annotations

import numpy as np
from kernels_ctypes import act_f32


def _rel_err(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.max(np.abs(got.astype(np.float64) - want) / np.abs(want)))


def test_expf_accuracy(kernels) -> None:
    x = np.concatenate([np.linspace(-87, 88, 20001), [-1e-8, 0.0, 1e-8, 0.34657, -0.34657]])
    x = x.astype(np.float32)
    got = np.array([kernels.dnn64_expf(float(v)) for v in x], np.float32)
    assert _rel_err(got, np.exp(x.astype(np.float64))) <= 1.5e-7
    assert kernels.dnn64_expf(89.0) == np.inf
    assert kernels.dnn64_expf(-104.0) == 0.0
    assert np.isnan(kernels.dnn64_expf(float("nan")))


def test_tanh_and_sigmoid_accuracy(kernels) -> None:
    x = np.concatenate([np.linspace(-20, 20, 40001), np.geomspace(1e-30, 1, 200)])
    x = np.concatenate([x, -x]).astype(np.float32)
    x = x[x != 0]
    th = np.empty_like(x)
    kernels.dnn64_activation_f32(act_f32("tanh"), x, th, x.size)
    assert _rel_err(th, np.tanh(x.astype(np.float64))) <= 2.5e-7
    sg = np.empty_like(x)
    kernels.dnn64_activation_f32(act_f32("sigmoid"), x, sg, x.size)
    assert _rel_err(sg, 1 / (1 + np.exp(-x.astype(np.float64)))) <= 2.5e-7


def test_logf_accuracy(kernels) -> None:
    x = np.concatenate([np.geomspace(1e-45, 3e38, 40001), np.linspace(0.5, 2, 20001)])
    x = x.astype(np.float32)
    x = x[x > 0]
    got = np.array([kernels.dnn64_logf(float(v)) for v in x], np.float32).astype(np.float64)
    want = np.log(x.astype(np.float64))
    near_one = (x >= 0.5) & (x <= 2)
    assert np.max(np.abs(got - want)[near_one]) <= 1e-7
    assert _rel_err(got[~near_one], want[~near_one]) <= 1.5e-7
    assert kernels.dnn64_logf(0.0) == -np.inf
    assert kernels.dnn64_logf(float("inf")) == np.inf
    assert np.isnan(kernels.dnn64_logf(-1.0)) and np.isnan(kernels.dnn64_logf(float("nan")))
