"""Mark nodes whose output is its input reinterpreted with another shape.

Tensors are dense row-major, so Reshape, Flatten, Squeeze, Unsqueeze and Identity never
move data, nor does a Transpose that only moves size-1 dims. They get attr
"view": true and the planner aliases their output to their input (no copy).
"""

from __future__ import annotations

from dnn64build.ir.graph import Graph, Node

RESHAPES = ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity")


def is_view(graph: Graph, node: Node) -> bool:
    if len(node.inputs) != 1 or graph.is_constant(node.inputs[0]):
        return False
    if node.op in RESHAPES:
        return True
    if node.op == "Transpose":
        shape = graph.tensors[node.inputs[0]].shape
        moved = [axis for axis in node.attrs["perm"] if shape[axis] != 1]
        return moved == sorted(moved)
    return False


def mark_views(graph: Graph) -> Graph:
    for node in graph.nodes:
        if is_view(graph, node):
            node.attrs["view"] = True
    return graph
