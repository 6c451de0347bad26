"""``run_int8``: the numpy executor of a quantised graph, the bit-exact oracle for codegen.

int8 nodes (``"int8" in attrs``) and the conversion nodes run the integer definitions of
``dnn64build.quant.int8_ops``; fp32 nodes run the fp32 reference executor's kernels.
"""

from __future__ import annotations

import numpy as np

from dnn64build.ir.graph import Graph, Node
from dnn64build.ir.reference import initial_values, run_node
from dnn64build.quant.int8_ops import INT8_OPS
from dnn64build.quant.qparams import QParams, quantize_values


def run_int8(graph: Graph, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Outputs of the quantised ``graph`` for ``inputs`` (name -> array of the input shape)."""
    values = initial_values(graph, inputs)
    for node in graph.nodes:
        if "int8" in node.attrs:
            out = node.outputs[0]
            result = INT8_OPS[node.op]([values[n] for n in node.inputs if n], node.attrs,
                                       graph.tensors[out].shape)
            expected = graph.tensors[out]
            if list(result.shape) != expected.shape or str(result.dtype) != expected.dtype:
                raise AssertionError(f"node {node.name!r} ({node.op}): output {out!r} is "
                                     f"{result.dtype}{list(result.shape)}, IR says "
                                     f"{expected.dtype}{expected.shape}")
            values[out] = result
        else:
            for name, result in zip(node.outputs, run_node(graph, node, values), strict=False):
                values[name] = result
    return {name: values[name] for name in graph.outputs}


def integer_outputs(graph: Graph) -> set[str]:
    """The graph outputs ``run_int8`` defines bit for bit: those computed from the inputs
    by int8 and conversion nodes only. An output with an fp32 node anywhere upstream
    depends on the order float sums are added in, so it matches only within a tolerance."""
    producer: dict[str, Node] = {out: node for node in graph.nodes for out in node.outputs}
    exact: dict[str, bool] = {}
    for node in graph.nodes:  # topological order: inputs are decided before their users
        ok = "int8" in node.attrs and all(
            exact.get(name, name not in producer) for name in node.inputs if name)
        for out in node.outputs:
            exact[out] = ok
    return {name for name in graph.outputs if exact.get(name, name not in producer)}


def quantize_inputs(graph: Graph, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Float inputs made what ``graph`` takes: an int8 input (``io: int8``) is quantised
    with its own scale and zero point as QuantizeLinear does; the others pass unchanged."""
    result = dict(inputs)
    for name in graph.inputs:
        tensor = graph.tensors[name]
        value = np.asarray(inputs[name])
        if tensor.dtype == "int8" and np.issubdtype(value.dtype, np.floating):
            result[name] = quantize_values(value, QParams.from_quant(tensor.quant))
    return result


def dequantize_outputs(graph: Graph, outputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The real values of int8 graph outputs: ``(q - zero_point) * scale`` in float32."""
    result = dict(outputs)
    for name in graph.outputs:
        quant = graph.tensors[name].quant
        if graph.tensors[name].dtype == "int8" and quant is not None:
            q = QParams.from_quant(quant)
            result[name] = ((outputs[name].astype(np.float32) - np.float32(q.zero_point))
                            * np.float32(q.scale))
    return result
