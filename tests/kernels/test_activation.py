"""Activation kernels: fp32 vs onnxruntime ops, int8 table lookups."""

from __future__ import annotations

import numpy as np
import pytest
from kernels_ctypes import act_f32
from kernels_onnxref import assert_close_to_scale, run_node

from dnn64build.quant import intmath as im

# (kernel kind, alpha, beta, ONNX op, ONNX attrs, extra initializers)
CASES = [
    ("relu", 0, 0, "Relu", {}, {}),
    ("clip", 0.0, 6.0, "Clip", {}, {"lo": np.float32(0.0), "hi": np.float32(6.0)}),
    ("clip", -1.5, 0.5, "Clip", {}, {"lo": np.float32(-1.5), "hi": np.float32(0.5)}),
    ("leaky_relu", 0.1, 0, "LeakyRelu", {"alpha": 0.1}, {}),
    ("sigmoid", 0, 0, "Sigmoid", {}, {}),
    ("tanh", 0, 0, "Tanh", {}, {}),
    ("hard_sigmoid", 0.2, 0.5, "HardSigmoid", {"alpha": 0.2, "beta": 0.5}, {}),
    ("hard_sigmoid", 1 / 6, 0.5, "HardSigmoid", {"alpha": 1 / 6, "beta": 0.5}, {}),
    ("hard_swish", 0, 0, "HardSwish", {}, {}),
]

# The unary element-wise ops: (kernel kind, alpha, beta, ONNX op, ONNX attrs, opset)
UNARY_CASES = [
    ("neg", 0, 0, "Neg", {}, 17),
    ("abs", 0, 0, "Abs", {}, 17),
    ("exp", 0, 0, "Exp", {}, 17),
    ("sign", 0, 0, "Sign", {}, 17),
    ("erf", 0, 0, "Erf", {}, 17),
    ("gelu", 0, 0, "Gelu", {}, 20),
    ("gelu_tanh", 0, 0, "Gelu", {"approximate": "tanh"}, 20),
    ("elu", 0.7, 0, "Elu", {"alpha": 0.7}, 17),
    ("selu", 1.67326319217681884765625, 1.05070102214813232421875, "Selu", {}, 17),
    ("celu", 1.5, 0, "Celu", {"alpha": 1.5}, 17),
    ("thresholded_relu", 0.5, 0, "ThresholdedRelu", {"alpha": 0.5}, 17),
    ("softplus", 0, 0, "Softplus", {}, 17),
    ("softsign", 0, 0, "Softsign", {}, 17),
    ("mish", 0, 0, "Mish", {}, 18),
    ("shrink", 1.5, 0.25, "Shrink", {"lambd": 1.5, "bias": 0.25}, 17),
    ("swish", 1.7, 0, "Swish", {"alpha": 1.7}, 24),
]
# Ops defined on positive inputs: (kind, ONNX op)
POSITIVE_CASES = [("log", "Log"), ("sqrt", "Sqrt"), ("reciprocal", "Reciprocal")]


@pytest.mark.parametrize("kind,alpha,beta,op,attrs,opset", UNARY_CASES)
def test_unary_f32_matches_onnxruntime(kernels, kind, alpha, beta, op, attrs, opset) -> None:
    x = np.concatenate([np.linspace(-12, 12, 2001), [-30, -1e-3, -0.0, 0.0, 1e-3, 30]])
    x = x.astype(np.float32)
    want = run_node(op, {"x": x}, attrs, opset=opset)
    y = np.empty_like(x)
    kernels.dnn64_activation_f32(act_f32(kind, alpha, beta), x, y, x.size)
    assert_close_to_scale(y, want)
    assert_close_to_scale(y[np.abs(x) <= 1], want[np.abs(x) <= 1])  # small values too


@pytest.mark.parametrize("kind,op", POSITIVE_CASES)
def test_positive_domain_f32_matches_onnxruntime(kernels, kind, op) -> None:
    x = np.geomspace(1e-3, 1e3, 2001).astype(np.float32)
    want = run_node(op, {"x": x})
    y = np.empty_like(x)
    kernels.dnn64_activation_f32(act_f32(kind), x, y, x.size)
    np.testing.assert_allclose(y, want, rtol=2e-6, atol=0)


@pytest.mark.parametrize("kind,alpha,beta,op,attrs,inits", CASES)
def test_activation_f32_matches_onnxruntime(kernels, kind, alpha, beta, op, attrs, inits) -> None:
    x = np.concatenate([np.linspace(-12, 12, 2001), [-100, -0.0, 0.0, 100]]).astype(np.float32)
    want = run_node(op, {"x": x}, attrs, {k: np.array(v) for k, v in inits.items()})
    y = np.empty_like(x)
    kernels.dnn64_activation_f32(act_f32(kind, alpha, beta), x, y, x.size)
    assert_close_to_scale(y, want)


def test_silu_f32_matches_onnxruntime_sigmoid_times_x(kernels) -> None:
    x = np.linspace(-20, 20, 4001).astype(np.float32)
    want = x.astype(np.float64) * run_node("Sigmoid", {"x": x})
    y = x.copy()
    kernels.dnn64_activation_f32(act_f32("silu"), y, y, y.size)  # in place
    assert_close_to_scale(y, want)


def test_lut_s8_is_a_lookup(kernels) -> None:
    lut = im.activation_lut(lambda v: 1 / (1 + np.exp(-v)), 0.1, 3, 1 / 256, -128)
    x = np.arange(-128, 128, dtype=np.int8)
    y = np.empty_like(x)
    kernels.dnn64_lut_s8(lut, x, y, x.size)
    np.testing.assert_array_equal(y, lut)
    # the table's values from the definition: sigmoid(0) = 0.5 -> 128 steps - 128 = 0
    assert lut[3 + 128] == 0


@pytest.mark.parametrize("count", [1, 3, 4, 7, 255])
def test_lut_s8_in_place_and_tails(kernels, count) -> None:
    """y over x (the CPU applies fused tables in place), counts past the four a pass."""
    lut = np.random.default_rng(count).integers(-128, 128, 256, dtype=np.int8)
    x = np.random.default_rng(count + 1).integers(-128, 128, count + 1, dtype=np.int8)
    want = np.concatenate([lut[x[:count].astype(np.int32) + 128], x[count:]])
    kernels.dnn64_lut_s8(lut, x, x, count)
    np.testing.assert_array_equal(x, want)
