"""Fuse an activation into the Conv/ConvTranspose/Gemm that feeds it.

The producer gets attrs "activation" (relu, relu6, clip, or the activation of any one-input
op in dnn64build.ir.ops.ACTIVATION_OF_OP: leaky_relu, sigmoid, silu, elu, gelu, ...) and
"activation_params" (the op's attributes); the activation node goes.
SiLU is recognised as Mul(x, Sigmoid(x)), HardSwish as Mul(x, HardSigmoid(x)) with
alpha 1/6 and beta 0.5 (how PyTorch exports it before opset 14). Only a producer output
read by nothing but the activation (and not a graph output) is fused.
"""

from __future__ import annotations

from dnn64build.ir.graph import Graph, Node
from dnn64build.ir.ops import ACTIVATION_OF_OP

FUSE_INTO = ("Conv", "ConvTranspose", "Gemm")


def _clip_activation(attrs: dict) -> tuple[str, dict]:
    low, high = attrs.get("min"), attrs.get("max")
    if low == 0.0 and high is None:
        return "relu", {}
    if low == 0.0 and high == 6.0:
        return "relu6", {}
    return "clip", {"min": low, "max": high}


def _activation_of(node: Node) -> tuple[str, dict] | None:
    if len(node.inputs) != 1:
        return None  # e.g. a Clip whose min/max are not constant
    if node.op == "Clip":
        return _clip_activation(node.attrs)
    if node.op == "Swish" and node.attrs["alpha"] == 1.0:
        return "silu", {}
    if node.op in ACTIVATION_OF_OP:
        return ACTIVATION_OF_OP[node.op], dict(node.attrs)
    return None


def fuse_activation(graph: Graph) -> Graph:
    removed: set[str] = set()
    for node in graph.nodes:
        if node.name in removed:
            continue
        fused = _fuse_gated(graph, node) or _fuse_simple(graph, node)
        removed.update(fused)
    graph.nodes = [node for node in graph.nodes if node.name not in removed]
    return graph


def _fusable_producer(graph: Graph, x: str, readers: set[str]) -> Node | None:
    producer = graph.producers().get(x)
    if producer is None or producer.op not in FUSE_INTO or "activation" in producer.attrs:
        return None
    if x in graph.outputs or {n.name for n in graph.consumers()[x]} != readers:
        return None
    return producer


def _attach(graph: Graph, producer: Node, name: str, params: dict, new_out: str) -> None:
    producer.attrs["activation"] = name
    producer.attrs["activation_params"] = params
    old = producer.outputs[0]
    producer.outputs = [new_out]
    del graph.tensors[old]


def _fuse_simple(graph: Graph, node: Node) -> list[str]:
    activation = _activation_of(node)
    if activation is None:
        return []
    producer = _fusable_producer(graph, node.inputs[0], {node.name})
    if producer is None:
        return []
    _attach(graph, producer, *activation, node.outputs[0])
    return [node.name]


def _gate_activation(gate: Node) -> str | None:
    """The activation x * gate(x) amounts to, if any."""
    if gate.op == "Sigmoid":
        return "silu"
    if (gate.op == "HardSigmoid" and abs(gate.attrs["alpha"] - 1 / 6) < 1e-6
            and gate.attrs["beta"] == 0.5):
        return "hard_swish"
    return None


def _fuse_gated(graph: Graph, mul: Node) -> list[str]:
    """Mul(x, gate(x)) -> the activation of x's producer."""
    if mul.op != "Mul" or len(set(mul.inputs)) != 2:
        return []
    producers = graph.producers()
    for x, s in (mul.inputs, mul.inputs[::-1]):
        gate = producers.get(s)
        if gate is None or gate.inputs[0] != x or _gate_activation(gate) is None:
            continue
        if s in graph.outputs or [n.name for n in graph.consumers()[s]] != [mul.name]:
            continue
        producer = _fusable_producer(graph, x, {gate.name, mul.name})
        if producer is None:
            continue
        _attach(graph, producer, _gate_activation(gate), {}, mul.outputs[0])
        del graph.tensors[s]
        return [gate.name, mul.name]
    return []
