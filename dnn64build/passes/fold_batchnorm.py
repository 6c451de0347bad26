"""Fold inference BatchNormalization into the preceding Conv/ConvTranspose/Gemm.

BN(y) = y * s + t with s = scale / sqrt(var + eps) and t = B - mean * s, per channel.
Folded: the producer's weights are scaled by s along the output channel and its bias
becomes bias * s + t. A BN that cannot be folded becomes Mul(x, s) + Add(_, t).
"""

from __future__ import annotations

import numpy as np

from dnn64build.ir.graph import Graph, Node, Tensor


def fold_batchnorm(graph: Graph) -> Graph:
    for bn in [node for node in graph.nodes if node.op == "BatchNormalization"]:
        if not all(graph.is_constant(name) for name in bn.inputs[1:5]):
            continue
        scale, bias, mean, var = (graph.constants[name].astype(np.float64)
                                  for name in bn.inputs[1:5])
        s = scale / np.sqrt(var + bn.attrs["epsilon"])
        t = bias - mean * s
        producer = _foldable_producer(graph, bn)
        if producer is not None:
            _fold_into(graph, producer, bn, s, t)
            graph.nodes.remove(bn)
        else:
            _to_mul_add(graph, bn, s, t)
    return graph


def _foldable_producer(graph: Graph, bn: Node) -> Node | None:
    x = bn.inputs[0]
    producer = graph.producers().get(x)
    if producer is None or producer.op not in ("Conv", "ConvTranspose", "Gemm"):
        return None
    if "activation" in producer.attrs or x in graph.outputs:
        return None
    if [n.name for n in graph.consumers()[x]] != [bn.name]:
        return None
    if not all(graph.is_constant(name) for name in producer.inputs[1:] if name):
        return None
    return producer


def _fold_into(graph: Graph, producer: Node, bn: Node, s: np.ndarray, t: np.ndarray) -> None:
    w = graph.constants[producer.inputs[1]].astype(np.float64)
    has_bias = len(producer.inputs) > 2 and producer.inputs[2]
    b = graph.constants[producer.inputs[2]].astype(np.float64) if has_bias else None
    if producer.op == "Conv":
        w = w * s.reshape(-1, 1, 1, 1)
    elif producer.op == "ConvTranspose":
        g = producer.attrs["group"]
        c, mg = w.shape[:2]
        w = (w.reshape(g, c // g, mg, *w.shape[2:])
             * s.reshape(g, 1, mg, 1, 1)).reshape(w.shape)
    else:  # Gemm: output column j is scaled by s[j]
        w = w * (s.reshape(-1, 1) if producer.attrs["transB"] else s.reshape(1, -1))
        beta = producer.attrs["beta"]
        if b is not None and beta != 0.0:
            b = b * s + t / beta
        else:
            b, producer.attrs["beta"] = t, 1.0
    if producer.op != "Gemm":
        b = t if b is None else b * s + t
    dtype = graph.tensors[producer.outputs[0]].dtype
    w_name = graph.add_constant(graph.unique_name(f"{producer.name}.weight_bn"), w.astype(dtype))
    b_name = graph.add_constant(graph.unique_name(f"{producer.name}.bias_bn"), b.astype(dtype))
    producer.inputs = [producer.inputs[0], w_name, b_name]
    old = producer.outputs[0]
    producer.outputs = [bn.outputs[0]]
    del graph.tensors[old]


def _to_mul_add(graph: Graph, bn: Node, s: np.ndarray, t: np.ndarray) -> None:
    x, y = bn.inputs[0], bn.outputs[0]
    out = graph.tensors[y]
    channel_shape = [-1] + [1] * (len(out.shape) - 2)
    s_name = graph.add_constant(graph.unique_name(f"{bn.name}.scale"),
                                s.reshape(channel_shape).astype(out.dtype))
    t_name = graph.add_constant(graph.unique_name(f"{bn.name}.shift"),
                                t.reshape(channel_shape).astype(out.dtype))
    mid = graph.unique_name(f"{bn.name}.scaled")
    graph.tensors[mid] = Tensor(list(out.shape), out.dtype, "activation")
    mul = Node(graph.unique_name(f"{bn.name}.mul"), "Mul", [x, s_name], [mid], {})
    add = Node(bn.name, "Add", [mid, t_name], [y], {})
    index = graph.nodes.index(bn)
    graph.nodes[index:index + 1] = [mul, add]
