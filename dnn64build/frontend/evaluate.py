"""ONNX node -> canonical IR attributes, and evaluation of nodes whose inputs are known.

Shared by shape resolution and constant folding (frontend/shapes.py evaluates every node
whose inputs are known) and by graph building (which records the canonical attributes).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator

from dnn64build.frontend.normalize import NORMALISERS, NodeInfo
from dnn64build.ir.kernels import KERNELS
from dnn64build.ir.params import PARAM_INPUTS, absorb

# Never evaluated at import: their value is not a function of their inputs.
_NONDETERMINISTIC = frozenset({"RandomNormal", "RandomNormalLike", "RandomUniform",
                               "RandomUniformLike", "Bernoulli", "Multinomial"})
_SUBGRAPH = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)


def onnx_attrs(node: onnx.NodeProto) -> dict:
    """The node's attributes as Python values (strings decoded)."""
    result = {}
    for attr in node.attribute:
        value = onnx.helper.get_attribute_value(attr)
        if isinstance(value, bytes):
            value = value.decode()
        elif isinstance(value, list) and value and isinstance(value[0], bytes):
            value = [v.decode() for v in value]
        result[attr.name] = value
    return result


def constant_value(node: onnx.NodeProto) -> np.ndarray:
    """The tensor a Constant node produces."""
    attrs = onnx_attrs(node)
    if "value" in attrs:
        return numpy_helper.to_array(attrs["value"])
    if "value_float" in attrs:
        return np.array(attrs["value_float"], dtype=np.float32)
    if "value_floats" in attrs:
        return np.array(attrs["value_floats"], dtype=np.float32)
    if "value_int" in attrs:
        return np.array(attrs["value_int"], dtype=np.int64)
    if "value_ints" in attrs:
        return np.array(attrs["value_ints"], dtype=np.int64)
    raise ValueError(f"Constant with attribute(s) {sorted(attrs)} is not supported")


def canonical_attrs(node: onnx.NodeProto, in_shapes: list[list[int] | None],
                    out_shapes: list[list[int] | None], opset: int,
                    params: dict[str, np.ndarray] | None) -> dict:
    """Canonical attributes; ``params`` holds the known parameter inputs (None: not all
    of them are known, so leave them as inputs)."""
    info = NodeInfo(onnx_attrs(node), in_shapes, out_shapes, opset)
    attrs = NORMALISERS[node.op_type](info)
    op = "Resize" if node.op_type == "Upsample" else node.op_type
    if op in PARAM_INPUTS and params is not None:
        attrs = absorb(op, attrs, params, in_shapes[0], out_shapes[0])
    return attrs


def param_names(node: onnx.NodeProto) -> dict[str, str]:
    """Parameter-input key -> tensor name for the node's present parameter inputs."""
    keys = ("scales",) if node.op_type == "Upsample" else PARAM_INPUTS.get(node.op_type, ())
    return {key: name for key, name in zip(keys, node.input[1:], strict=False) if name}


def try_evaluate(node: onnx.NodeProto, known: dict[str, np.ndarray],
                 shapes: dict[str, list[int] | None], opset: int) -> list[np.ndarray] | None:
    """The values of ``node``'s outputs if its inputs are all known (a Shape node's: if
    its input's shape is static), else None.

    Any deterministic operator of the default domain is evaluated, by the project's
    reference kernel when there is one, else by onnx.reference; evaluation is
    opportunistic (a node that fails here is translated, and its problem reported, later).
    """
    if (node.domain not in ("", "ai.onnx") or node.op_type in _NONDETERMINISTIC
            or any(attr.type in _SUBGRAPH for attr in node.attribute)):
        return None
    if node.op_type == "Constant":
        try:
            return [constant_value(node)]
        except ValueError:
            return None
    if node.op_type == "Shape":
        in_shape = shapes.get(node.input[0])
        if in_shape is None or None in in_shape:
            return None
        arrays = {node.input[0]: np.broadcast_to(np.uint8(0), in_shape)}  # only the shape
    else:
        if any(name and name not in known for name in node.input):
            return None
        arrays = {name: known[name] for name in node.input if name}
    needed = max(k for k, name in enumerate(node.output) if name) + 1 if any(node.output) else 0
    for evaluate in (_by_project_kernel, _by_onnx_reference):
        values = evaluate(node, arrays, opset)
        # Not a sequence, and every named output computed (positions match node.output).
        if values is not None and len(values) >= needed and all(
                isinstance(v, np.ndarray | np.generic) for v in values[:needed]):
            return [np.asarray(v) for v in values[:needed]]
    return None


def _by_project_kernel(node: onnx.NodeProto, arrays: dict[str, np.ndarray],
                       opset: int) -> list[np.ndarray] | None:
    if node.op_type not in KERNELS or node.op_type not in NORMALISERS:
        return None
    data = node.input[:1] if node.op_type in PARAM_INPUTS else node.input
    data_arrays = [arrays[name] for name in data if name]
    params = {key: arrays[name] for key, name in param_names(node).items()}
    try:
        attrs = canonical_attrs(node, [list(a.shape) for a in data_arrays], [None], opset,
                                params)
        return list(KERNELS[node.op_type](data_arrays, attrs, [None]))
    except Exception:  # noqa: BLE001 - any failure falls back to onnx.reference
        return None


def _by_onnx_reference(node: onnx.NodeProto, arrays: dict[str, np.ndarray],
                       opset: int) -> list[np.ndarray] | None:
    try:
        evaluator = ReferenceEvaluator(node, opsets={"": opset})
        return list(evaluator.run(None, arrays))
    except Exception:  # noqa: BLE001 - onnx.reference raises many unrelated types
        return None
