"""Helpers for the codegen tests: one-node ONNX models, the pipeline, the oracle."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from dnn64build.codegen.model import GeneratedModel, generate_model
from dnn64build.frontend import import_onnx
from dnn64build.ir.graph import Graph
from dnn64build.ir.verify import verify
from dnn64build.passes import PASSES, optimize
from dnn64build.planner.dagplan import PlanParams
from dnn64build.planner.dagstream import find_segments
from dnn64build.planner.fusion.records import Group
from dnn64build.planner.graph_plan import plan_graph
from dnn64build.quant import quantize_graph
from tools.zoo.compare import run_onnxruntime, scaled_error

TOLERANCE = 1e-4  # max |error| / max |expected|


def onnx_model(nodes: list[onnx.NodeProto], inputs: dict[str, list[int]],
               outputs: Sequence[str], inits: dict[str, np.ndarray] | None = None,
               opset: int = 17) -> onnx.ModelProto:
    """A model of ``nodes``; output types come from ONNX shape inference."""
    graph = helper.make_graph(
        nodes, "case",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in (inits or {}).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              ir_version=10)
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    known = {v.name: v for v in [*inferred.graph.value_info, *inferred.graph.output]}
    for out in model.graph.output:
        out.CopyFrom(known[out.name])
    return model


def node(op: str, inputs: list[str], outputs: list[str] | None = None, **attrs) -> onnx.NodeProto:
    return helper.make_node(op, inputs, outputs or ["y"], name=f"{op.lower()}_node", **attrs)


def rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@dataclass
class Case:
    """One model to compile and check; ``disabled`` names passes to skip."""

    name: str
    model: onnx.ModelProto
    staging_bytes: int | None = None
    disabled: frozenset[str] = frozenset()
    seed: int = 0
    inputs: dict[str, np.ndarray] = field(default_factory=dict)


def optimize_without(graph: Graph, disabled: frozenset[str]) -> Graph:
    """``optimize``'s passes in its order but those named, so that a case can keep a node a
    pass would rewrite (a BatchNormalization the codegen must compile itself)."""
    assert disabled <= set(PASSES), f"unknown pass names {sorted(disabled - set(PASSES))}"
    for name, run_pass in PASSES.items():
        if name not in disabled:
            graph = run_pass(graph)
            graph.remove_unused()
    verify(graph)
    return graph


def compile_case(case: Case, workdir: Path, symbol: str) -> tuple[Graph, dict, GeneratedModel]:
    path = workdir / f"{symbol}.onnx"
    onnx.save(case.model, path)
    graph = optimize_without(import_onnx(path), case.disabled)
    plan = plan_graph(graph, PlanParams(timings=False))
    return graph, plan, generate_model(graph, plan, symbol=symbol,
                                       staging_bytes=case.staging_bytes)


def case_inputs(case: Case, graph: Graph) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(case.seed)
    return {name: case.inputs.get(name, rng.standard_normal(graph.tensors[name].shape)
                                  .astype(np.float32)) for name in graph.inputs}


def errors_vs_onnxruntime(cases: Sequence[Case], workdir: Path, runtime_cache: Path,
                          **run_options) -> dict[str, float]:
    """Run every case in one host program; case name -> worst scaled error vs ORT."""
    from tools.host_run import run_on_host

    workdir.mkdir(parents=True, exist_ok=True)
    compiled, feeds = [], []
    for i, case in enumerate(cases):
        graph, _, model = compile_case(case, workdir, f"m{i}")
        inputs = case_inputs(case, graph)
        compiled.append((model, [inputs[n] for n in graph.inputs]))
        feeds.append((graph, inputs))
    result = run_on_host(compiled, workdir, cache_dir=runtime_cache, **run_options)
    errors = {}
    for case, (model, _), (graph, inputs) in zip(cases, compiled, feeds, strict=True):
        expected = run_onnxruntime(case.model, inputs)
        actual = result.outputs[model.symbol]
        errors[case.name] = max(scaled_error(expected[n], actual[n]) for n in graph.outputs)
    return errors


@st.composite
def dags(draw: st.DrawFn) -> tuple[onnx.ModelProto, list[int]]:
    """A stem conv, then 1-3 blocks: a residual block (3x3 conv, relu, conv, Add with the
    skip or with a 1x1 stride-2 downsample, relu), a concat block (two conv branches), a
    max pool or a per-channel affine (Mul, Add by constants) and relu."""
    c, h, w = draw(st.integers(1, 3)), draw(st.integers(6, 17)), draw(st.integers(3, 11))
    inits: dict[str, np.ndarray] = {}
    nodes: list[onnx.NodeProto] = []
    count = 0

    def conv(x: str, c_in: int, c_out: int, k: int, s: int) -> str:
        nonlocal count
        count += 1
        y = f"t{count}"
        inits[f"w{count}"] = rand(c_out, c_in, k, k, seed=count)
        inits[f"b{count}"] = rand(c_out, seed=100 + count)
        nodes.append(node("Conv", [x, f"w{count}", f"b{count}"], [y], kernel_shape=[k, k],
                          strides=[s, s], pads=[k // 2] * 4))
        return y

    def op(kind: str, inputs: list[str], **attrs) -> str:
        nonlocal count
        count += 1
        nodes.append(node(kind, inputs, [f"t{count}"], **attrs))
        return f"t{count}"

    x = op("Relu", [conv("x", c, 2, 3, draw(st.integers(1, 2)))])
    ch = 2
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["residual", "residual", "concat", "pool", "affine"]))
        if kind == "residual":
            stride = draw(st.integers(1, 2))
            out = draw(st.integers(1, 3)) if stride == 2 else ch
            branch = conv(op("Relu", [conv(x, ch, out, 3, stride)]), out, out, 3, 1)
            skip = x if stride == 1 else conv(x, ch, out, 1, 2)
            x, ch = op("Relu", [op("Add", [branch, skip])]), out
        elif kind == "concat":
            a, b = draw(st.integers(1, 3)), draw(st.integers(1, 3))
            x, ch = op("Concat", [conv(x, ch, a, 1, 1), conv(x, ch, b, 3, 1)], axis=1), a + b
        elif kind == "pool":
            x = op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
        else:  # a BatchNormalization as the optimizer leaves it after a non-Conv
            inits[f"s{count}"] = rand(1, ch, 1, 1, seed=200 + count)
            inits[f"h{count}"] = rand(1, ch, 1, 1, seed=300 + count)
            scale, shift = f"s{count}", f"h{count}"
            x = op("Relu", [op("Add", [op("Mul", [x, scale]), shift])])
    y = op("Relu", [conv(x, ch, 2, 3, 1)])
    for k, n in enumerate(nodes):
        n.name = f"n{k}"
    return onnx_model(nodes, {"x": [1, c, h, w]}, [y], inits), [c, h, w]


def widest_dag_groups(graph) -> list[Group]:
    """One dag group per maximal run of consecutive segments (two nodes or more)."""
    runs: list[list[int]] = []
    for a, b in find_segments(graph)[0]:
        if runs and runs[-1][1] == a:
            runs[-1][1] = b
        else:
            runs.append([a, b])
    return [Group(tuple(n.name for n in graph.nodes[a:b]), "dag") for a, b in runs if b - a > 1]


def model_graph(model: onnx.ModelProto, workdir: Path, int8: bool, io: str = "float32"
                ) -> Graph:
    """``model`` imported and optimised as the build does, quantised to int8 (synthetic
    calibration, graph inputs and outputs of type ``io``) if ``int8``."""
    onnx.save(model, workdir / "m.onnx")
    graph = optimize(import_onnx(workdir / "m.onnx"))
    if int8:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # synthetic calibration warns
            graph, _ = quantize_graph(graph, None, synthetic=True, io=io)
    return graph


def many_tiles_model() -> onnx.ModelProto:
    """A Conv of 24 output channels (1,152 + 4 weight bytes each) and a Gemm of 24 rows
    (1,536 bytes each): in staging halves of 6,000 bytes (staging_bytes 12000) the Conv
    takes 5 tiles, the Gemm 8 (codegen/tile_loop.py runs tiles 1.. as one loop)."""
    return onnx_model(
        [node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("Flatten", ["c"], ["f"], name="flatten"),
         node("Gemm", ["f", "g"], ["y"], transB=1)],
        {"x": [1, 32, 4, 4]}, ["y"],
        {"w": rand(24, 32, 3, 3, seed=1), "b": rand(24, seed=2), "g": rand(24, 384, seed=3)})
