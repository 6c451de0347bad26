"""The generated code uses exactly the planned memory: arena size, poisoned arena,
sanitizers, staging smaller than a layer, weight blob layout, determinism."""

from __future__ import annotations

import re

import numpy as np
import pytest
from codegen_cases import (
    TOLERANCE,
    Case,
    case_inputs,
    compile_case,
    errors_vs_onnxruntime,
    node,
    onnx_model,
    rand,
)
from onnx import helper

from dnn64build.codegen.model import generate_model
from dnn64build.codegen.program import generate_main
from dnn64build.errors import UserError
from tools.host_run import run_on_host
from tools.zoo.compare import run_onnxruntime, scaled_error


def small_net(seed: int = 0) -> Case:
    """Conv -> Relu (fused) -> Conv -> Add skip -> MaxPool -> Gemm: reuse and aliasing."""
    inits = {"w1": rand(8, 3, 3, 3, seed=seed) * 0.4, "b1": rand(8, seed=seed + 1),
             "w2": rand(8, 8, 3, 3, seed=seed + 2) * 0.2, "s": np.array([1, 128], np.int64),
             "fc": rand(10, 128, seed=seed + 3) * 0.1, "fb": rand(10, seed=seed + 4)}
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "r1"], ["a"], name="skip"),
        helper.make_node("MaxPool", ["a"], ["p"], name="pool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Reshape", ["p", "s"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc", "fb"], ["y"], name="fc", transB=1),
    ]
    return Case("small net", onnx_model(nodes, {"x": [1, 3, 8, 8]}, ["y"], inits))


def test_arena_is_plan_plus_staging(tmp_path) -> None:
    graph, plan, model = compile_case(small_net(), tmp_path, "net")
    staging = model.metadata["staging_bytes"]
    expected = -(-plan["arena_bytes"] // 16) * 16 + staging
    assert model.arena_bytes == expected
    assert f"#define NET_ARENA_BYTES {expected}u" in model.header
    main = generate_main([("net", "net.h", model.arena_bytes, model.metadata)])
    assert f"arena[{expected}u]" in main
    # several models share one arena of the largest size
    small = compile_case(Case("tiny", onnx_model([node("Relu", ["x"])], {"x": [2, 2]}, ["y"])),
                         tmp_path, "tiny")[2]
    both = generate_main([("tiny", "tiny.h", small.arena_bytes, small.metadata),
                          ("net", "net.h", model.arena_bytes, model.metadata)])
    assert re.findall(r"arena\[(\d+)u\]", both) == [str(expected)]
    # every arena offset the model code uses lies inside the plan's arena
    for offset in map(int, re.findall(r"ARENA_F32\((\d+)u\)", model.c_source)):
        assert 0 <= offset < plan["arena_bytes"]


def no_reuse_plan(graph) -> dict:
    """An independent, deliberately odd plan: every activation its own buffer, laid
    out in reverse order with a 48-byte gap between buffers, no aliasing."""
    names = [n for n in graph.tensors if not graph.is_constant(n)]
    buffers, offset = [], 0
    for name in reversed(names):
        tensor = graph.tensors[name]
        size = int(np.prod(tensor.shape)) * np.dtype(tensor.dtype).itemsize
        buffers.append({"name": name, "size": size, "offset": offset, "alignment": 16,
                        "first": 0, "last": len(graph.nodes) - 1})
        offset += -(-size // 16) * 16 + 48
    return {"arena_bytes": offset, "schedule": [n.name for n in graph.nodes],
            "buffers": buffers}


def test_any_valid_plan_is_honoured(tmp_path, runtime_cache) -> None:
    case = small_net()
    graph, _, _ = compile_case(case, tmp_path, "net")
    plan = no_reuse_plan(graph)
    model = generate_model(graph, plan, symbol="odd")
    offsets = {b["name"]: b["offset"] for b in plan["buffers"]}
    assert model.metadata["outputs"][0]["offset"] == offsets["y"]
    inputs = case_inputs(case, graph)
    result = run_on_host([(model, [inputs["x"]])], tmp_path, cache_dir=runtime_cache,
                         poison=True, runs=2)
    expected = run_onnxruntime(case.model, inputs)["y"]
    assert scaled_error(expected, result.outputs["odd"]["y"]) <= TOLERANCE


def test_poisoned_arena_between_runs(tmp_path, runtime_cache) -> None:
    """Two runs after filling the arena with NaN and with huge values: both exact and
    equal (parse_outputs raises if runs differ), so no unplanned byte is read."""
    cases = [small_net(), Case("concat in place", onnx_model(
        [helper.make_node("Relu", ["a"], ["ra"], name="ra"),
         helper.make_node("Sigmoid", ["a"], ["sa"], name="sa"),
         node("Concat", ["ra", "sa"], axis=1)], {"a": [1, 4, 2, 2]}, ["y"]))]
    errors = errors_vs_onnxruntime(cases, tmp_path, runtime_cache, runs=2, poison=True)
    assert all(err <= TOLERANCE for err in errors.values()), errors


def mini_unet() -> Case:
    """Two-level U-Net whose deep part (a wide 4x4 stage) outweighs the top skip: the
    planner copies that skip at its concat rather than hold the concat's buffer through."""
    w = {"w1": (4, 2), "w2": (8, 4), "w3": (48, 8), "w4": (8, 48), "w5": (4, 16), "w6": (2, 8)}
    inits = {k: rand(co, ci, 3, 3, seed=i) * 0.3 for i, (k, (co, ci)) in enumerate(w.items())}
    inits["t1"] = rand(8, 8, 2, 2, seed=9) * 0.3  # ConvTranspose [Cin, Cout, k, k]
    inits["t2"] = rand(4, 4, 2, 2, seed=10) * 0.3
    def op(kind: str, inputs: list[str], y: str, **attrs):
        return helper.make_node(kind, inputs, [y], name=y, **attrs)

    pad, two = {"pads": [1] * 4}, {"kernel_shape": [2, 2], "strides": [2, 2]}
    nodes = [op("Conv", ["x", "w1"], "c1", **pad), op("Relu", ["c1"], "s1"),
             op("MaxPool", ["s1"], "p1", **two), op("Conv", ["p1", "w2"], "c2", **pad),
             op("Relu", ["c2"], "s2"), op("MaxPool", ["s2"], "p2", **two),
             op("Conv", ["p2", "w3"], "c3", **pad), op("Relu", ["c3"], "m1"),
             op("Conv", ["m1", "w4"], "c4", **pad), op("Relu", ["c4"], "m2"),
             op("ConvTranspose", ["m2", "t1"], "u2", **two),
             op("Concat", ["s2", "u2"], "k2", axis=1), op("Conv", ["k2", "w5"], "e2", **pad),
             op("ConvTranspose", ["e2", "t2"], "u1", **two),
             op("Concat", ["s1", "u1"], "k1", axis=1), op("Conv", ["k1", "w6"], "y", **pad)]
    return Case("mini unet", onnx_model(nodes, {"x": [1, 2, 16, 16]}, ["y"], inits))


def test_concat_copying_one_skip_matches_onnxruntime(tmp_path, runtime_cache) -> None:
    """The plan copies s1 into its concat (its slot would be held through the deep part)
    while u1, u2 and s2 are written in place: two poisoned runs match onnxruntime."""
    case = mini_unet()
    _, plan, _ = compile_case(case, tmp_path, "unet")
    alias = {b["name"]: b.get("alias_of") for b in plan["buffers"]}
    assert alias["s1"] is None and alias["u1"] == "k1" and alias["s2"] == alias["u2"] == "k2"
    errors = errors_vs_onnxruntime([case], tmp_path / "run", runtime_cache, runs=2, poison=True)
    assert all(err <= TOLERANCE for err in errors.values()), errors


def test_sanitizers_run_clean(tmp_path, runtime_cache) -> None:
    """-fsanitize=address,undefined: the arena is a global of exactly ARENA_BYTES,
    so any access past it (or UB in a kernel call) aborts the program."""
    cases = [small_net(), Case("tiled conv", small_net(seed=5).model, staging_bytes=1280),
             Case("pool + softmax", onnx_model(
                 [node("AveragePool", ["x"], ["p"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                  helper.make_node("Softmax", ["p"], ["y"], name="sm", axis=1)],
                 {"x": [1, 3, 5, 5]}, ["y"]))]
    errors = errors_vs_onnxruntime(cases, tmp_path, runtime_cache, sanitize=True)
    assert all(err <= TOLERANCE for err in errors.values()), errors


def test_staging_smaller_than_a_layer_is_exact(tmp_path, runtime_cache) -> None:
    """conv2's weights are 2304 bytes; with 1280 bytes of staging every layer is tiled, and
    the outputs are bit-identical to the untiled build (and match onnxruntime)."""
    case = small_net()
    graph, _, whole = compile_case(case, tmp_path, "whole")
    _, _, tiled = compile_case(Case("tiled", case.model, staging_bytes=1280), tmp_path,
                               "tiled")
    assert tiled.metadata["staging_bytes"] == 1280 < 2304
    assert tiled.metadata["weight_tiles"] > whole.metadata["weight_tiles"]
    inputs = case_inputs(case, graph)
    feed = [inputs[n] for n in graph.inputs]
    result = run_on_host([(whole, feed), (tiled, feed)], tmp_path, cache_dir=runtime_cache)
    assert result.outputs["whole"]["y"].tobytes() == result.outputs["tiled"]["y"].tobytes()
    assert errors_vs_onnxruntime([Case("tiled", case.model, staging_bytes=1280)],
                                 tmp_path / "ort", runtime_cache)["tiled"] <= TOLERANCE


def test_staging_too_small_is_a_user_error(tmp_path) -> None:
    with pytest.raises(UserError, match="staging"):
        compile_case(Case("tiny", small_net().model, staging_bytes=128), tmp_path, "tiny")


def test_weight_blob_layout_and_byte_order(tmp_path) -> None:
    """One conv, untiled: the blob is W (padded to 16 bytes) then the bias, per the doc."""
    w, b = rand(3, 2, 1, 1, seed=1), rand(3, seed=2)
    case = Case("conv", onnx_model([node("Conv", ["x", "w", "b"])], {"x": [1, 2, 2, 2]}, ["y"],
                                   {"w": w, "b": b}))
    _, _, model = compile_case(case, tmp_path, "blob")
    expected = np.zeros(12, np.float32)
    expected[:6], expected[8:11] = w.reshape(-1), b
    assert model.weights_little == expected.astype("<f4").tobytes()
    assert model.weights_big == expected.astype(">f4").tobytes()
    assert model.metadata["weight_bytes_streamed"] == 48


def test_output_is_deterministic(tmp_path) -> None:
    first = compile_case(small_net(), tmp_path, "net")[2]
    second = compile_case(small_net(), tmp_path, "net")[2]
    assert first.c_source == second.c_source and first.header == second.header
    assert first.weights_big == second.weights_big
    assert first.weights_little == second.weights_little


def test_bad_symbol_is_a_user_error(tmp_path) -> None:
    with pytest.raises(UserError, match="symbol"):
        compile_case(small_net(), tmp_path, "not-an-identifier")
