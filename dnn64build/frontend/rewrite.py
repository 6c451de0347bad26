"""ONNX operators the importer rewrites into supported ones before anything else looks at
the model (so folding, shapes and translation see only the rewritten nodes).

``REWRITES``: op -> (what it becomes, for docs/operators.md; the rewrite). A rewrite gets
the node, a source of fresh tensor names and the names of the tensors computed from
constants alone (initializers, Constant outputs and what only they feed), and returns the
nodes that replace it (the node itself to keep it).

- Sum (opset 6 models: ResNet-50 and ShuffleNet in the onnx backend data) is a chain of
  two-input Adds, with the same multidirectional broadcasting.
- Gemm whose B or C is computed at run time (torch's mm and addmm of two activations) is
  MatMul, Transposes for transA/transB, and a Mul and an Add for alpha and beta * C;
  Gemm with constant B and C stays one node (a weighted layer).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import onnx
from onnx import TensorProto, helper

Rewrite = Callable[[onnx.NodeProto, Iterator[str], frozenset[str]], list[onnx.NodeProto]]


def _sum(node: onnx.NodeProto, names: Iterator[str], consts: frozenset[str]
         ) -> list[onnx.NodeProto]:
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


def _gemm(node: onnx.NodeProto, names: Iterator[str], consts: frozenset[str]
          ) -> list[onnx.NodeProto]:
    a, b = node.input[0], node.input[1]
    c = node.input[2] if len(node.input) > 2 else ""
    if b in consts and (not c or c in consts):
        return [node]
    attrs = {attr.name: helper.get_attribute_value(attr) for attr in node.attribute}
    alpha, beta = float(attrs.get("alpha", 1.0)), float(attrs.get("beta", 1.0))
    base, out = node.name or node.output[0], node.output[0]
    nodes: list[onnx.NodeProto] = []

    def emit(op: str, inputs: list[str], suffix: str, last: bool = False, **kw) -> str:
        result = out if last else next(names)
        nodes.append(helper.make_node(op, inputs, [result], name=f"{base}_{suffix}", **kw))
        return result

    def times(x: str, factor: float, suffix: str, last: bool) -> str:
        if factor == 1.0:
            return x
        return emit("Mul", [x, emit("Constant", [], f"{suffix}_factor",
                                    value=helper.make_tensor(f"{base}_{suffix}_value",
                                                             TensorProto.FLOAT, [], [factor]))],
                    suffix, last)

    if attrs.get("transA", 0):
        a = emit("Transpose", [a], "transA", perm=[1, 0])
    if attrs.get("transB", 0):
        b = emit("Transpose", [b], "transB", perm=[1, 0])
    add = bool(c) and beta != 0.0
    product = emit("MatMul", [a, b], "matmul", last=not add and alpha == 1.0)
    product = times(product, alpha, "alpha", last=not add)
    if add:
        emit("Add", [product, times(c, beta, "beta", last=False)], "add", last=True)
    return nodes


REWRITES: dict[str, tuple[str, Rewrite]] = {
    "Sum": ("a chain of Add", _sum),
    "Gemm": ("MatMul, Transpose, Mul and Add when B or C is computed at run time", _gemm),
}


def constant_names(graph: onnx.GraphProto) -> frozenset[str]:
    """Tensors computed from constants alone: initializers, Constant outputs, and the
    outputs of every node (in graph order) with inputs, all of them such tensors (a random
    op has none)."""
    known = {init.name for init in graph.initializer}
    for node in graph.node:
        inputs = [name for name in node.input if name]
        if node.op_type == "Constant" or (inputs and all(name in known for name in inputs)):
            known.update(node.output)
    return frozenset(known)


def rewrite_model(model: onnx.ModelProto) -> None:
    """Replace every node of an op in REWRITES (default domain) in place."""
    g = model.graph
    if not any(node.op_type in REWRITES and node.domain in ("", "ai.onnx") for node in g.node):
        return
    taken = {name for node in g.node for name in [*node.input, *node.output]}
    taken |= {vi.name for vi in [*g.input, *g.output]} | {t.name for t in g.initializer}
    names = (name for k in range(len(taken) + 1_000_000)
             if (name := f"dnn64_rewrite_{k}") not in taken)
    consts = constant_names(g)
    nodes = []
    for node in g.node:
        if node.op_type in REWRITES and node.domain in ("", "ai.onnx"):
            nodes += REWRITES[node.op_type][1](node, names, consts)
        else:
            nodes.append(node)
    del g.node[:]
    g.node.extend(nodes)
