"""Recognise activations that exporters write as several element-wise nodes.

- Swish: Mul(x, Sigmoid(x)) (SiLU; PyTorch before opset 24);
- Mish: Mul(x, Tanh(Softplus(x))) (PyTorch before opset 18);
- Gelu: 0.5 * x * (1 + Erf(x / sqrt(2))) as PyTorch writes it (Div by sqrt(2) or Mul by
  its inverse; the 0.5 applied last or to x first; before opset 20).

Each chain becomes one node (one kernel call; in int8 one lookup table instead of a table,
a requantised Mul and the rounding of every intermediate). A chain is taken only when its
inner tensors are read by nothing else and are no graph outputs. Runs before
fuse_activation, which may then fuse the result into a Conv/Gemm.
"""

from __future__ import annotations

import math

from dnn64build.ir.graph import Graph, Node

_TOLERANCE = 1e-6  # relative, on the constants of the Gelu pattern


class _Matcher:
    def __init__(self, graph: Graph):
        self.graph = graph
        self.producers = graph.producers()
        self.consumers = graph.consumers()

    def inner(self, name: str, op: str) -> Node | None:
        """The ``op`` node producing ``name``, if only one node reads ``name``."""
        node = self.producers.get(name)
        if node is None or node.op != op or name in self.graph.outputs:
            return None
        return node if len(self.consumers[name]) == 1 else None

    def scalar(self, name: str, value: float) -> bool:
        if not self.graph.is_constant(name):
            return False
        array = self.graph.constants[name]
        return array.size == 1 and math.isclose(float(array.reshape(-1)[0]), value,
                                                rel_tol=_TOLERANCE)

    def operands(self, node: Node) -> list[tuple[str, str]]:
        """A binary node's (one input, the other) pairs, both orders."""
        if len(node.inputs) != 2:
            return []
        a, b = node.inputs
        return [(a, b), (b, a)]

    def gate(self, mul: Node) -> tuple[str, list[Node], str] | None:
        """Mul(x, Sigmoid(x)) or Mul(x, Tanh(Softplus(x))): (x, inner nodes, new op)."""
        for x, s in self.operands(mul):
            sigmoid = self.inner(s, "Sigmoid")
            if sigmoid is not None and sigmoid.inputs[0] == x:
                return x, [sigmoid], "Swish"
            tanh = self.inner(s, "Tanh")
            softplus = tanh and self.inner(tanh.inputs[0], "Softplus")
            if softplus is not None and softplus.inputs[0] == x:
                return x, [softplus, tanh], "Mish"
        return None

    def erf_plus_one(self, name: str) -> tuple[str, list[Node]] | None:
        """``name`` = 1 + Erf(x / sqrt(2)): (x, its nodes)."""
        add = self.inner(name, "Add")
        for e, one in self.operands(add) if add else []:
            erf = self.inner(e, "Erf")
            if erf is None or not self.scalar(one, 1.0):
                continue
            for op, constant in (("Div", math.sqrt(2)), ("Mul", math.sqrt(0.5))):
                scale = self.inner(erf.inputs[0], op)
                pairs = self.operands(scale) if scale else []
                for x, c in pairs[:1] if op == "Div" else pairs:
                    if self.scalar(c, constant):
                        return x, [scale, erf, add]
        return None

    def gelu(self, outer: Node) -> tuple[str, list[Node]] | None:
        """outer = Mul(Mul(x, 1 + erf), 0.5) or Mul(Mul(x, 0.5), 1 + erf)."""
        for t, other in self.operands(outer):
            mul = self.inner(t, "Mul")
            for x, m in self.operands(mul) if mul else []:
                if self.scalar(other, 0.5):  # Mul(Mul(x, 1 + erf), 0.5)
                    core = self.erf_plus_one(m)
                elif self.scalar(m, 0.5):  # Mul(Mul(x, 0.5), 1 + erf)
                    core = self.erf_plus_one(other)
                else:
                    continue
                if core is not None and core[0] == x:
                    return x, [mul, *core[1]]
        return None


def unary_patterns(graph: Graph) -> Graph:
    removed: set[str] = set()
    for index, node in enumerate(graph.nodes):
        if node.op != "Mul" or node.name in removed:
            continue
        match = _Matcher(graph)
        found = match.gate(node)
        if found is not None:
            x, inner, op = found
            attrs = {"alpha": 1.0} if op == "Swish" else {}
        else:
            gelu = match.gelu(node)
            if gelu is None:
                continue
            (x, inner), op, attrs = gelu, "Gelu", {"approximate": "none"}
        for dead in inner:
            removed.add(dead.name)
            del graph.tensors[dead.outputs[0]]
        graph.nodes[index] = Node(node.name, op, [x], list(node.outputs), attrs)
    graph.nodes = [node for node in graph.nodes if node.name not in removed]
    return graph
