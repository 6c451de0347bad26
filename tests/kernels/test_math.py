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


def _each(fn, x: np.ndarray) -> np.ndarray:
    return np.array([fn(float(v)) for v in x], np.float32)


def test_expm1_log_sqrt_accuracy(kernels) -> None:
    """The bounds dnn64_math.h states, against float64 (math.erf for erf)."""
    small = np.concatenate([np.geomspace(1e-30, 0.3465, 300), np.linspace(0.35, 20, 300)])
    small = np.concatenate([small, -small]).astype(np.float32)
    assert _rel_err(_each(kernels.dnn64_expm1f, small), np.expm1(small.astype(np.float64))) \
        <= 2e-7
    pos = np.concatenate([np.geomspace(1e-44, 3e38, 20001), [0.5, 1.5, 2.0]]).astype(np.float32)
    pos = pos[pos != 1.0]  # ln 1 = 0: no relative error to speak of
    assert _rel_err(_each(kernels.dnn64_logf, pos), np.log(pos.astype(np.float64))) <= 2e-7
    assert kernels.dnn64_logf(1.0) == 0.0
    root = _each(kernels.dnn64_sqrtf, pos)
    exact = np.sqrt(pos.astype(np.float64))
    assert np.all(np.abs(root - exact) <= np.spacing(exact.astype(np.float32)))  # one ulp
    assert kernels.dnn64_logf(0.0) == -np.inf and np.isnan(kernels.dnn64_logf(-1.0))
    assert np.isnan(kernels.dnn64_sqrtf(-1.0)) and kernels.dnn64_sqrtf(np.inf) == np.inf


def test_erf_and_pow_accuracy(kernels) -> None:
    import math
    x = np.linspace(-6, 6, 12001).astype(np.float32)
    want = np.array([math.erf(float(v)) for v in x])
    assert float(np.max(np.abs(_each(kernels.dnn64_erff, x) - want))) <= 2e-7
    base = np.geomspace(1e-3, 1e3, 501).astype(np.float32)
    for e in (0.3, -1.7, 3.5):
        got = np.array([kernels.dnn64_powf(float(b), e) for b in base], np.float32)
        exact = base.astype(np.float64) ** np.float64(np.float32(e))
        bound = (np.abs(np.float32(e) * np.log(base.astype(np.float64))) + 2) * 1.2e-7
        assert np.all(np.abs(got / exact - 1) <= bound), e
    assert np.isnan(kernels.dnn64_powf(-2.0, 0.5)) and kernels.dnn64_powf(-2.0, 3.0) == -8.0
