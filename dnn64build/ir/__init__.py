"""The graph IR shared by every compiler stage: plain data, JSON + .npz on disk.

See docs/ir.md for the format and the canonical attributes of each operator.
"""

from dnn64build.ir.graph import Graph, Node, Tensor
from dnn64build.ir.serialize import load_graph, save_graph
from dnn64build.ir.verify import IRError, verify

__all__ = ["Graph", "IRError", "Node", "Tensor", "load_graph", "save_graph", "verify"]
