"""`kernels: auto | cpu | rsp`: which int8 nodes call the RSP kernel, and the host build of
the same C (which has no RSP) stays bit-exact with the integer reference executor."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from codegen_cases import onnx_model, rand
from onnx import helper
from test_codegen_int8 import _conv_block

from dnn64build.codegen.lowering import KERNEL_CHOICES
from dnn64build.codegen.model import generate_model
from dnn64build.frontend import import_onnx
from dnn64build.passes import optimize
from dnn64build.planner.dagplan import PlanParams
from dnn64build.planner.graph_plan import plan_graph
from dnn64build.quant import quantize_graph, run_int8
from dnn64build.rule_modules import import_rule_module
from tools.host_run import run_on_host

REPO = Path(__file__).resolve().parents[2]


def _depthwise_block() -> onnx.ModelProto:
    """Depthwise Convs that dwconv_s8.rsp takes (3x3 stride 1, 5x5 stride 2) and two it
    does not (dilated; 7x7), a 1x1 between them, and a squeeze-excite Mul of the planes
    by one value a channel."""
    inits = {"d1": rand(6, 1, 3, 3, seed=1), "d2": rand(6, 1, 5, 5, seed=2) * 0.5,
             "p": rand(6, 6, 1, 1, seed=3), "d3": rand(6, 1, 3, 3, seed=4),
             "d4": rand(6, 1, 7, 7, seed=5) * 0.3}
    nodes = [
        helper.make_node("Conv", ["x", "d1"], ["a0"], name="dw3", pads=[1, 1, 1, 1], group=6),
        helper.make_node("GlobalAveragePool", ["a0"], ["g"], name="squeeze"),
        helper.make_node("Sigmoid", ["g"], ["e"], name="excite"),
        helper.make_node("Mul", ["a0", "e"], ["a"], name="se"),
        helper.make_node("Conv", ["a", "d2"], ["b"], name="dw5s2", pads=[2, 2, 2, 2],
                         strides=[2, 2], group=6),
        helper.make_node("Conv", ["b", "p"], ["c"], name="pw"),
        helper.make_node("Conv", ["c", "d3"], ["d"], name="dil", pads=[2, 2, 2, 2],
                         dilations=[2, 2], group=6),
        helper.make_node("Conv", ["d", "d4"], ["y"], name="dw7", pads=[3, 3, 3, 3], group=6),
    ]
    return onnx_model(nodes, {"x": [1, 6, 9, 11]}, ["y"], inits)


def _quantize(path: Path, model: onnx.ModelProto):
    onnx.save(model, path)
    graph = optimize(import_onnx(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # synthetic calibration warns, as it should
        return quantize_graph(graph, None, synthetic=True)[0]


@pytest.fixture(scope="module")
def quantized(tmp_path_factory: pytest.TempPathFactory):
    return _quantize(tmp_path_factory.mktemp("rsp") / "model.onnx", _conv_block())


@pytest.fixture(scope="module")
def depthwise(tmp_path_factory: pytest.TempPathFactory):
    return _quantize(tmp_path_factory.mktemp("rsp") / "dw.onnx", _depthwise_block())


def conv_channels_per_group(graph) -> dict[str, int]:
    """int8 Conv node -> its output channels per group, from the weight and attributes."""
    return {n.name: graph.constants[n.inputs[1]].shape[0] // n.attrs["group"]
            for n in graph.nodes if n.op == "Conv" and "int8" in n.attrs}


@pytest.mark.parametrize("kernels", KERNEL_CHOICES)
def test_nodes_on_the_rsp(quantized, kernels: str) -> None:
    per_group = conv_channels_per_group(quantized)
    assert len(per_group) == 3 and min(per_group.values()) < 8 <= max(per_group.values())
    # an int8 Gemm of one row with k a multiple of 8 (128 here) runs on the RSP
    # (dnn64_rsp_gemv_dma_s8) under `rsp` and `auto`
    gemms = [n.name for n in quantized.nodes if n.op == "Gemm" and "int8" in n.attrs]
    assert gemms and all(quantized.tensors[n.inputs[0]].shape[0] == 1
                         and quantized.constants[n.inputs[1]].shape[-1] % 8 == 0
                         for n in quantized.nodes if n.name in gemms)
    expected = {"cpu": [], "rsp": sorted([*per_group, *gemms]),
                "auto": sorted([*(n for n, c in per_group.items() if c >= 8), *gemms])}[kernels]
    model = generate_model(quantized, plan_graph(quantized, PlanParams(timings=False)), symbol="q",
                           kernels=kernels)
    assert sorted(model.metadata["rsp_nodes"]) == expected
    assert model.metadata["kernels"] == kernels
    assert model.c_source.count("dnn64_rsp_gemv_dma_s8(") == len(gemms) * (kernels != "cpu")
    assert (model.c_source.count("dnn64_rsp_conv_s8(") + model.c_source.count("dnn64_rsp_gemv_")
            == len(expected))
    assert model.c_source.count("(on the RSP)") == len(expected)


@pytest.mark.parametrize("kernels", KERNEL_CHOICES)
def test_depthwise_convs_and_channel_mul_on_the_rsp(depthwise, kernels: str) -> None:
    # dnn64_rsp_dwconv_s8 for the depthwise shapes its microcode takes, with `auto` too;
    # the others as before (dnn64_rsp_conv_s8 with `rsp`, the CPU with `auto`)
    model = generate_model(depthwise, plan_graph(depthwise, PlanParams(timings=False)),
                           symbol="q", kernels=kernels)
    se = next(n for n in depthwise.nodes if n.op == "Mul").attrs["int8"]
    # the Mul goes to the RSP as its output stage fits the RSP's (2 <= -shift <= 15, M > 2^30)
    assert 2 <= -se["shift"] <= 15 and se["multiplier"] > 2**30
    mul = [] if kernels == "cpu" else ["se"]
    dw = [] if kernels == "cpu" else ["dw3", "dw5s2"]
    pool = [] if kernels == "cpu" else ["squeeze"]  # the planes summed on the RSP
    # dil, dw7: with `rsp` through dnn64_rsp_conv_s8, pw (6 input channels) through
    # dnn64_rsp_pwconv_s8; `auto` keeps them on the CPU (6 output channels)
    general = {"cpu": [], "rsp": ["dil", "dw7"], "auto": []}[kernels]
    pw = ["pw"] if kernels == "rsp" else []
    assert model.c_source.count("dnn64_rsp_pwconv_s8(") == len(pw)
    assert model.c_source.count("dnn64_rsp_mul_channels_s8(") == len(mul)
    assert model.c_source.count("dnn64_rsp_dwconv_s8(") == len(dw)
    assert model.c_source.count("dnn64_rsp_global_avgpool_s8(") == len(pool)
    assert model.c_source.count("dnn64_rsp_conv_s8(") == len(general)
    assert sorted(model.metadata["rsp_nodes"]) == sorted(mul + dw + pool + general + pw)


@pytest.mark.parametrize("which", ["quantized", "depthwise"])
def test_host_build_of_rsp_code_is_bit_exact(which: str, request: pytest.FixtureRequest,
                                             tmp_path: Path, runtime_cache: Path) -> None:
    quantized = request.getfixturevalue(which)
    rng = np.random.default_rng(3)
    inputs = {n: rng.standard_normal(quantized.tensors[n].shape).astype(np.float32)
              for n in quantized.inputs}
    model = generate_model(quantized, plan_graph(quantized, PlanParams(timings=False)), symbol="q",
                           kernels="rsp")
    result = run_on_host([(model, [inputs[n] for n in quantized.inputs])], tmp_path,
                         cache_dir=runtime_cache)
    expected = run_int8(quantized, inputs)
    for out in quantized.outputs:
        np.testing.assert_array_equal(result.outputs["q"][out], expected[out], err_msg=out)


def test_unknown_kernels_value_is_a_bug(quantized) -> None:
    with pytest.raises(ValueError, match="kernels must be one of"):
        generate_model(quantized, plan_graph(quantized, PlanParams(timings=False)), symbol="q",
                       kernels="gpu")


def test_the_rule_offers_exactly_codegens_choices() -> None:
    rule = import_rule_module(REPO / "rules/n64_model.py")
    assert sorted(rule.KERNELS) == sorted(KERNEL_CHOICES)


@pytest.mark.parametrize("kernels", KERNEL_CHOICES)
def test_pointwise_convs_on_the_rsp(kernels: str, tmp_path: Path) -> None:
    # 1x1, stride 1, no padding, c_in up to 8 or a multiple of 8: dnn64_rsp_pwconv_s8
    # (the RSP fetching its own rows); c_in = 12: dnn64_rsp_pwconv_padded_s8 (weight rows
    # of 16 taps, the last 4 zero); stride 2: dnn64_rsp_conv_s8
    inits = {"p1": rand(16, 5, 1, 1, seed=1), "p2": rand(12, 16, 1, 1, seed=2),
             "p3": rand(8, 12, 1, 1, seed=3), "p4": rand(8, 8, 1, 1, seed=4)}
    nodes = [helper.make_node("Conv", ["x", "p1"], ["a"], name="pw5"),
             helper.make_node("Conv", ["a", "p2"], ["b"], name="pw16"),
             helper.make_node("Conv", ["b", "p3"], ["c"], name="pw12"),
             helper.make_node("Conv", ["c", "p4"], ["y"], name="pw8s2", strides=[2, 2])]
    graph = _quantize(tmp_path / "pw.onnx", onnx_model(nodes, {"x": [1, 5, 6, 6]}, ["y"], inits))
    model = generate_model(graph, plan_graph(graph, PlanParams(timings=False)), symbol="q",
                           kernels=kernels)
    on_rsp = kernels != "cpu"
    assert model.c_source.count("dnn64_rsp_pwconv_s8(") == 2 * on_rsp
    assert model.c_source.count("dnn64_rsp_pwconv_padded_s8(") == on_rsp
    assert model.c_source.count("dnn64_rsp_conv_s8(") == on_rsp
    assert len(model.metadata["rsp_nodes"]) == 4 * on_rsp
