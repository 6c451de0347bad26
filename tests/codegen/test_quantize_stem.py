"""A QuantizeLinear of the float input and the stem Conv reading it run as one
dnn64_rsp_conv_quantized_s8 call (the CPU quantizing input rows while the RSP computes
the stem): the plan keeps the float input alive through the Conv and apart from its
output, records the pair (plan.json ``quantize_stem``), the independent checker refuses
a pair whose float input shares bytes with the output, a target too small for the longer
lifetime plans without the pair, and the generated code computes the integer
reference's outputs."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from codegen_cases import onnx_model, rand
from onnx import helper

from dnn64build.codegen.model import generate_model
from dnn64build.frontend import import_onnx
from dnn64build.ir.graph import Graph
from dnn64build.passes import optimize
from dnn64build.planner.checker import find_violations
from dnn64build.planner.dagplan import PlanParams
from dnn64build.planner.graph_plan import plan_graph
from dnn64build.quant import quantize_graph, run_int8
from dnn64build.stages.plan import plan_model
from tools.host_run import run_on_host

MIB = 1024 * 1024


@pytest.fixture(scope="module")
def stem(tmp_path_factory: pytest.TempPathFactory) -> Graph:
    """float input 3x40x48 -> (QuantizeLinear) -> stem Conv 3->16, 3x3, stride 2 ->
    HardSwish (a table in the Conv) -> 1x1 Conv 16->8."""
    nodes = [helper.make_node("Conv", ["input", "w1"], ["a"], name="stem", pads=[1, 1, 1, 1],
                              strides=[2, 2]),
             helper.make_node("HardSwish", ["a"], ["h"], name="hswish"),
             helper.make_node("Conv", ["h", "w2"], ["y"], name="pw")]
    model = onnx_model(nodes, {"input": [1, 3, 40, 48]}, ["y"],
                       {"w1": rand(16, 3, 3, 3, seed=1) * 0.3, "w2": rand(8, 16, 1, 1, seed=2)})
    path = tmp_path_factory.mktemp("stem") / "stem.onnx"
    onnx.save(model, path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # synthetic calibration warns, as it should
        return quantize_graph(optimize(import_onnx(path)), None, synthetic=True)[0]


def _config(memory: int, kernels: str = "auto") -> dict:
    return {"label": "//t:stem", "memory": memory, "kernels": kernels, "fusion": "none"}


def _needs(plan: dict) -> int:
    """The fit check's sum: low memory, arena, staging, program estimate, stack."""
    return (1024 + plan["arena_bytes"] + plan["staging"]["bytes"]
            + plan["program"]["estimate_bytes"] + 64 * 1024)


def _buffer(plan: dict, name: str) -> dict:
    return next(b for b in plan["buffers"] if b["name"] == name)


def _share_bytes(a: dict, b: dict) -> bool:
    return a["offset"] < b["offset"] + b["size"] and b["offset"] < a["offset"] + a["size"]


def _quantize_node(graph: Graph) -> str:
    return next(n.name for n in graph.nodes if n.op == "QuantizeLinear")


@pytest.mark.parametrize("kernels", ["auto", "rsp"])
def test_the_float_input_lives_through_the_paired_stem(stem: Graph, kernels: str) -> None:
    plan = plan_model(stem, _config(8 * MIB, kernels))
    quantize = _quantize_node(stem)
    assert plan["quantize_stem"]["pairs"] == [
        {"quantize": quantize, "conv": "stem", "float_input": "input", "output": "h"}]
    x, y = _buffer(plan, "input"), _buffer(plan, "h")
    assert x["last"] == plan["schedule"].index("stem") > plan["schedule"].index(quantize)
    assert not _share_bytes(x, y)
    assert find_violations(plan) == []
    assert "runs inside node 'stem'" in plan_report(plan)


def plan_report(plan: dict) -> str:
    from dnn64build.stages.plan import report
    return report(plan, "//t:stem", 8 * MIB)


def test_cpu_kernels_pair_nothing(stem: Graph) -> None:
    plan = plan_model(stem, _config(8 * MIB, "cpu"))
    assert plan["quantize_stem"]["pairs"] == []
    assert _buffer(plan, "input")["last"] == plan["schedule"].index(_quantize_node(stem))


def test_the_checker_refuses_a_pair_whose_float_input_meets_the_output(stem: Graph) -> None:
    # the unpaired plan lets the stem's output take the dead float input's bytes (as
    # main planned MobileNetV3); recording the pair on it must be refused
    plan = plan_graph(stem, PlanParams())
    x, y = _buffer(plan, "input"), _buffer(plan, "h")
    assert _share_bytes(x, y) and x["last"] < plan["schedule"].index("stem")
    assert find_violations(plan) == []
    plan["quantize_stem"] = {"pairs": [{"quantize": _quantize_node(stem), "conv": "stem",
                                        "float_input": "input", "output": "h"}]}
    kinds = {(v.kind, "quantize_stem" in v.message) for v in find_violations(plan)}
    assert kinds == {("lifetime", True), ("overlap", True)}
    # lifetime extended but the bytes still shared: refused, although no other pair of
    # live buffers overlaps at the stem's step (the record is what forbids it)
    x["last"] = plan["schedule"].index("stem")
    assert ("overlap", True) in {(v.kind, "quantize_stem" in v.message)
                                 for v in find_violations(plan)}


def test_a_target_too_small_for_the_pair_plans_without_it(stem: Graph) -> None:
    paired = plan_model(stem, _config(8 * MIB))
    unpaired = plan_model(stem, _config(8 * MIB, "cpu"))
    assert paired["arena_bytes"] > unpaired["arena_bytes"]
    memory = _needs(paired) - 16  # fits only without the longer lifetime
    plan = plan_model(stem, _config(memory))
    assert plan["quantize_stem"]["pairs"] == []
    assert any("not paired" in n and str(memory) in n for n in plan["quantize_stem"]["notes"])
    assert _needs(plan) <= memory and find_violations(plan) == []


def test_paired_code_computes_the_integer_reference(stem: Graph, tmp_path: Path,
                                                    runtime_cache: Path) -> None:
    # on the host the RSP is absent: the kernel quantizes all, then runs the Conv
    inputs = {"input": np.random.default_rng(3).standard_normal((1, 3, 40, 48))
              .astype(np.float32)}
    plan = plan_model(stem, _config(8 * MIB))
    model = generate_model(stem, plan, symbol="q", kernels="auto",
                           staging_bytes=plan["staging"]["bytes"])
    assert model.c_source.count("dnn64_rsp_conv_quantized_s8(") == 1
    assert "dnn64_quantize_f32_s8(" not in model.c_source
    result = run_on_host([(model, [inputs["input"]])], tmp_path, cache_dir=runtime_cache)
    expected = run_int8(stem, inputs)
    np.testing.assert_array_equal(result.outputs["q"]["y"], expected["y"])
