"""`staging_bytes: auto` (the default): the plan stage grows the weight staging into the
memory the plan leaves free where that cuts RSP layers into fewer tiles, and shrinks it
below the minimum when only that fits. It never makes a plan exceed `memory`, an explicit
size keeps its meaning, a model that barely fits keeps the minimum, and the bigger and
smaller tiles compute the same outputs."""

from __future__ import annotations

import copy
import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from codegen_cases import onnx_model, rand
from onnx import helper

from dnn64build.codegen import shape
from dnn64build.codegen.lowering import Tiled
from dnn64build.codegen.model import generate_model
from dnn64build.codegen.staging import grown_half, tile_counts
from dnn64build.frontend import import_onnx
from dnn64build.ir.graph import Graph
from dnn64build.passes import optimize
from dnn64build.quant import quantize_graph, run_int8
from dnn64build.stages.plan import plan_model
from tools.host_run import run_on_host

MIB = 1024 * 1024


@pytest.fixture(scope="module")
def convs(tmp_path_factory: pytest.TempPathFactory) -> Graph:
    """Two 3x3 Convs of 128 input channels (147 KiB and 74 KiB of int8 weights): tiled
    at the minimum staging (32 KiB halves), whole in one tile when grown."""
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], name="c1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["a"], ["r"]),
             helper.make_node("Conv", ["r", "w2"], ["y"], name="c2", pads=[1, 1, 1, 1])]
    model = onnx_model(nodes, {"x": [1, 128, 8, 8]}, ["y"],
                       {"w1": rand(128, 128, 3, 3, seed=1) * 0.05,
                        "w2": rand(64, 128, 3, 3, seed=2) * 0.05})
    path = tmp_path_factory.mktemp("staging") / "convs.onnx"
    onnx.save(model, path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # synthetic calibration warns, as it should
        return quantize_graph(optimize(import_onnx(path)), None, synthetic=True)[0]


def _config(memory: int, kernels: str = "rsp", **planner: object) -> dict:
    return {"label": "//t:convs", "memory": memory, "kernels": kernels, "fusion": "none",
            **planner}


def _needs(plan: dict) -> int:
    """The fit check's sum, re-derived: the low 1 KiB of RDRAM (exception vectors), the
    arena, the weight staging, the program estimate and the 64 KiB stack."""
    return (1024 + plan["arena_bytes"] + plan["staging"]["bytes"]
            + plan["program"]["estimate_bytes"] + 64 * 1024)


def _tight(convs: Graph) -> int:
    """A memory the model fits only at the minimum staging (derived from the plan, not a
    constant: the program estimate moves with the kernels' sizes)."""
    return plan_model(convs, _config(8 * MIB))["staging"]["minimum_needs_bytes"] + 1024


def _weight_bytes(graph: Graph, name: str) -> int:
    node = next(n for n in graph.nodes if n.name == name)
    return sum(graph.constants[t].nbytes for t in node.inputs if t in graph.constants)


def test_grows_to_hold_the_largest_rsp_layer_whole(convs: Graph) -> None:
    plan = plan_model(convs, _config(8 * MIB))
    staging = plan["staging"]
    assert staging["chosen"] == "grown" and staging["minimum_bytes"] < staging["bytes"]
    # c1 (147 KiB of weights, plus its bias and requant parameters) fits one half whole,
    # and the half is no bigger than its tile needs
    half = staging["bytes"] // 2
    assert _weight_bytes(convs, "c1") <= half < _weight_bytes(convs, "c1") + 4096
    assert _needs(plan) <= 8 * MIB


@pytest.mark.parametrize("fusion", ["none", "auto"])
@pytest.mark.parametrize("memory", ["tight", 440_000, 450_000, 600_000, 8 * MIB])
def test_chosen_staging_never_exceeds_memory(convs: Graph, memory: int | str,
                                             fusion: str) -> None:
    # with `fusion: auto` the fusion decision weighs the minimum staging and the growth
    # comes after it: the fit must hold either way
    if memory == "tight":
        memory = _tight(convs)
    plan = plan_model(convs, _config(memory, fusion=fusion))
    assert _needs(plan) <= memory
    if plan["staging"]["chosen"] == "grown":  # the reserve stays free
        assert _needs(plan) <= memory - 128 * 1024


def test_a_model_that_barely_fits_keeps_the_minimum(convs: Graph) -> None:
    roomy = plan_model(convs, _config(8 * MIB))["staging"]
    barely = roomy["minimum_needs_bytes"] + 128 * 1024 + 8  # less than one tile more
    plan = plan_model(convs, _config(barely))
    assert plan["staging"]["bytes"] == roomy["minimum_bytes"]
    assert plan["staging"]["chosen"] == "minimum"
    assert _needs(plan) <= barely


@pytest.mark.parametrize("chosen", ["grown", "shrunk"])
def test_a_plan_is_lowered_once(convs: Graph, chosen: str,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan stage asks for the code shape of one plan at its minimum staging, then
    grown or shrunk: the graph is lowered once for all (it was twice or more, issue 27),
    and again for a plan whose offsets differ."""
    memory = 8 * MIB if chosen == "grown" else \
        plan_model(convs, _config(8 * MIB))["staging"]["minimum_needs_bytes"] - 1
    graph = copy.copy(convs)  # a graph no other test has lowered
    lowered: list[dict] = []
    real = shape.lower_plan
    monkeypatch.setattr(shape, "lower_plan", lambda *args: lowered.append(args[1]) or real(*args))
    plan = plan_model(graph, _config(memory))
    assert plan["staging"]["chosen"] == chosen and len(lowered) == 1
    moved = copy.deepcopy(lowered[0])  # every buffer 16 bytes up
    moved["arena_bytes"] += 16
    for buffer in moved["buffers"]:
        buffer["offset"] += 16
    shape.code_shape(graph, moved, configured=None, where="//t:convs", kernels="rsp")
    assert len(lowered) == 2


def test_an_explicit_size_is_respected(convs: Graph) -> None:
    plan = plan_model(convs, _config(8 * MIB, staging_bytes=131072))
    assert plan["staging"]["bytes"] == 131072 and plan["staging"]["chosen"] == "configured"


def test_cpu_kernels_keep_the_minimum(convs: Graph) -> None:
    # a CPU kernel reads its input in place whatever the tile: nothing to gain
    cpu = plan_model(convs, _config(8 * MIB, kernels="cpu"))
    explicit_auto = plan_model(convs, _config(8 * MIB, kernels="cpu", staging_bytes="auto"))
    assert cpu["staging"]["bytes"] == explicit_auto["staging"]["bytes"] == 65536


@pytest.mark.parametrize("toolchain", ["libdragon", "host"])
def test_toolchains_without_rsp_kernels_keep_the_minimum(convs: Graph, toolchain: str) -> None:
    # their platform layers run the CPU kernel in place of the RSP one: the memory stays free
    bare = plan_model(convs, _config(8 * MIB, toolchain="bare"))["staging"]
    other = plan_model(convs, _config(8 * MIB, toolchain=toolchain))["staging"]
    assert bare["chosen"] == "grown"
    assert other["chosen"] == "minimum" and other["bytes"] == bare["minimum_bytes"]
    assert toolchain in other["why"]


def _tiled(rows: int, row_bytes: int) -> Tiled:
    return Tiled((np.zeros((rows, row_bytes), np.int8),), lambda b, n, p: "")


def test_grown_half_is_the_smallest_giving_the_fewest_tiles() -> None:
    steps = [_tiled(100, 1000), _tiled(10, 1000)]  # 100 kB and 10 kB
    assert grown_half(steps, 32768, 1 << 20) == 100000  # whole: one tile each
    # 60000 bytes hold 60 rows: 2 tiles of 50 rows, 50000 bytes each
    assert grown_half(steps, 32768, 60000) == 50000
    assert [len(tile_counts(s, 50000)) for s in steps] == [2, 1]
    # 40000 bytes: 3 tiles of 34 rows instead of 4 of 25 at 32768
    assert grown_half(steps, 32768, 40000) == 34000
    # 33000 bytes hold 33 rows: still 4 tiles, no saving, the minimum stays
    assert grown_half(steps, 32768, 33000) == 32768
    assert grown_half([], 32768, 1 << 20) == 32768


def test_bigger_staging_fewer_tiles_same_outputs(convs: Graph, tmp_path: Path,
                                                 runtime_cache: Path) -> None:
    rng = np.random.default_rng(5)
    inputs = {n: rng.standard_normal(convs.tensors[n].shape).astype(np.float32)
              for n in convs.inputs}
    expected = run_int8(convs, inputs)
    tiles = {}
    tight = _tight(convs)
    for memory in (tight, 8 * MIB):  # the minimum (no room to grow); grown
        plan = plan_model(convs, _config(memory))
        model = generate_model(convs, plan, symbol="q", kernels="rsp",
                               staging_bytes=plan["staging"]["bytes"])
        assert model.metadata["staging_bytes"] == plan["staging"]["bytes"]
        tiles[memory] = model.c_source.count("dnn64_rsp_conv_s8(")
        result = run_on_host([(model, [inputs[n] for n in convs.inputs])],
                             tmp_path / str(memory), cache_dir=runtime_cache)
        for out in convs.outputs:
            np.testing.assert_array_equal(result.outputs["q"][out], expected[out], err_msg=out)
    assert tiles[8 * MIB] == 2 < tiles[tight]


def test_a_model_too_big_for_the_minimum_shrinks_it_same_outputs(
        convs: Graph, tmp_path: Path, runtime_cache: Path) -> None:
    """Below its minimum staging's needs the plan stage shrinks the staging (smaller tiles,
    more calls, planner/fusion/ladder.py) rather than refuse; the code computes the reference."""
    minimum = plan_model(convs, _config(8 * MIB))["staging"]
    memory = minimum["minimum_needs_bytes"] - 1
    plan = plan_model(convs, _config(memory))
    assert plan["staging"]["chosen"] == "shrunk"
    assert plan["staging"]["bytes"] < minimum["minimum_bytes"] and _needs(plan) <= memory
    rng = np.random.default_rng(6)
    inputs = {n: rng.standard_normal(convs.tensors[n].shape).astype(np.float32)
              for n in convs.inputs}
    model = generate_model(convs, plan, symbol="q", kernels="rsp",
                           staging_bytes=plan["staging"]["bytes"])
    result = run_on_host([(model, [inputs[n] for n in convs.inputs])], tmp_path,
                         cache_dir=runtime_cache)
    expected = run_int8(convs, inputs)
    for out in convs.outputs:
        np.testing.assert_array_equal(result.outputs["q"][out], expected[out], err_msg=out)
