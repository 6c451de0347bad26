"""IR invariant checker, run between passes in tests and after import/optimise."""

from __future__ import annotations

import json

import numpy as np

from dnn64build.ir.graph import KINDS, Graph


class IRError(Exception):
    """An IR invariant does not hold: a bug in the stage that produced the graph."""


def verify(graph: Graph) -> None:
    """Raise IRError naming the first violated invariant (see ``dnn64build.ir.graph``)."""
    _check_tensor_table(graph)
    defined: set[str] = set(graph.inputs) | set(graph.constants)
    node_names: set[str] = set()
    for node in graph.nodes:
        where = f"node {node.name!r} ({node.op})"
        if not node.name or node.name in node_names:
            raise IRError(f"{where}: node name empty or used twice")
        node_names.add(node.name)
        try:
            json.dumps(node.attrs, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise IRError(f"{where}: attrs are not plain JSON data: {exc}") from exc
        if not isinstance(node.attrs, dict):
            raise IRError(f"{where}: attrs must be a dict")
        for name in node.inputs:
            if name and name not in defined:
                raise IRError(f"{where}: input {name!r} is not defined before its use")
        for name in node.outputs:
            if not name:
                raise IRError(f"{where}: empty output name")
            if name in defined:
                raise IRError(f"{where}: tensor {name!r} is defined twice")
            kind = graph.tensors[name].kind if name in graph.tensors else None
            if kind not in ("activation", "output"):
                raise IRError(f"{where}: output {name!r} must be an activation, is {kind}")
            defined.add(name)
    for name in graph.outputs:
        if name not in defined or graph.tensors[name].kind != "output":
            raise IRError(f"graph output {name!r} is not a node output of kind 'output'")
    undefined = set(graph.tensors) - defined
    if undefined:
        raise IRError(f"tensors described but never defined: {sorted(undefined)[:5]}")


def _check_tensor_table(graph: Graph) -> None:
    for name, tensor in graph.tensors.items():
        if tensor.kind not in KINDS:
            raise IRError(f"tensor {name!r}: unknown kind {tensor.kind!r}")
        if not isinstance(tensor.shape, list) or not all(
            isinstance(d, int) and d >= 0 for d in tensor.shape
        ):
            raise IRError(f"tensor {name!r}: shape {tensor.shape!r} is not static")
        try:
            np.dtype(tensor.dtype)
        except TypeError as exc:
            raise IRError(f"tensor {name!r}: bad dtype {tensor.dtype!r}") from exc
        if (tensor.kind == "constant") != (name in graph.constants):
            raise IRError(f"tensor {name!r}: kind {tensor.kind} disagrees with constant data")
        if name in graph.constants:
            data = graph.constants[name]
            if list(data.shape) != tensor.shape or str(data.dtype) != tensor.dtype:
                raise IRError(f"constant {name!r}: data {data.dtype}{list(data.shape)} does not"
                              f" match {tensor.dtype}{tensor.shape}")
    for name in graph.inputs:
        if name not in graph.tensors or graph.tensors[name].kind != "input":
            raise IRError(f"graph input {name!r} must be described with kind 'input'")
    for name in set(graph.constants) - set(graph.tensors):
        raise IRError(f"constant {name!r} has data but no tensor entry")
