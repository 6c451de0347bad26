"""int8 graphs (dnn64build.quant) run on the host bit-exactly like the integer
reference executor run_int8."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from codegen_cases import node, onnx_model, rand
from onnx import helper

from dnn64build.codegen.model import generate_model
from dnn64build.frontend import import_onnx
from dnn64build.passes import optimize
from dnn64build.planner.dagplan import PlanParams
from dnn64build.planner.graph_plan import plan_graph
from dnn64build.quant import quantize_graph, run_int8
from tools.host_run import run_on_host
from tools.zoo import NAMES, build


def _conv_block() -> onnx.ModelProto:
    inits = {"w1": rand(8, 3, 3, 3, seed=1) * 0.4, "b1": rand(8, seed=2),
             "w2": rand(8, 4, 3, 3, seed=3) * 0.2, "w3": rand(4, 4, 1, 1, seed=4),
             "wt": rand(8, 4, 2, 2, seed=5), "fc": rand(6, 128, seed=6) * 0.1,
             "s": np.array([1, 128], np.int64)}
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1],
                         group=2),
        helper.make_node("Sigmoid", ["c2"], ["s2"], name="sig"),
        helper.make_node("Add", ["s2", "r1"], ["a"], name="skip"),
        helper.make_node("Mul", ["a", "r1"], ["m"], name="mul"),
        helper.make_node("ConvTranspose", ["m", "wt"], ["ct"], name="deconv", strides=[2, 2]),
        helper.make_node("MaxPool", ["ct"], ["p"], name="pool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("AveragePool", ["p"], ["ap"], name="avg", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["ap", "w3"], ["c3"], name="conv3", strides=[2, 2]),
        helper.make_node("Concat", ["c3", "c3"], ["cat"], name="cat", axis=1),
        helper.make_node("Reshape", ["cat", "s"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc"], ["g"], name="fc", transB=1),
        helper.make_node("Softmax", ["g"], ["y"], name="softmax"),
    ]
    return onnx_model(nodes, {"x": [1, 3, 8, 8]}, ["y"], inits)


def _matmul_mix() -> onnx.ModelProto:
    nodes = [node("MatMul", ["a", "w"], ["h"]),
             helper.make_node("MatMul", ["h", "b"], ["mm"], name="mm2"),
             helper.make_node("Tanh", ["mm"], ["t"], name="tanh"),
             helper.make_node("GlobalAveragePool", ["t"], ["gp"], name="gap"),
             helper.make_node("Div", ["gp", "d"], ["y"], name="div")]
    return onnx_model(nodes, {"a": [1, 2, 3, 8], "b": [1, 2, 5, 4]}, ["y"],
                      {"w": rand(8, 5, seed=1), "d": np.array(1.7, np.float32)})


def _unary_chain() -> onnx.ModelProto:
    """The element-wise ops of issue 22 between int8 tensors (tables, Max and Min)."""
    ops = [("Gelu", {}), ("Elu", {"alpha": 0.5}), ("Softsign", {}), ("Neg", {}), ("Abs", {}),
           ("Sqrt", {}), ("Mish", {}), ("Exp", {}), ("Log", {}), ("Erf", {}), ("Selu", {})]
    nodes = [node("Conv", ["x", "w"], ["t0"], pads=[1, 1, 1, 1])]
    for k, (op, attrs) in enumerate(ops):
        nodes.append(helper.make_node(op, [f"t{k}"], [f"t{k + 1}"], name=op, **attrs))
    nodes += [helper.make_node("Pow", [f"t{len(ops)}", "e"], ["p"], name="pow"),
              helper.make_node("Max", ["p", "c"], ["mx"], name="max"),  # by a constant
              helper.make_node("Min", ["mx", "t0"], ["mn"], name="min"),  # of two activations
              helper.make_node("PRelu", ["mn", "s"], ["y"], name="prelu")]  # one slope: a table
    return onnx_model(nodes, {"x": [1, 2, 6, 6]}, ["y"],
                      {"w": rand(4, 2, 3, 3, seed=1), "e": np.array(2.0, np.float32),
                       "c": rand(4, 1, 1, seed=2), "s": np.array([0.2], np.float32)},
                      opset=20)



def _windows_batch2() -> onnx.ModelProto:
    """Issue 22's window shapes at batch 2: a grouped dilated 1-D Conv (imported as 2-D
    with H = 1), a 1-D MaxPool, then a dilated depthwise and a grouped 2-D Conv."""
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1d", group=2, dilations=[2],
                         pads=[2, 2]),
        helper.make_node("MaxPool", ["c1"], ["p1"], name="pool1d", kernel_shape=[2],
                         strides=[2]),
        helper.make_node("Reshape", ["p1", "s"], ["r"], name="to_2d"),
        helper.make_node("Conv", ["r", "w2"], ["c2"], name="dw", group=8, dilations=[2, 2],
                         pads=[2, 2, 2, 2]),
        helper.make_node("Conv", ["c2", "w3"], ["y"], name="grouped", group=4, pads=[1, 1, 1, 1]),
    ]
    return onnx_model(nodes, {"x": [2, 4, 32]}, ["y"],
                      {"w1": rand(8, 2, 3, seed=1) * 0.4, "w2": rand(8, 1, 3, 3, seed=2),
                       "w3": rand(8, 2, 3, 3, seed=3) * 0.3,
                       "s": np.array([2, 8, 4, 4], np.int64)})


def _reductions() -> onnx.ModelProto:
    """A Conv's ReduceMax over its last three channels (a Split) plus its ReduceSum over H
    and W (opset 13: ReduceSum's axes an input, ReduceMax's an attribute), the broadcast
    sum tiled twice along H."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Split", ["c", "parts"], ["c0", "c3"], name="split", axis=1),
             helper.make_node("ReduceMax", ["c3"], ["m"], name="max", axes=[1]),
             helper.make_node("ReduceSum", ["c", "a"], ["s"], name="sum"),
             helper.make_node("Add", ["m", "s"], ["t"], name="add"),
             helper.make_node("Tile", ["t", "reps"], ["y"], name="tile")]
    return onnx_model(nodes, {"x": [2, 3, 6, 6]}, ["y"],
                      {"w": rand(4, 3, 3, 3, seed=1) * 0.4, "a": np.array([2, 3], np.int64),
                       "parts": np.array([1, 3], np.int64),
                       "reps": np.array([1, 1, 2, 1], np.int64)},
                      opset=13)


