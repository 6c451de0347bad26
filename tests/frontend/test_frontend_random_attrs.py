"""Random attribute combinations for the windowed operators, checked against onnxruntime."""

from __future__ import annotations

import tempfile

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from tools.zoo.compare import import_and_compare

SETTINGS = settings(max_examples=30, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


def model_of(node, x_shape: list[int], inits: dict[str, np.ndarray]):
    graph = helper.make_graph(
        [node], "t", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", "c", "h", "w"])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)


def check(model) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        _, error = import_and_compare(model, tmp)
    assert error <= 1e-4


@st.composite
def window(draw, max_kernel: int = 4):
    k = [draw(st.integers(1, max_kernel)) for _ in range(2)]
    s = [draw(st.integers(1, 3)) for _ in range(2)]
    d = [draw(st.integers(1, 2)) for _ in range(2)]
    pads = [draw(st.integers(0, k[i % 2] - 1)) for i in range(4)]
    size = [draw(st.integers((k[i] - 1) * d[i] + 1, 10)) for i in range(2)]
    auto_pad = draw(st.sampled_from(["NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"]))
    if auto_pad.startswith("SAME"):
        d = [1, 1]  # onnxruntime refuses dilations with SAME_* padding
        s = [min(s[i], k[i]) for i in range(2)]  # and computes negative pads for k < s
    return k, s, d, pads, size, auto_pad


def window_attrs(k, s, d, pads, auto_pad) -> dict:
    attrs = {"kernel_shape": k, "strides": s, "dilations": d}
    if auto_pad == "NOTSET":
        attrs["pads"] = pads
    else:
        attrs["auto_pad"] = auto_pad
    return attrs


@SETTINGS
@given(window(), st.sampled_from([(2, 3, 1), (4, 4, 2), (3, 3, 3), (4, 6, 2)]),
       st.booleans(), st.integers(0, 2**31))
def test_conv_random_attributes(win, channels, bias, seed) -> None:
    k, s, d, pads, size, auto_pad = win
    cin, cout, group = channels
    rng = np.random.default_rng(seed)
    inits = {"W": rng.standard_normal((cout, cin // group, *k)).astype(np.float32)}
    if bias:
        inits["B"] = rng.standard_normal(cout).astype(np.float32)
    node = helper.make_node("Conv", ["x", *inits], ["y"], group=group,
                            **window_attrs(k, s, d, pads, auto_pad))
    check(model_of(node, [1, cin, *size], inits))


@SETTINGS
@given(window(), st.sampled_from(["MaxPool", "AveragePool"]), st.integers(0, 1),
       st.integers(0, 1))
def test_pool_random_attributes(win, op, ceil_mode, count_include_pad) -> None:
    k, s, d, pads, size, auto_pad = win
    attrs = window_attrs(k, s, d, pads, auto_pad)
    if auto_pad == "NOTSET":
        attrs["ceil_mode"] = ceil_mode
    if op == "AveragePool":
        attrs["count_include_pad"] = count_include_pad
        del attrs["dilations"]  # AveragePool has dilations only from opset 19
    check(model_of(helper.make_node(op, ["x"], ["y"], **attrs), [1, 2, *size], {}))


@SETTINGS
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 2), st.integers(0, 1),
       st.integers(1, 2), st.integers(0, 2**31))
def test_conv_transpose_random_attributes(k, s, d, pad, group, seed) -> None:
    rng = np.random.default_rng(seed)
    pad = min(pad, (k - 1) * d)
    out_pad = rng.integers(0, s) if s > 1 else 0
    inits = {"W": rng.standard_normal((2 * group, 2, k, k)).astype(np.float32)}
    node = helper.make_node("ConvTranspose", ["x", "W"], ["y"], kernel_shape=[k, k],
                            strides=[s, s], dilations=[d, d], pads=[pad] * 4, group=group,
                            output_padding=[int(out_pad)] * 2)
    check(model_of(node, [1, 2 * group, 4, 5], inits))
