"""Constant folding: evaluate nodes whose inputs are all known, absorb parameters.

A Shape node is known as soon as its input's static shape is, so the Shape/Gather/
Slice/Concat/Div/Cast/Unsqueeze chains that PyTorch exports for flatten, channel
shuffle or resize sizes collapse into constants; their consumers (Reshape, Resize,
...) then take those constants as attributes. Graph outputs are never folded away.
"""

from __future__ import annotations

import numpy as np

from dnn64build.ir.graph import Graph, Node
from dnn64build.ir.params import PARAM_INPUTS, absorb, has_pending_params
from dnn64build.ir.reference import run_node


def fold_constants(graph: Graph) -> Graph:
    kept: list[Node] = []
    for node in graph.nodes:
        if _foldable(graph, node):
            values = {name: graph.constants[name] for name in node.inputs
                      if graph.is_constant(name)}
            if node.op == "Shape":
                # Only the shape is read: a zero-size stand-in avoids needing the data.
                values[node.inputs[0]] = np.broadcast_to(
                    np.float32(0), graph.tensors[node.inputs[0]].shape)
            (value,) = run_node(graph, node, values)
            del graph.tensors[node.outputs[0]]
            graph.add_constant(node.outputs[0], np.array(value))
            continue
        if has_pending_params(node.op, node.inputs):
            _absorb_if_constant(graph, node)
        kept.append(node)
    graph.nodes = kept
    return graph


def _foldable(graph: Graph, node: Node) -> bool:
    if len(node.outputs) != 1 or node.outputs[0] in graph.outputs:
        return False
    if node.op == "Shape":
        return True
    return all(graph.is_constant(name) for name in node.inputs if name)


def _absorb_if_constant(graph: Graph, node: Node) -> None:
    keys = PARAM_INPUTS[node.op]
    present = {key: name for key, name in zip(keys, node.inputs[1:], strict=False) if name}
    # Reshape's target is its static output shape, whatever computes the shape input.
    if node.op != "Reshape" and not all(graph.is_constant(n) for n in present.values()):
        return
    params = {key: graph.constants[name] for key, name in present.items()
              if graph.is_constant(name)}
    node.attrs = absorb(node.op, node.attrs, params, graph.tensors[node.inputs[0]].shape,
                        graph.tensors[node.outputs[0]].shape)
    node.inputs = node.inputs[:1]
