"""Helpers for the codegen tests: one-node ONNX models, the pipeline, the oracle."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from dnn64build.codegen import GeneratedModel, generate_model
from dnn64build.frontend import import_onnx
from dnn64build.ir.graph import Graph
from dnn64build.passes import optimize
from dnn64build.planner.dagplan import PlanParams
from dnn64build.planner.graph_plan import plan_graph
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


def compile_case(case: Case, workdir: Path, symbol: str) -> tuple[Graph, dict, GeneratedModel]:
    path = workdir / f"{symbol}.onnx"
    onnx.save(case.model, path)
    graph = optimize(import_onnx(path), case.disabled)
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
