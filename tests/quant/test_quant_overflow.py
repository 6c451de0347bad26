"""The int32 accumulator bound (docs/quant-ir.md): what the quantiser accepts can never
overflow the kernels' int32 sums. The oracle is the bound written out in int64 here."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from dnn64build.errors import UserError
from dnn64build.quant import quantize_graph
from dnn64build.quant.overflow import check_weighted_accumulator
from dnn64build.quant.plan import choose_int8
from tests.quant.quant_testlib import make_model, to_graph

INT32_MAX = 2**31 - 1


def _matmul_of_activations(k: int, tmp_path):
    model = make_model([helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")],
                       {"a": [1, k], "b": [k, 1]}, {"y": [1, 1]}, {})
    return to_graph(model, tmp_path)


@pytest.mark.parametrize("k,int8", [(33025, True), (33026, False)])
def test_matmul_of_two_activations_is_int8_only_up_to_33025_terms(tmp_path, k, int8) -> None:
    # 33025 * 255 * 255 = 2147450625 <= 2**31 - 1 < 33026 * 255 * 255
    assert (k * 255 * 255 <= INT32_MAX) == int8
    int8_nodes, kept = choose_int8(_matmul_of_activations(k, tmp_path), set())
    assert ("mm" in int8_nodes) == int8
    if not int8:
        assert "33025" in kept[0]["reason"]


def _worst_accumulator(w: np.ndarray, bias: np.ndarray, x_zero_point: int) -> np.ndarray:
    """max |bias + sum (x - zx) w| over int8 x, per output row of w [N, K]."""
    dist = max(127 - x_zero_point, x_zero_point + 128)
    return np.abs(bias.astype(np.int64)) + dist * np.abs(w.astype(np.int64)).sum(axis=1)


def test_a_dead_channel_gets_a_wider_weight_scale_instead_of_an_overflowing_bias(
    tmp_path,
) -> None:
    """A dead neuron (weights ~1e-29, as in the committed digits model) used to get a
    clipped int32 bias of -2**31 next to weights of 127: the bound then fails."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 16)).astype(np.float32)
    w[1] = 4e-29 * np.sign(rng.standard_normal(16))
    bias = np.array([0.5, -1.1e-12, 0.25], np.float32)
    model = make_model([helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1, name="fc")],
                       {"x": [1, 16]}, {"y": [1, 3]}, {"w": w, "b": bias})
    graph = to_graph(model, tmp_path)
    samples = [{"x": rng.uniform(0, 1, (1, 16)).astype(np.float32)} for _ in range(8)]
    quantized, report = quantize_graph(graph, samples)
    (node,) = [n for n in quantized.nodes if n.op == "Gemm"]
    assert "int8" in node.attrs
    w_q, b_q = quantized.constants[node.inputs[1]], quantized.constants[node.inputs[2]]
    assert _worst_accumulator(w_q, b_q, node.attrs["int8"]["x_zero_point"]).max() <= INT32_MAX
    assert report["outputs"]["y"]["snr_db"] > 30  # the live channels keep their accuracy


def test_the_check_accepts_the_edge_and_refuses_one_past_it() -> None:
    w = np.full((2, 64), 127, np.int8)
    edge = INT32_MAX - 64 * 255 * 127
    check_weighted_accumulator("fc", "Gemm", w, np.array([edge, -edge], np.int32), 0, -128)
    with pytest.raises(UserError) as err:
        check_weighted_accumulator("fc", "Gemm", w, np.array([0, -edge - 1], np.int32), 0, -128)
    text = str(err.value)
    assert "node 'fc' (Gemm)" in text and "output channel 1" in text
    assert f"= {INT32_MAX + 1} > 2**31 - 1" in text and "fp32_nodes" in text
