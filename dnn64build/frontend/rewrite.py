"""ONNX operators the importer rewrites into supported ones before anything else looks at
the model (so folding, shapes and translation see only the rewritten nodes).

``REWRITES``: op -> (what it becomes, for docs/operators.md; the rewrite). Sum (opset 6
models: ResNet-50 and ShuffleNet in the onnx backend data) is a chain of two-input Adds,
with the same multidirectional broadcasting.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import onnx
from onnx import helper

Rewrite = Callable[[onnx.NodeProto, Iterator[str]], list[onnx.NodeProto]]


def _sum(node: onnx.NodeProto, names: Iterator[str]) -> list[onnx.NodeProto]:
    inputs, out = list(node.input), node.output[0]
    base = node.name or out
    if len(inputs) == 1:
        return [helper.make_node("Identity", inputs, [out], name=base)]
    nodes, acc = [], inputs[0]
    for k, term in enumerate(inputs[1:], start=1):
        result = out if k == len(inputs) - 1 else next(names)
        nodes.append(helper.make_node("Add", [acc, term], [result], name=f"{base}_add{k}"))
        acc = result
    return nodes


REWRITES: dict[str, tuple[str, Rewrite]] = {
    "Sum": ("a chain of Add", _sum),
}


def rewrite_model(model: onnx.ModelProto) -> None:
    """Replace every node of an op in REWRITES (default domain) in place."""
    g = model.graph
    if not any(node.op_type in REWRITES and node.domain in ("", "ai.onnx") for node in g.node):
        return
    taken = {name for node in g.node for name in [*node.input, *node.output]}
    taken |= {vi.name for vi in [*g.input, *g.output]} | {t.name for t in g.initializer}
    names = (name for k in range(len(taken) + 1_000_000)
             if (name := f"dnn64_rewrite_{k}") not in taken)
    nodes = []
    for node in g.node:
        if node.op_type in REWRITES and node.domain in ("", "ai.onnx"):
            nodes += REWRITES[node.op_type][1](node, names)
        else:
            nodes.append(node)
    del g.node[:]
    g.node.extend(nodes)
