"""Dag groups on the host: random small DAGs (residual Adds, stride-2 downsample
branches, Concats, per-channel affines, pools) run row-streamed through whole sub-DAGs,
with weights re-read per firing, give the unfused program's outputs (int8 exactly, fp32
within 1e-5), which match onnxruntime (fp32) or the integer reference executor (int8);
every plan passes the independent checker. The same with the graph input and output
streamed, and a segmentation head's bilinear upsample handed out row by row."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from codegen_cases import TOLERANCE, dags, model_graph, rand, widest_dag_groups
from hypothesis import HealthCheck, assume, given, settings

from dnn64build.codegen.model import GeneratedModel, generate_model
from dnn64build.errors import UserError
from dnn64build.ir.graph import Graph
from dnn64build.planner.checker import check_plan
from dnn64build.planner.dagplan import PlanParams
from dnn64build.planner.fusion.policy import input_refusal, output_refusal
from dnn64build.planner.graph_plan import plan_graph
from dnn64build.quant import run_int8
from tools.host_run import run_on_host
from tools.zoo.builder import NetBuilder
from tools.zoo.compare import run_onnxruntime, scaled_error


def _mode_graph(model: onnx.ModelProto, shape: tuple[int, ...], mode: str, workdir: Path,
                seed: int) -> tuple[Graph, np.ndarray]:
    """``model``'s graph in ``mode`` ("fp32", "int8", or "int8 io": int8 with int8 inputs
    and outputs) and an input of ``shape`` drawn from ``seed``."""
    graph = model_graph(model, workdir, mode != "fp32",
                        io="int8" if mode == "int8 io" else "float32")
    rng = np.random.default_rng(seed)
    x = (rng.integers(-128, 128, shape, dtype=np.int8) if mode == "int8 io"
         else rand(*shape, seed=seed))
    return graph, x


def _assert_fused_equals_plain_and_references(
        model: onnx.ModelProto, graph: Graph, plain: dict, fused: dict, x: np.ndarray,
        int8: bool, workdir: Path, runtime_cache: Path, *, fp32_atol: float = 1e-5,
        relative: bool = False) -> GeneratedModel:
    """Runs the unfused and the fused plan's programs on the host: int8, the same bits, and
    those of the integer reference executor; fp32, within ``fp32_atol`` (times the largest
    unfused value if ``relative``) of each other and within TOLERANCE of onnxruntime.
    Returns the fused program."""
    models = [(generate_model(graph, plan, symbol=label), [x])
              for label, plan in (("plain", plain), ("fused", fused))]
    result = run_on_host(models, workdir, cache_dir=runtime_cache)
    y = graph.outputs[0]
    out = {m.symbol: result.outputs[m.symbol][y] for m, _ in models}
    if int8:  # int8 io or a float32 output of the integer pipeline: the same bits
        np.testing.assert_array_equal(out["fused"], out["plain"])
        np.testing.assert_array_equal(out["plain"], run_int8(graph, {"x": x})[y])
    else:
        atol = fp32_atol * (np.abs(out["plain"]).max() if relative else 1.0)
        np.testing.assert_allclose(out["fused"], out["plain"], rtol=0, atol=atol)
        assert scaled_error(run_onnxruntime(model, {"x": x})[y], out["fused"]) <= TOLERANCE
    return models[1][0]


@pytest.mark.parametrize("int8", [False, True], ids=["fp32", "int8"])
@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=dags())
def test_dag_group_equals_unfused(int8: bool, case, tmp_path_factory,
                                  runtime_cache: Path) -> None:
    model, (c, h, w) = case
    workdir = tmp_path_factory.mktemp("dag")
    graph = model_graph(model, workdir, int8)
    groups = widest_dag_groups(graph)
    assume(groups)
    x = rand(1, c, h, w, seed=5)
    plans = [plan_graph(graph, PlanParams(timings=False), groups=chosen)
             for chosen in ([], groups)]
    for plan in plans:
        assert check_plan(plan) is None, check_plan(plan)
    _assert_fused_equals_plain_and_references(model, graph, *plans, x, int8, workdir,
                                              runtime_cache)


@pytest.mark.parametrize("mode", ["fp32", "int8", "int8 io"])
@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=dags())
def test_streamed_input_equals_unfused(mode: str, case, tmp_path_factory,
                                       runtime_cache: Path) -> None:
    """planner: {fusion: dag, input: stream}: the graph input is read row by row (from
    the input asset, through the run function's callback) and never planned whole; the
    outputs equal the unfused program's and the references'. int8 with a float32 input
    streams it through its QuantizeLinear, int8 io streams the int8 input itself."""
    model, (c, h, w) = case
    workdir = tmp_path_factory.mktemp("stream")
    graph, x = _mode_graph(model, (1, c, h, w), mode, workdir, seed=7)
    assert not input_refusal(graph), input_refusal(graph)
    plain = plan_graph(graph, PlanParams(timings=False))
    streamed = plan_graph(graph, PlanParams(timings=False), fusion="dag", input_mode="stream")
    assert check_plan(streamed) is None, check_plan(streamed)
    assert streamed["streamed_inputs"] == ["x"]
    assert "x" not in {b["name"] for b in streamed["buffers"]}
    _assert_fused_equals_plain_and_references(model, graph, plain, streamed, x,
                                              mode != "fp32", workdir, runtime_cache)


@pytest.mark.parametrize("mode", ["fp32", "int8", "int8 io"])
@pytest.mark.parametrize("inputs", ["whole", "stream"], ids=["input whole", "input stream"])
@settings(max_examples=5, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=dags())
def test_streamed_output_equals_unfused(mode: str, inputs: str, case, tmp_path_factory,
                                        runtime_cache: Path) -> None:
    """planner: {fusion: dag, output: stream}: the graph output is handed out row by row
    (printed by write_rows as the rows are finished, put together by the protocol
    parser) and never planned whole; the outputs equal the unfused program's and the
    references'. int8 with a float32 output hands it out through its DequantizeLinear."""
    model, (c, h, w) = case
    workdir = tmp_path_factory.mktemp("emit")
    graph, x = _mode_graph(model, (1, c, h, w), mode, workdir, seed=5)
    assert not output_refusal(graph), output_refusal(graph)
    y = graph.outputs[0]
    plain = plan_graph(graph, PlanParams(timings=False))
    emitted = plan_graph(graph, PlanParams(timings=False), fusion="dag", input_mode=inputs,
                         output_mode="stream")
    assert check_plan(emitted) is None, check_plan(emitted)
    assert emitted["streamed_outputs"] == [y]
    assert y not in {b["name"] for b in emitted["buffers"]}
    fused = _assert_fused_equals_plain_and_references(model, graph, plain, emitted, x,
                                                      mode != "fp32", workdir, runtime_cache)
    assert fused.metadata["outputs"][0]["streamed"] is True
    assert "write_rows" in fused.c_source


def _seg_head(factor: int, h: int, w: int) -> onnx.ModelProto:
    """A 3x3 Conv classifier on a small map, upsampled bilinearly (pytorch_half_pixel,
    computed sizes) by ``factor``: the tail of LR-ASPP and DeepLabV3."""
    b = NetBuilder("seg_head", seed=factor)
    x = b.conv(b.input("x", [1, 2, h, w]), 2, 3, 3, bias=True)
    return b.build({b.upsample(x, factor, "linear"): [1, 3, h * factor, w * factor]})


@pytest.mark.parametrize("mode", ["fp32", "int8", "int8 io"])
@pytest.mark.parametrize(("factor", "h", "w"), [(2, 7, 3), (4, 6, 5), (8, 5, 4), (16, 3, 3)])
def test_a_streamed_bilinear_upsample_equals_the_whole_resize(
        mode: str, factor: int, h: int, w: int, tmp_path: Path, runtime_cache: Path) -> None:
    """A segmentation head's final Resize runs row by row in the last dag group (one
    kernel call per output row and channel on the one to two input rows it blends) and
    hands its output out: int8 bit-exact with the whole Resize and the integer
    reference, fp32 within 1e-6 of the largest value of the whole Resize (a row near the
    top may blend with a fraction an ulp off) and within 1e-4 of onnxruntime."""
    model = _seg_head(factor, h, w)
    graph, x = _mode_graph(model, (1, 2, h, w), mode, tmp_path, seed=factor)
    y = graph.outputs[0]
    plain = plan_graph(graph, PlanParams(timings=False))
    emitted = plan_graph(graph, PlanParams(timings=False), fusion="dag", output_mode="stream")
    assert check_plan(emitted) is None, check_plan(emitted)
    assert emitted["streamed_outputs"] == [y]
    resize = next(n.name for n in graph.nodes if n.op == "Resize")
    assert resize in emitted["fusion"]["groups"][-1]["nodes"]
    assert emitted["arena_bytes"] < plain["arena_bytes"]
    _assert_fused_equals_plain_and_references(model, graph, plain, emitted, x, mode != "fp32",
                                              tmp_path, runtime_cache, fp32_atol=1e-6,
                                              relative=True)


def test_a_resize_that_cannot_run_row_by_row_says_why(tmp_path: Path) -> None:
    b = NetBuilder("nearest_head", seed=1)
    x = b.conv(b.input("x", [1, 2, 4, 4]), 2, 3, 3, bias=True)
    model = b.build({b.upsample(x, 2, "nearest"): [1, 3, 8, 8]})
    graph = model_graph(model, tmp_path, False)
    with pytest.raises(UserError, match=r"\(Resize\): only a bilinear half-pixel Resize"):
        plan_graph(graph, PlanParams(timings=False), fusion="dag", output_mode="stream")
