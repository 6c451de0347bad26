"""Each pass on its own: the structural change it promises, outputs preserved (checked
against onnxruntime and against the reference executor on the graph before the pass),
and the IR invariants after it."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnn64build.frontend import import_onnx
from dnn64build.ir import Graph, reference, verify
from dnn64build.passes import PASSES
from tools.zoo.compare import random_inputs, run_onnxruntime, scaled_error

RNG = np.random.default_rng(99)


def w(*shape: int) -> np.ndarray:
    return (RNG.standard_normal(shape) * 0.5).astype(np.float32)


def positive(*shape: int) -> np.ndarray:
    return (RNG.uniform(0.5, 1.5, shape)).astype(np.float32)


def model_of(nodes, inputs: dict[str, list[int]], outputs: dict[str, int],
             inits: dict[str, np.ndarray], opset: int = 17, ir_version: int = 10
             ) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "t",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [f"d{i}" for i in range(rank)])
         for n, rank in outputs.items()],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=ir_version)


def run_pass(name: str, model: onnx.ModelProto, tmp_path) -> tuple[Graph, Graph]:
    """(graph before, graph after) the one pass; checks outputs are preserved."""
    onnx.save(model, tmp_path / "m.onnx")
    before = import_onnx(tmp_path / "m.onnx")
    after = PASSES[name](before.copy())
    after.remove_unused()
    verify(after)
    inputs = random_inputs(before, seed=3)
    expected = run_onnxruntime(model, inputs)
    old, new = reference.run(before, inputs), reference.run(after, inputs)
    for out in before.outputs:
        assert scaled_error(expected[out], old[out]) <= 1e-4
        assert scaled_error(expected[out], new[out]) <= 1e-4
    return before, after


def ops(graph: Graph) -> list[str]:
    return [node.op for node in graph.nodes]


# --- remove_identity ---

def test_identity_and_dropout_are_removed(tmp_path) -> None:
    nodes = [helper.make_node("Identity", ["x"], ["a"]),
             helper.make_node("Relu", ["a"], ["b"]),
             helper.make_node("Dropout", ["b"], ["y"])]
    _, after = run_pass("remove_identity", model_of(nodes, {"x": [2, 3]}, {"y": 2}, {}),
                        tmp_path)
    assert ops(after) == ["Relu"] and after.nodes[0].inputs == ["x"]
    assert after.nodes[0].outputs == ["y"] and after.outputs == ["y"]


def test_identity_from_input_to_output_stays(tmp_path) -> None:
    nodes = [helper.make_node("Dropout", ["x"], ["y"])]
    _, after = run_pass("remove_identity", model_of(nodes, {"x": [2, 3]}, {"y": 2}, {}),
                        tmp_path)
    assert ops(after) == ["Identity"]


# --- fold_batchnorm ---

def bn_inits(c: int) -> dict[str, np.ndarray]:
    return {"s": positive(c), "b": w(c), "m": w(c), "v": positive(c)}


BN = ["s", "b", "m", "v"]


@pytest.mark.parametrize(("producer", "x_shape", "inits", "c"), [
    (helper.make_node("Conv", ["x", "W"], ["t"], pads=[1, 1, 1, 1]), [1, 3, 5, 5],
     {"W": w(4, 3, 3, 3)}, 4),
    (helper.make_node("Conv", ["x", "W", "B"], ["t"], group=2), [1, 4, 5, 5],
     {"W": w(6, 2, 3, 3), "B": w(6)}, 6),
    (helper.make_node("ConvTranspose", ["x", "W", "B"], ["t"], group=2, strides=[2, 2]),
     [1, 4, 3, 3], {"W": w(4, 3, 2, 2), "B": w(6)}, 6),
    (helper.make_node("Gemm", ["x", "W", "B"], ["t"], transB=1, beta=0.5), [2, 5],
     {"W": w(3, 5), "B": w(3)}, 3),
    (helper.make_node("Gemm", ["x", "W"], ["t"]), [2, 5], {"W": w(5, 3)}, 3),
], ids=["conv", "conv_group_bias", "conv_transpose_group", "gemm_transB_beta", "gemm_noC"])
def test_batchnorm_folds_into_producer(producer, x_shape, inits, c, tmp_path) -> None:
    nodes = [producer, helper.make_node("BatchNormalization", ["t", *BN], ["y"], epsilon=1e-3)]
    m = model_of(nodes, {"x": x_shape}, {"y": len(x_shape)}, {**inits, **bn_inits(c)})
    _, after = run_pass("fold_batchnorm", m, tmp_path)
    assert ops(after) == [producer.op_type] and after.nodes[0].outputs == ["y"]
    assert len(after.nodes[0].inputs) == 3  # a bias appeared


def test_standalone_batchnorm_becomes_mul_add(tmp_path) -> None:
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("BatchNormalization", ["r", *BN], ["y"])]
    m = model_of(nodes, {"x": [1, 3, 4, 4]}, {"y": 4}, bn_inits(3))
    _, after = run_pass("fold_batchnorm", m, tmp_path)
    assert ops(after) == ["Relu", "Mul", "Add"]
    assert after.tensors[after.nodes[1].inputs[1]].shape == [3, 1, 1]


def test_batchnorm_after_shared_conv_output_is_not_folded(tmp_path) -> None:
    nodes = [helper.make_node("Conv", ["x", "W"], ["t"]),
             helper.make_node("BatchNormalization", ["t", *BN], ["u"]),
             helper.make_node("Add", ["t", "u"], ["y"])]
    m = model_of(nodes, {"x": [1, 2, 3, 3]}, {"y": 4}, {"W": w(2, 2, 1, 1), **bn_inits(2)})
    _, after = run_pass("fold_batchnorm", m, tmp_path)
    assert ops(after) == ["Conv", "Mul", "Add", "Add"]


# --- fuse_activation ---

def clip_node(lo: str, hi: str) -> list:
    return [helper.make_node("Clip", ["t", lo, hi], ["y"])]


ACTIVATIONS = [
    ("relu", [helper.make_node("Relu", ["t"], ["y"])], {}, {}),
    ("relu6", clip_node("zero", "six"), {}, {"zero": np.float32(0), "six": np.float32(6)}),
    ("relu", clip_node("zero", ""), {}, {"zero": np.float32(0)}),
    ("clip", clip_node("lo", "hi"), {"min": -0.5, "max": 0.5},
     {"lo": np.float32(-0.5), "hi": np.float32(0.5)}),
    ("leaky_relu", [helper.make_node("LeakyRelu", ["t"], ["y"], alpha=0.25)], {"alpha": 0.25},
     {}),
    ("hard_swish", [helper.make_node("HardSwish", ["t"], ["y"])], {}, {}),
    ("hard_sigmoid", [helper.make_node("HardSigmoid", ["t"], ["y"])],
     {"alpha": 0.2, "beta": 0.5}, {}),
    ("sigmoid", [helper.make_node("Sigmoid", ["t"], ["y"])], {}, {}),
    ("tanh", [helper.make_node("Tanh", ["t"], ["y"])], {}, {}),
    ("silu", [helper.make_node("Sigmoid", ["t"], ["s"]),
              helper.make_node("Mul", ["s", "t"], ["y"])], {}, {}),
    ("hard_swish", [helper.make_node("HardSigmoid", ["t"], ["s"], alpha=1 / 6, beta=0.5),
                    helper.make_node("Mul", ["t", "s"], ["y"])], {}, {}),
]


@pytest.mark.parametrize(("name", "act_nodes", "params", "inits"), ACTIVATIONS,
                         ids=[f"{a[0]}_{i}" for i, a in enumerate(ACTIVATIONS)])
def test_activation_fuses_into_conv(name, act_nodes, params, inits, tmp_path) -> None:
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["t"], pads=[1, 1, 1, 1]), *act_nodes]
    m = model_of(nodes, {"x": [1, 3, 5, 5]}, {"y": 4},
                 {"W": w(4, 3, 3, 3) * 4, "B": w(4), **inits})
    _, after = run_pass("fuse_activation", m, tmp_path)
    (conv,) = after.nodes
    assert conv.outputs == ["y"]
    assert conv.attrs["activation"] == name and conv.attrs["activation_params"] == params


def test_activation_fuses_into_gemm(tmp_path) -> None:
    nodes = [helper.make_node("Gemm", ["x", "W"], ["t"]), helper.make_node("Relu", ["t"], ["y"])]
    _, after = run_pass("fuse_activation", model_of(nodes, {"x": [2, 3]}, {"y": 2},
                                                    {"W": w(3, 4)}), tmp_path)
    assert ops(after) == ["Gemm"] and after.nodes[0].attrs["activation"] == "relu"


def test_shared_conv_output_is_not_fused(tmp_path) -> None:
    nodes = [helper.make_node("Conv", ["x", "W"], ["t"]), helper.make_node("Relu", ["t"], ["r"]),
             helper.make_node("Add", ["t", "r"], ["y"])]
    _, after = run_pass("fuse_activation", model_of(nodes, {"x": [1, 2, 3, 3]}, {"y": 4},
                                                    {"W": w(2, 2, 1, 1)}), tmp_path)
    assert ops(after) == ["Conv", "Relu", "Add"]


def test_silu_of_a_non_conv_is_left_alone(tmp_path) -> None:
    nodes = [helper.make_node("Sigmoid", ["x"], ["s"]), helper.make_node("Mul", ["x", "s"], ["y"])]
    _, after = run_pass("fuse_activation", model_of(nodes, {"x": [2, 3]}, {"y": 2}, {}),
                        tmp_path)
    assert ops(after) == ["Sigmoid", "Mul"]


# --- unary_patterns ---

def _gelu_nodes(half_first: bool, by_mul: bool) -> list:
    """0.5 * x * (1 + erf(x / sqrt 2)) as PyTorch exports it (two orders, Div or Mul)."""
    scale = (helper.make_node("Mul", ["isq", "x"], ["d"]) if by_mul
             else helper.make_node("Div", ["x", "sq"], ["d"]))
    nodes = [scale, helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["one", "e"], ["a"])]
    if half_first:
        return [*nodes, helper.make_node("Mul", ["x", "half"], ["h"]),
                helper.make_node("Mul", ["h", "a"], ["y"])]
    return [*nodes, helper.make_node("Mul", ["x", "a"], ["m"]),
            helper.make_node("Mul", ["m", "half"], ["y"])]


GELU_CONSTANTS = {"sq": np.float32(np.sqrt(2)), "isq": np.float32(np.sqrt(0.5)),
                  "one": np.float32(1), "half": np.float32(0.5)}
PATTERNS = [
    ("Swish", [helper.make_node("Sigmoid", ["x"], ["s"]),
               helper.make_node("Mul", ["s", "x"], ["y"])], {"alpha": 1.0}),
    ("Mish", [helper.make_node("Softplus", ["x"], ["p"]), helper.make_node("Tanh", ["p"], ["t"]),
              helper.make_node("Mul", ["x", "t"], ["y"])], {}),
    *[("Gelu", _gelu_nodes(half_first, by_mul), {"approximate": "none"})
      for half_first in (False, True) for by_mul in (False, True)],
]


@pytest.mark.parametrize(("op", "nodes", "attrs"), PATTERNS,
                         ids=[f"{p[0]}_{i}" for i, p in enumerate(PATTERNS)])
def test_unary_pattern_becomes_one_node(op, nodes, attrs, tmp_path) -> None:
    inits = {k: v for k, v in GELU_CONSTANTS.items() if any(k in n.input for n in nodes)}
    m = model_of(nodes, {"x": [2, 3, 4]}, {"y": 3}, inits)
    _, after = run_pass("unary_patterns", m, tmp_path)  # outputs checked against onnxruntime
    assert [(n.op, n.inputs, n.outputs, n.attrs) for n in after.nodes] == [
        (op, ["x"], ["y"], attrs)]


def test_unary_pattern_with_a_shared_inner_tensor_is_left_alone(tmp_path) -> None:
    nodes = [helper.make_node("Sigmoid", ["x"], ["s"]), helper.make_node("Mul", ["x", "s"], ["m"]),
             helper.make_node("Add", ["m", "s"], ["y"])]
    _, after = run_pass("unary_patterns", model_of(nodes, {"x": [2, 3]}, {"y": 2}, {}),
                        tmp_path)
    assert ops(after) == ["Sigmoid", "Mul", "Add"]
    wrong = _gelu_nodes(False, False)  # a Gelu with 0.25 in place of 0.5 is no Gelu
    _, after = run_pass("unary_patterns", model_of(
        wrong, {"x": [2, 3]}, {"y": 2}, {**GELU_CONSTANTS, "half": np.float32(0.25)}), tmp_path)
    assert "Gelu" not in ops(after)


@pytest.mark.parametrize(("op", "attrs", "name", "params"), [
    ("Elu", {"alpha": 0.5}, "elu", {"alpha": 0.5}), ("Softplus", {}, "softplus", {}),
    ("Selu", {"gamma": 2.0}, "selu", {"alpha": 1.67326319217681884765625, "gamma": 2.0})])
def test_unary_op_fuses_into_conv(op, attrs, name, params, tmp_path) -> None:
    nodes = [helper.make_node("Conv", ["x", "W"], ["t"]), helper.make_node(op, ["t"], ["y"],
                                                                           **attrs)]
    _, after = run_pass("fuse_activation", model_of(nodes, {"x": [1, 3, 4, 4]}, {"y": 4},
                                                    {"W": w(2, 3, 3, 3)}), tmp_path)
    (conv,) = after.nodes
    assert conv.attrs["activation"] == name and conv.attrs["activation_params"] == params


# --- mark_views ---

def test_views_are_marked(tmp_path) -> None:
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Flatten", ["r"], ["f"]),
             helper.make_node("Unsqueeze", ["f", "ax"], ["u"]),
             helper.make_node("Squeeze", ["u", "ax"], ["s"]),
             helper.make_node("Reshape", ["s", "shape"], ["v"]),
             helper.make_node("Transpose", ["v"], ["t1"], perm=[0, 2, 1, 3]),
             helper.make_node("Transpose", ["t1"], ["y"], perm=[0, 3, 2, 1])]
    m = model_of(nodes, {"x": [2, 3, 4]}, {"y": 4},
                 {"ax": np.array([0], np.int64), "shape": np.array([2, 1, 3, 4], np.int64)})
    _, after = run_pass("mark_views", m, tmp_path)
    marked = {node.op + str(node.attrs.get("perm", "")): node.attrs.get("view", False)
              for node in after.nodes}
    assert marked == {"Relu": False, "Flatten": True, "Unsqueeze": True, "Squeeze": True,
                      "Reshape": True, "Transpose[0, 2, 1, 3]": True,
                      "Transpose[0, 3, 2, 1]": False}


# --- flush_subnormals ---

def test_subnormal_weights_become_signed_zeros(tmp_path) -> None:
    weight = w(4, 3)
    subnormal = np.array([1e-45, -1e-45, 1e-40, -1.1e-38], dtype=np.float32)
    weight.flat[[0, 5, 7, 11]] = subnormal
    smallest_normal = np.finfo(np.float32).tiny
    weight.flat[2] = smallest_normal
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"])]
    before, after = run_pass("flush_subnormals",
                             model_of(nodes, {"x": [2, 4]}, {"y": 2}, {"w": weight}), tmp_path)
    flushed = after.constants["w"]
    assert np.all(flushed.flat[[0, 5, 7, 11]] == 0)
    assert list(np.signbit(flushed.flat[[0, 5, 7, 11]])) == [False, True, False, True]
    assert flushed.flat[2] == smallest_normal  # the smallest normal number stays
    kept = np.ones(weight.size, bool)
    kept[[0, 5, 7, 11]] = False
    assert np.array_equal(flushed.flat[kept], before.constants["w"].flat[kept])
