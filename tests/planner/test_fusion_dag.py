"""Row-streamed dag groups (planner/dagstream.py) on random small DAGs with residual
Adds, Concats, activations and stride-2 branches: every plan passes the independent
checker, which replays each group's firings, and replaying the firings with the numpy
reference executor while holding *only* the rows each buffer holds (every other row
NaN) gives the reference's output exactly; the checker catches broken row programs."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, event, given, settings

from dnn64build.errors import UserError
from dnn64build.frontend import import_onnx
from dnn64build.ir.reference import initial_values, run_node
from dnn64build.ir.reference import run as run_reference
from dnn64build.passes import optimize
from dnn64build.planner.checker import check_plan, find_violations
from dnn64build.planner.dagplan import PlanParams
from dnn64build.planner.fusion.policy import output_refusal
from dnn64build.planner.fusion.records import Group
from dnn64build.planner.graph_plan import plan_graph

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "codegen"))
from codegen_cases import dags, node, onnx_model, rand, widest_dag_groups  # noqa: E402


def _graph(model: onnx.ModelProto, tmp: Path):
    onnx.save(model, tmp / "m.onnx")
    return optimize(import_onnx(tmp / "m.onnx"))


def _replay(graph, plan: dict, x: np.ndarray) -> dict[str, np.ndarray]:
    """Every tensor's values computed firing by firing, each input of a firing holding
    only the rows its buffer holds at that moment, written by that tensor (others NaN).
    An output stage's rows are what it reads of Y's buffer when it fires."""
    values = initial_values(graph, {"x": x})
    nodes = {n.name: n for n in graph.nodes}
    for n in graph.nodes:
        values.update(zip(n.outputs, run_node(graph, n, values), strict=False))
    truth = dict(values)
    for group in plan["fusion"]["groups"]:
        if group["mode"] != "dag":
            continue
        prog = group["program"]
        buffer = {t: v["buffer"] for t, v in prog["tensors"].items()}
        owner: dict[str, dict[int, str]] = {b: {} for b in buffer.values() if b}
        out: dict[str, np.ndarray] = {}
        handed: dict[str, np.ndarray] = {}
        for stage, lo, hi, _, _, a_lo, _ in prog["firings"]:
            s = prog["stages"][stage]
            mine = buffer.get(s["output"])
            if mine:  # drop first, as the generated code does
                owner[mine] = {r: t for r, t in owner[mine].items() if r >= a_lo}
            masked = dict(truth)
            for t in s["inputs"]:
                if buffer.get(t):  # produced inside the group: only its held rows exist
                    part = np.full_like(truth[t], np.nan)
                    for r, who in owner[buffer[t]].items():
                        if who == t:
                            part[:, :, r] = out[t][:, :, r]
                    masked[t] = part
            if s["output"] is None:  # an output stage: the rows of Y it hands out
                y = s["emits"]
                got = handed.setdefault(y, np.full_like(truth[y], np.nan))
                got[:, :, lo:hi] = masked[y][:, :, lo:hi]
                continue
            # an input stage (a streamed graph input) brings the input's own rows
            result = (truth[s["streams"]] if "streams" in s
                      else run_node(graph, nodes[s["node"]], masked)[0])
            buf = out.setdefault(s["output"], np.full_like(truth[s["output"]], np.nan))
            buf[:, :, lo:hi] = result[:, :, lo:hi]
            if mine:
                owner[mine].update(dict.fromkeys(range(lo, hi), s["output"]))
        last = prog["stages"][-1]
        values[last["output"] or last["emits"]] = (out[last["output"]] if last["output"]
                                                   else handed[last["emits"]])
    return values


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=dags())
def test_dag_groups_hold_every_row_they_read(case, tmp_path_factory) -> None:
    model, (c, h, w) = case
    graph = _graph(model, tmp_path_factory.mktemp("dag"))
    x = rand(1, c, h, w, seed=3)
    y = graph.outputs[0]
    expected = run_reference(graph, {"x": x})[y]
    chosen = plan_graph(graph, PlanParams(timings=False), fusion="dag")
    widest = plan_graph(graph, PlanParams(timings=False), groups=widest_dag_groups(graph))
    streamed = plan_graph(graph, PlanParams(timings=False), fusion="dag", input_mode="stream")
    assert streamed["streamed_inputs"] == ["x"]
    plans = [chosen, widest, streamed]
    if not output_refusal(graph):
        emitted = plan_graph(graph, PlanParams(timings=False), fusion="dag",
                             output_mode="stream")
        both = plan_graph(graph, PlanParams(timings=False), fusion="dag",
                          input_mode="stream", output_mode="stream")
        for plan in (emitted, both):
            assert plan["streamed_outputs"] == [y]
            assert y not in {b["name"] for b in plan["buffers"]}
        plans += [emitted, both]
    event(f"output streamed: {not output_refusal(graph)}")
    event(f"dag groups: {len(widest['fusion']['groups'])}")
    for plan in plans:
        assert check_plan(plan) is None, check_plan(plan)
        assert plan["extra_macs"] == 0
        np.testing.assert_array_equal(_replay(graph, plan, x)[y], expected)


def _resnetish(tmp: Path):
    nodes = [node("Conv", ["x", "w0", "b0"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             node("Relu", ["a"], ["r"]),
             node("Conv", ["r", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             node("Relu", ["c1"], ["r1"]),
             node("Conv", ["r1", "w2", "b2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             node("Add", ["c2", "r"], ["s"]),
             node("Relu", ["s"], ["y"])]
    for k, n in enumerate(nodes):
        n.name = f"n{k}"
    inits = {f"w{k}": rand(8, 1 if k == 0 else 8, 3, 3, seed=k) for k in range(3)}
    inits.update({f"b{k}": rand(8, seed=10 + k) for k in range(3)})
    return _graph(onnx_model(nodes, {"x": [1, 1, 32, 16]}, ["y"], inits), tmp)


def test_a_residual_block_streams_below_the_chain_plan(tmp_path: Path) -> None:
    graph = _resnetish(tmp_path)
    chained = plan_graph(graph, PlanParams(timings=False), fusion="stream")
    dag = plan_graph(graph, PlanParams(timings=False), fusion="dag")
    assert check_plan(dag) is None
    (group,) = [g for g in dag["fusion"]["groups"] if g["mode"] == "dag"]
    assert {n.op for n in graph.nodes if n.name in group["nodes"]} >= {"Conv", "Add", "Relu"}
    # X (1x32x16) and Y (8x32x16) whole, every other tensor at most 4 rows of 8x16
    assert dag["lower_bound_bytes"] < chained["lower_bound_bytes"]
    assert dag["lower_bound_bytes"] <= 4 * (32 * 16 + 8 * 32 * 16) + 4 * 4 * 4 * 8 * 16


@pytest.mark.parametrize("breakage", ["small buffer", "missing firing", "dropped too early",
                                      "buffers merged"])
def test_checker_catches_a_broken_row_program(breakage: str, tmp_path: Path) -> None:
    graph = _resnetish(tmp_path)
    plan = plan_graph(graph, PlanParams(timings=False), fusion="dag")
    broken = copy.deepcopy(plan)
    (group,) = [g for g in broken["fusion"]["groups"] if g["mode"] == "dag"]
    firings = group["program"]["firings"]
    if breakage == "small buffer":
        name = group["buffers"][0]
        for b in broken["buffers"]:
            if b["name"] == name:
                b["size"] -= 1
    elif breakage == "missing firing":
        del firings[len(firings) // 2]
    elif breakage == "buffers merged":  # two tensors claim one buffer: rows get overwritten
        tensors = group["program"]["tensors"]
        first, second = [t for t, v in tensors.items() if v["buffer"]][:2]
        tensors[second]["buffer"] = tensors[first]["buffer"]
    else:  # a buffered firing drops every row but its newest: a 3x3 reader loses rows
        k = next(i for i, f in enumerate(firings) if f[5] >= 0 and f[5] < f[1] and i > 4)
        firings[k][5] = firings[k][1]
        for later in firings[k + 1:]:
            if later[0] == firings[k][0]:
                later[3] = firings[k][1]
                break
    kinds = {v.kind for v in find_violations(broken)}
    assert "rows" in kinds, find_violations(broken)


def test_dag_on_a_model_without_row_wise_blocks_names_the_node(tmp_path: Path) -> None:
    model = onnx_model([node("Flatten", ["x"], ["f"]),
                        node("Gemm", ["f", "w"], ["y"], transB=1)],
                       {"x": [1, 2, 4, 4]}, ["y"], {"w": rand(3, 32, seed=1)})
    graph = _graph(model, tmp_path)
    with pytest.raises(UserError) as err:
        plan_graph(graph, PlanParams(timings=False), fusion="dag")
    assert "fusion 'dag' cannot apply" in str(err.value)
    assert "(Flatten)" in str(err.value) or "(Gemm)" in str(err.value)
    assert "does not compute row by row" in str(err.value)
    # auto plans without groups instead
    assert plan_graph(graph, PlanParams(timings=False), fusion="auto")["fusion"]["groups"] == []


@pytest.mark.parametrize("breakage", ["small input buffer", "missing input firing",
                                      "input also whole", "undeclared input stage"])
def test_checker_catches_a_broken_streamed_input(breakage: str, tmp_path: Path) -> None:
    graph = _resnetish(tmp_path)
    plan = plan_graph(graph, PlanParams(timings=False), fusion="dag", input_mode="stream")
    assert check_plan(plan) is None
    broken = copy.deepcopy(plan)
    (group,) = [g for g in broken["fusion"]["groups"] if g.get("streams")]
    program = group["program"]
    buffer = program["tensors"]["x"]["buffer"]
    if breakage == "small input buffer":
        for b in broken["buffers"]:
            if b["name"] == buffer:
                b["size"] -= 1
    elif breakage == "missing input firing":
        k = max(i for i, f in enumerate(program["firings"]) if f[0] == 0)
        del program["firings"][k]
    elif breakage == "input also whole":  # planned whole as well as streamed
        broken["buffers"].append({**broken["buffers"][0], "name": "x"})
    else:
        broken["streamed_inputs"] = []
    kinds = {v.kind for v in find_violations(broken)}
    assert "rows" in kinds, find_violations(broken)


def test_streamed_input_is_not_planned_whole(tmp_path: Path) -> None:
    graph = _resnetish(tmp_path)
    params = PlanParams(timings=False)
    dag = plan_graph(graph, params, fusion="dag")
    streamed = plan_graph(graph, params, fusion="dag", input_mode="stream")
    assert "x" in {b["name"] for b in dag["buffers"]}
    assert "x" not in {b["name"] for b in streamed["buffers"]}
    rows = {b["name"]: b["size"] for b in streamed["buffers"]}
    (group,) = streamed["fusion"]["groups"]
    x_buffer = group["program"]["tensors"]["x"]["buffer"]
    # the 3x3 stem reads at most three rows of x (1 channel x 16 columns x 4 bytes)
    assert 0 < rows[x_buffer] <= 3 * 16 * 4
    assert streamed["lower_bound_bytes"] < dag["lower_bound_bytes"]


def test_input_stream_that_cannot_apply_names_the_node(tmp_path: Path) -> None:
    model = onnx_model([node("Flatten", ["x"], ["f"]),
                        node("Gemm", ["f", "w"], ["y"], transB=1)],
                       {"x": [1, 2, 4, 4]}, ["y"], {"w": rand(3, 32, seed=1)})
    graph = _graph(model, tmp_path)
    with pytest.raises(UserError) as err:
        plan_graph(graph, PlanParams(timings=False), fusion="dag", input_mode="stream")
    assert "input 'stream' cannot apply" in str(err.value)
    assert "(Flatten)" in str(err.value) and "does not compute row by row" in str(err.value)
    with pytest.raises(UserError, match="needs fusion 'dag' or 'auto'"):
        plan_graph(_resnetish(tmp_path), PlanParams(timings=False), fusion="stream",
                   input_mode="stream")


@pytest.mark.parametrize("breakage", ["small output buffer", "missing output firing",
                                      "output firing twice", "output before its row",
                                      "output also whole", "undeclared output stage",
                                      "output not buffered"])
def test_checker_catches_a_broken_streamed_output(breakage: str, tmp_path: Path) -> None:
    graph = _resnetish(tmp_path)
    plan = plan_graph(graph, PlanParams(timings=False), fusion="dag", output_mode="stream")
    assert check_plan(plan) is None and plan["streamed_outputs"] == ["y"]
    broken = copy.deepcopy(plan)
    (group,) = [g for g in broken["fusion"]["groups"] if g.get("emits")]
    program = group["program"]
    last = len(program["stages"]) - 1
    emits = [i for i, f in enumerate(program["firings"]) if f[0] == last]
    if breakage == "small output buffer":
        for b in broken["buffers"]:
            if b["name"] == program["tensors"]["y"]["buffer"]:
                b["size"] -= 1
    elif breakage == "missing output firing":
        del program["firings"][emits[-1]]
    elif breakage == "output firing twice":
        program["firings"].insert(emits[3] + 1, list(program["firings"][emits[3]]))
    elif breakage == "output before its row":  # handed out before its producer wrote it
        f = program["firings"].pop(emits[2])
        program["firings"].insert(emits[1] + 1, f)
    elif breakage == "output also whole":
        broken["buffers"].append({**broken["buffers"][0], "name": "y"})
    elif breakage == "undeclared output stage":
        broken["streamed_outputs"] = []
    else:
        program["tensors"]["y"]["buffer"] = None
    kinds = {v.kind for v in find_violations(broken)}
    assert "rows" in kinds, find_violations(broken)


def test_streamed_output_is_not_planned_whole(tmp_path: Path) -> None:
    graph = _resnetish(tmp_path)
    params = PlanParams(timings=False)
    dag = plan_graph(graph, params, fusion="dag")
    emitted = plan_graph(graph, params, fusion="dag", output_mode="stream")
    assert "y" in {b["name"] for b in dag["buffers"]}
    assert "y" not in {b["name"] for b in emitted["buffers"]}
    rows = {b["name"]: b["size"] for b in emitted["buffers"]}
    (group,) = emitted["fusion"]["groups"]
    assert group["emits"] == "y" and group["program"]["stages"][-1]["emits"] == "y"
    # y's producer (the Relu, in place over the Add) holds one row: 8 channels x 16 x 4
    assert 0 < rows[group["program"]["tensors"]["y"]["buffer"]] <= 2 * 8 * 16 * 4
    assert emitted["lower_bound_bytes"] < dag["lower_bound_bytes"]
    assert emitted["extra_macs"] == 0


def test_output_stream_that_cannot_apply_names_the_node(tmp_path: Path) -> None:
    model = onnx_model([node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3]),
                        node("Flatten", ["c"], ["y"])],
                       {"x": [1, 2, 6, 6]}, ["y"], {"w": rand(3, 2, 3, 3, seed=1),
                                                    "b": rand(3, seed=2)})
    graph = _graph(model, tmp_path)
    with pytest.raises(UserError) as err:
        plan_graph(graph, PlanParams(timings=False), fusion="dag", output_mode="stream")
    assert "output 'stream' cannot apply" in str(err.value)
    assert "(Flatten)" in str(err.value)
    with pytest.raises(UserError, match="output 'stream' needs fusion 'dag' or 'auto'"):
        plan_graph(_resnetish(tmp_path), PlanParams(timings=False), fusion="patch",
                   output_mode="stream")


@pytest.mark.parametrize("factor", [2, 8, 16])
def test_a_handed_out_upsample_holds_every_row_it_reads(factor: int, tmp_path: Path) -> None:
    """A bilinear upsample as the last group's row stage: replayed firing by firing with
    only the held rows of its input (the others NaN), the rows handed out equal the numpy
    reference; a firing whose input rows were dropped is caught by the checker."""
    from tools.zoo.builder import NetBuilder

    b = NetBuilder("seg_head", seed=factor)
    x = b.act(b.conv(b.input("x", [1, 2, 5, 4]), 2, 3, 3, bias=True), "relu")
    model = b.build({b.upsample(x, factor, "linear"): [1, 3, 5 * factor, 4 * factor]})
    graph = _graph(model, tmp_path)
    y = graph.outputs[0]
    chosen = plan_graph(graph, PlanParams(timings=False), fusion="dag", input_mode="stream",
                        output_mode="stream")
    # the whole graph as one group: the Resize reads a row buffer
    whole = plan_graph(graph, PlanParams(timings=False), groups=[
        Group(tuple(n.name for n in graph.nodes), "dag", streams="x", emits=y)])
    xv = rand(1, 2, 5, 4, seed=factor)
    for plan in (chosen, whole):
        assert check_plan(plan) is None, check_plan(plan)
        np.testing.assert_array_equal(_replay(graph, plan, xv)[y],
                                      run_reference(graph, {"x": xv})[y])
    broken = copy.deepcopy(whole)
    program = broken["fusion"]["groups"][-1]["program"]
    (resize,) = [k for k, s in enumerate(program["stages"]) if s["window"]
                 and s["window"][0] == "resize"]
    r = program["tensors"][program["stages"][resize]["inputs"][0]]["buffer"]
    for f in program["firings"]:  # the Resize's input buffer drops every row early
        if program["stages"][f[0]]["output"] == program["stages"][resize]["inputs"][0]:
            f[5] = f[1]
    assert r is not None
    assert "rows" in {v.kind for v in find_violations(broken)}, find_violations(broken)


def _deep_residual(tmp: Path, blocks: int, shape: list[int]):
    """A stem Conv and ``blocks`` residual blocks (Conv, Relu, Conv, Add, Relu): two
    segments each (the Add, the Relu), every cut tensor of the input's shape."""
    c = shape[1]
    nodes = [node("Conv", ["x", "ws", "bs"], ["t0"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    inits = {"ws": rand(c, c, 3, 3, seed=1) / 4, "bs": rand(c, seed=2)}
    for k in range(blocks):
        x, y = f"t{k}", f"t{k + 1}"
        nodes += [node("Conv", [x, f"w{k}a", f"b{k}a"], [f"c{k}a"], kernel_shape=[3, 3],
                       pads=[1, 1, 1, 1]),
                  node("Relu", [f"c{k}a"], [f"r{k}"]),
                  node("Conv", [f"r{k}", f"w{k}b", f"b{k}b"], [f"c{k}b"], kernel_shape=[3, 3],
                       pads=[1, 1, 1, 1]),
                  node("Add", [f"c{k}b", x], [f"s{k}"]),
                  node("Relu", [f"s{k}"], [y])]
        inits.update({f"w{k}a": rand(c, c, 3, 3, seed=3 * k) / 4, f"b{k}a": rand(c, seed=k),
                      f"w{k}b": rand(c, c, 3, 3, seed=3 * k + 1) / 4,
                      f"b{k}b": rand(c, seed=k + 50)})
    for k, n in enumerate(nodes):
        n.name = f"n{k}"
    return _graph(onnx_model(nodes, {"x": shape}, [f"t{blocks}"], inits), tmp)


def test_a_deep_residual_trunk_streams_as_one_group(tmp_path: Path) -> None:
    """Nine residual blocks (19 segments) whose every cut tensor is T bytes: only one dag
    group over the whole trunk, streaming the input, keeps the peak below 2T (two groups
    hold some cut tensor whole as X while their Y is whole too); its plan passes the
    checker and its firings replay to the reference's output."""
    shape = [1, 2, 128, 4]
    graph = _deep_residual(tmp_path, 9, shape)
    whole = 2 * 128 * 4 * 4  # T: every cut tensor, float32
    plan = plan_graph(graph, PlanParams(timings=False), fusion="dag", input_mode="stream")
    (group,) = plan["fusion"]["groups"]
    assert list(group["nodes"]) == [n.name for n in graph.nodes]
    assert plan["lower_bound_bytes"] < 2 * whole
    assert check_plan(plan) is None, check_plan(plan)
    x = rand(*shape, seed=5)
    y = graph.outputs[0]
    np.testing.assert_array_equal(_replay(graph, plan, x)[y], run_reference(graph, {"x": x})[y])
