"""Fused groups on the host: random Conv/Pool chains (strides, pads, dilations, groups,
odd sizes, tiles at the borders) run row-streamed and patch by patch give exactly the
unfused program's outputs, which match onnxruntime (fp32) or the integer reference
executor (int8); every plan passes the independent checker."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from codegen_cases import TOLERANCE, model_graph, node, onnx_model, rand
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dnn64build.codegen.model import generate_model
from dnn64build.errors import UserError
from dnn64build.frontend import import_onnx
from dnn64build.ir.reference import run as run_reference
from dnn64build.passes import optimize
from dnn64build.planner.checker import check_plan
from dnn64build.planner.dagplan import PlanParams
from dnn64build.planner.fusion.chains import find_chains
from dnn64build.planner.fusion.records import Group
from dnn64build.planner.graph_plan import plan_graph
from dnn64build.quant import run_int8
from tools.host_run import run_on_host
from tools.zoo.compare import run_onnxruntime, scaled_error


def _out(size: int, k: int, s: int, d: int, begin: int, end: int, ceil: bool) -> int:
    span = size + begin + end - (k - 1) * d - 1
    out = (-(-span // s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= size + begin:  # a window starting in the end pad is dropped
        out -= 1
    return out


@st.composite
def chains(draw: st.DrawFn) -> tuple[onnx.ModelProto, list[int]]:
    """A chain of 2-4 Conv / MaxPool / AveragePool nodes on one random input."""
    c, h, w = draw(st.integers(1, 4)), draw(st.integers(4, 19)), draw(st.integers(4, 19))
    shape = [1, c, h, w]
    nodes, inits, name = [], {}, "x"
    for i in range(draw(st.integers(2, 4))):
        op = draw(st.sampled_from(["Conv", "Conv", "MaxPool", "AveragePool"]))
        k = [draw(st.integers(1, 4)), draw(st.integers(1, 4))]
        s = [draw(st.integers(1, 3)), draw(st.integers(1, 3))]
        d = [draw(st.integers(1, 2)), draw(st.integers(1, 2))] if op != "AveragePool" else [1, 1]
        pads = [draw(st.integers(0, k[a % 2] - 1)) for a in range(4)]
        ceil = op != "Conv" and draw(st.booleans())
        out_hw = [_out(shape[2 + a], k[a], s[a], d[a], pads[a], pads[a + 2], ceil)
                  for a in range(2)]
        assume(min(out_hw) >= 1)
        attrs = {"kernel_shape": k, "strides": s, "pads": pads}
        y = f"t{i}"
        if op == "Conv":
            group = draw(st.sampled_from([1, shape[1]]))
            c_out = shape[1] if group > 1 else draw(st.integers(1, 5))
            inits[f"w{i}"] = rand(c_out, shape[1] // group, *k, seed=i)
            inits[f"b{i}"] = rand(c_out, seed=10 + i)
            relu = draw(st.booleans())
            nodes.append(node("Conv", [name, f"w{i}", f"b{i}"], [f"{y}c" if relu else y],
                              dilations=d, group=group, **attrs))
            nodes[-1].name = f"n{i}"
            if relu:
                nodes.append(node("Relu", [f"{y}c"], [y]))
                nodes[-1].name = f"r{i}"
            shape = [1, c_out, *out_hw]
        else:
            if op == "MaxPool":
                attrs["dilations"] = d
            else:
                attrs["count_include_pad"] = draw(st.integers(0, 1))
            nodes.append(node(op, [name], [y], ceil_mode=int(ceil), **attrs))
            nodes[-1].name = f"n{i}"
            shape = [1, shape[1], *out_hw]
        name = y
    return onnx_model(nodes, {"x": [1, c, h, w]}, [name], inits), [c, h, w]


@st.composite
def groupings(draw: st.DrawFn, count: int) -> list[tuple[int, int, str, tuple[int, int], int]]:
    """(first, end, mode, grid, band rows) of one group over nodes[first:end]."""
    first = draw(st.integers(0, count - 2))
    end = draw(st.integers(first + 2, count))
    return [(first, end, mode, (draw(st.integers(1, 4)), draw(st.integers(1, 4))),
             draw(st.integers(1, 3))) for mode in ("stream", "patch")]


def _run(graph, variants: dict[str, list[Group]], x: np.ndarray, workdir: Path,
         cache: Path) -> dict[str, np.ndarray]:
    models = []
    for label, groups in variants.items():
        plan = plan_graph(graph, PlanParams(timings=False), groups=groups)
        assert check_plan(plan) is None, check_plan(plan)
        assert plan["lower_bound_bytes"] <= plan["arena_bytes"]
        models.append((generate_model(graph, plan, symbol=label), [x]))
    result = run_on_host(models, workdir, cache_dir=cache)
    return {m.symbol: result.outputs[m.symbol][graph.outputs[0]] for m, _ in models}


@pytest.mark.parametrize("int8", [False, True], ids=["fp32", "int8"])
@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=chains(), data=st.data())
def test_fused_chain_equals_unfused(int8: bool, case, data, tmp_path_factory,
                                    runtime_cache: Path) -> None:
    model, (c, h, w) = case
    workdir = tmp_path_factory.mktemp("fusion")
    graph = model_graph(model, workdir, int8)
    chain_list, _ = find_chains(graph)
    assume(chain_list)
    names = [n.name for n in chain_list[0]]
    variants: dict[str, list[Group]] = {"plain": []}
    for first, end, mode, grid, band in data.draw(groupings(len(names))):
        variants[mode] = [Group(tuple(names[first:end]), mode, grid, band)]
    x = rand(1, c, h, w, seed=5)
    out = _run(graph, variants, x, workdir, runtime_cache)
    for label in ("stream", "patch"):
        if int8:
            np.testing.assert_array_equal(out[label], out["plain"], err_msg=label)
        else:
            np.testing.assert_allclose(out[label], out["plain"], rtol=0, atol=1e-5,
                                       err_msg=label)
    if int8:
        np.testing.assert_array_equal(out["plain"], run_int8(graph, {"x": x})[graph.outputs[0]])
    else:
        # onnxruntime sizes some ceil_mode pools unlike the model's shapes (whether a last
        # window that starts in the end pad counts; it warns that a shape differs): those
        # chains are compared with the numpy reference executor, which follows the spec.
        # An AveragePool window wholly in the padding (count_include_pad 0) has no defined
        # value (0/0): the references' NaN there is not compared.
        ceil = any(a.name == "ceil_mode" and a.i for n in model.graph.node for a in n.attribute)
        expected = (run_reference(graph, {"x": x}) if ceil
                    else run_onnxruntime(model, {"x": x}))[graph.outputs[0]]
        if np.isfinite(expected).all():
            assert scaled_error(expected, out["stream"]) <= TOLERANCE


def _stem() -> onnx.ModelProto:
    return onnx_model(
        [node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[7, 7], strides=[2, 2],
              pads=[3, 3, 3, 3]),
         node("Relu", ["c"], ["r"]),
         node("MaxPool", ["r"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])],
        {"x": [1, 3, 64, 64]}, ["y"], {"w": rand(16, 3, 7, 7), "b": rand(16)})


def test_stream_lowers_the_bound_without_extra_macs(tmp_path: Path) -> None:
    onnx.save(_stem(), tmp_path / "m.onnx")
    graph = optimize(import_onnx(tmp_path / "m.onnx"))
    plain = plan_graph(graph, PlanParams(timings=False))
    fused = plan_graph(graph, PlanParams(timings=False), fusion="stream")
    assert check_plan(fused) is None
    [group] = fused["fusion"]["groups"]
    assert group["mode"] == "stream" and group["extra_macs"] == 0
    assert fused["op_bound_bytes"] == plain["lower_bound_bytes"]
    # input 3*64*64*4 + output 16*16*16*4 + a row buffer far below the 16x32x32 conv output
    assert fused["lower_bound_bytes"] < plain["lower_bound_bytes"] - 16 * 32 * 32 * 4 // 2
    names = {b["name"] for b in fused["buffers"]}
    assert set(group["buffers"]) <= names and "r" not in names and "c" not in names


def test_patch_reports_its_extra_macs(tmp_path: Path) -> None:
    onnx.save(_stem(), tmp_path / "m.onnx")
    graph = optimize(import_onnx(tmp_path / "m.onnx"))
    names = tuple(n.name for n in graph.nodes)
    grid = (3, 2)
    plan = plan_graph(graph, PlanParams(timings=False), groups=[Group(names, "patch", grid)])
    assert check_plan(plan) is None
    [group] = plan["fusion"]["groups"]
    # brute force: count the conv outputs each tile's halo needs (pool 3x3/2 pad 1 of 32x32)
    computed = 0
    for i in range(grid[0]):
        for k in range(grid[1]):
            spans = [(16 * i // grid[0], 16 * (i + 1) // grid[0]),
                     (16 * k // grid[1], 16 * (k + 1) // grid[1])]
            rows, cols = [min(2 * b, 32) - max(2 * a - 1, 0) for a, b in spans]
            computed += rows * cols
    assert group["extra_macs"] == (computed - 32 * 32) * 16 * 3 * 49 > 0
    chosen = plan_graph(graph, PlanParams(timings=False), fusion="patch")
    assert check_plan(chosen) is None
    assert chosen["fusion"]["extra_macs"] <= 0.15 * chosen["fusion"]["model_macs"]
    assert chosen["lower_bound_bytes"] <= plan_graph(graph, fusion="stream")["lower_bound_bytes"]


def test_fusion_that_cannot_apply_names_the_node(tmp_path: Path) -> None:
    model = onnx_model([node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3]),
                        node("Relu", ["c"], ["r"]), node("Add", ["r", "c"], ["y"])],
                       {"x": [1, 2, 8, 8]}, ["y"], {"w": rand(2, 2, 3, 3)})
    onnx.save(model, tmp_path / "m.onnx")
    graph = optimize(import_onnx(tmp_path / "m.onnx"))
    for mode in ("stream", "patch"):
        with pytest.raises(UserError, match="conv_node") as info:
            plan_graph(graph, PlanParams(timings=False), fusion=mode)
        assert "fusion" in str(info.value)
    assert plan_graph(graph, PlanParams(timings=False), fusion="auto")["fusion"]["groups"] == []


def test_chains_are_cut_where_the_weights_pass_the_cap(tmp_path: Path) -> None:
    convs = [node("Conv", [f"t{i}", f"w{i}"], [f"t{i + 1}"], kernel_shape=[3, 3],
                  pads=[1, 1, 1, 1]) for i in range(3)]
    for i, n in enumerate(convs):
        n.name = f"c{i}"
    model = onnx_model(convs, {"t0": [1, 8, 6, 6]}, ["t3"],
                       {f"w{i}": rand(8, 8, 3, 3, seed=i) for i in range(3)})
    onnx.save(model, tmp_path / "m.onnx")
    graph = optimize(import_onnx(tmp_path / "m.onnx"))
    one = 8 * 8 * 9 * 4  # bytes of each conv's weights (a multiple of 16)
    plan = plan_graph(graph, PlanParams(timings=False), fusion="stream", fusion_weight_cap=2 * one)
    assert [g["nodes"] for g in plan["fusion"]["groups"]] == [["c0", "c1"]]
    assert all(g["weight_bytes"] <= 2 * one for g in plan["fusion"]["groups"])
    with pytest.raises(UserError, match="exceed"):
        plan_graph(graph, PlanParams(timings=False), fusion="stream", fusion_weight_cap=one - 16)


def test_member_names_cannot_end_the_fused_groups_comment(tmp_path: Path) -> None:
    """The group's note names its members inside a C comment: an ONNX name holding "*/"
    must stay inside it (no code of the name's outside the comments)."""
    model = _stem()
    model.graph.node[0].name = "conv */ int injected; /*"
    onnx.save(model, tmp_path / "m.onnx")
    graph = optimize(import_onnx(tmp_path / "m.onnx"))
    plan = plan_graph(graph, PlanParams(timings=False), fusion="stream")
    assert plan["fusion"]["groups"]
    source = generate_model(graph, plan, symbol="m").c_source
    assert "int injected;" in source
    assert "injected" not in re.sub(r"/\*.*?\*/", "", source, flags=re.S)