MODELS = {"conv block": _conv_block, "matmul mix": _matmul_mix, "unary chain": _unary_chain,
          "windows batch 2": _windows_batch2, "reductions": _reductions,
          **{name: (lambda name=name: build(name)) for name in NAMES}}
SLOW = {"resnet18", "resnet50", "mobilenetv2", "squeezenet"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n
                                  for n in MODELS])
def test_int8_is_bit_exact(name: str, tmp_path: Path, runtime_cache: Path) -> None:
    path = tmp_path / "model.onnx"
    onnx.save(MODELS[name](), path)
    graph = optimize(import_onnx(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # synthetic calibration warns, as it should
        quantized, report = quantize_graph(graph, None, synthetic=True)
    assert report["int8_nodes"] > 0
    rng = np.random.default_rng(1)
    inputs = {n: rng.standard_normal(graph.tensors[n].shape).astype(np.float32)
              for n in graph.inputs}
    # the hand-made models are tiled (small staging); zoo models use the default
    staging = None if name in NAMES else 1024
    model = generate_model(quantized, plan_graph(quantized, PlanParams(timings=False)), symbol="q",
                           staging_bytes=staging)
    result = run_on_host([(model, [inputs[n] for n in quantized.inputs])], tmp_path,
                         cache_dir=runtime_cache)
    expected = run_int8(quantized, inputs)
    for out in quantized.outputs:
        np.testing.assert_array_equal(result.outputs["q"][out], expected[out], err_msg=out)
