"""The graph IR: tensors with static shapes, nodes in topological order, constant data.

Invariants (checked by ``verify``): every tensor is defined exactly once (graph input,
constant, or the output of one node); nodes are listed in a valid topological order;
every tensor has a static shape and a dtype; constant data lives in ``Graph.constants``
under the tensor's name. An empty string in a node's inputs marks an omitted optional
input, as in ONNX.
"""

from __future__ import annotations

import copy
from collections.abc import Container
from dataclasses import dataclass, field

import numpy as np

# Tensor kinds; an "output" is an activation that is also a graph output.
KINDS = ("input", "activation", "constant", "output")



def free_name(base: str, taken: Container[str]) -> str:
    """``base``, or ``base_1``, ``base_2``, ...: the first not in ``taken``."""
    name, index = base, 0
    while name in taken:
        index += 1
        name = f"{base}_{index}"
    return name

@dataclass
class Tensor:
    """One tensor's type. ``quant`` is reserved for the quantize stage."""

    shape: list[int]
    dtype: str
    kind: str
    quant: dict | None = None


@dataclass
class Node:
    """One operator application; ``attrs`` are normalised (see docs/ir.md)."""

    name: str
    op: str
    inputs: list[str]
    outputs: list[str]
    attrs: dict = field(default_factory=dict)


@dataclass
class Graph:
    """A model: ``tensors`` describes every tensor, ``constants`` holds constant data."""

    name: str
    inputs: list[str]
    outputs: list[str]
    tensors: dict[str, Tensor]
    nodes: list[Node]
    constants: dict[str, np.ndarray] = field(default_factory=dict)

    def producers(self) -> dict[str, Node]:
        """Map each node output tensor to the node that writes it."""
        return {out: node for node in self.nodes for out in node.outputs if out}

    def consumers(self) -> dict[str, list[Node]]:
        """Map each tensor to the nodes reading it (in node order, a node once per tensor)."""
        result: dict[str, list[Node]] = {name: [] for name in self.tensors}
        for node in self.nodes:
            for name in dict.fromkeys(node.inputs):
                if name:
                    result.setdefault(name, []).append(node)
        return result

    def is_constant(self, name: str) -> bool:
        return name in self.constants

    def add_constant(self, name: str, value: np.ndarray) -> str:
        """Add (or replace) a constant tensor; returns its name."""
        value = np.asarray(value, order="C")  # (ascontiguousarray would make 0-d 1-d)
        self.constants[name] = value
        self.tensors[name] = Tensor(list(value.shape), str(value.dtype), "constant")
        return name

    def unique_name(self, base: str) -> str:
        """A tensor or node name not used yet, derived from ``base``."""
        return free_name(base, set(self.tensors) | {node.name for node in self.nodes})

    def replace_uses(self, old: str, new: str) -> None:
        """Make every node read ``new`` where it read ``old``."""
        for node in self.nodes:
            node.inputs = [new if name == old else name for name in node.inputs]

    def remove_unused(self) -> None:
        """Drop nodes whose outputs nobody reads, then tensors no one defines or reads."""
        live = set(self.outputs)
        kept: list[Node] = []
        for node in reversed(self.nodes):
            if any(out in live for out in node.outputs):
                kept.append(node)
                live.update(name for name in node.inputs if name)
        self.nodes = kept[::-1]
        defined = set(self.inputs) | {out for node in self.nodes for out in node.outputs}
        for name in list(self.tensors):
            if name not in live and name not in defined:
                del self.tensors[name]
                self.constants.pop(name, None)

    def copy(self) -> Graph:
        """A deep copy; constant arrays are shared (passes replace them, never mutate)."""
        return Graph(
            name=self.name,
            inputs=list(self.inputs),
            outputs=list(self.outputs),
            tensors=copy.deepcopy(self.tensors),
            nodes=copy.deepcopy(self.nodes),
            constants=dict(self.constants),
        )
