"""Reference executor: runs a Graph node by node with the numpy kernels (fp32).

The oracle for codegen tests and for checking that passes preserve outputs. It is
independent of onnxruntime: every kernel follows the ONNX operator spec directly.
"""

from __future__ import annotations

import numpy as np

from dnn64build.ir.graph import Graph, Node
from dnn64build.ir.kernels import KERNELS
from dnn64build.ir.params import PARAM_INPUTS, absorb, has_pending_params


def run(graph: Graph, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Outputs of ``graph`` for ``inputs`` (name -> array of the declared shape)."""
    values = initial_values(graph, inputs)
    for node in graph.nodes:
        results = run_node(graph, node, values)
        for name, result in zip(node.outputs, results, strict=False):
            values[name] = result
    return {name: values[name] for name in graph.outputs}


def initial_values(graph: Graph, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The constants and the checked graph inputs: what an executor starts from."""
    values: dict[str, np.ndarray] = dict(graph.constants)
    for name in graph.inputs:
        if name not in inputs:
            raise ValueError(f"missing input {name!r}")
        array = np.asarray(inputs[name], dtype=graph.tensors[name].dtype)
        if list(array.shape) != graph.tensors[name].shape:
            raise ValueError(f"input {name!r}: shape {list(array.shape)}, expected "
                             f"{graph.tensors[name].shape}")
        values[name] = array
    return values


def run_node(graph: Graph, node: Node, values: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Compute one node's outputs from ``values``; checks them against the static shapes."""
    attrs, data_inputs = node.attrs, node.inputs
    if has_pending_params(node.op, node.inputs):
        params = {key: values[name] for key, name in zip(PARAM_INPUTS[node.op], node.inputs[1:],
                                                          strict=False) if name}
        attrs = absorb(node.op, attrs, params, list(values[node.inputs[0]].shape),
                       graph.tensors[node.outputs[0]].shape)
        data_inputs = node.inputs[:1]
    arrays = [values[name] if name else None for name in data_inputs]
    out_shapes = [graph.tensors[name].shape for name in node.outputs]
    results = KERNELS[node.op](arrays, attrs, out_shapes)
    for name, result in zip(node.outputs, results, strict=False):
        expected = graph.tensors[name]
        if list(result.shape) != expected.shape:
            raise AssertionError(f"node {node.name!r} ({node.op}): output {name!r} has shape "
                                 f"{list(result.shape)}, IR says {expected.shape}")
        if str(result.dtype) != expected.dtype:
            raise AssertionError(f"node {node.name!r} ({node.op}): output {name!r} has dtype "
                                 f"{result.dtype}, IR says {expected.dtype}")
    return results
