"""ONNX node -> canonical IR attributes, and evaluation of nodes whose inputs are known.

Shared by shape resolution (which evaluates shape sub-graphs on the ONNX model) and
by graph building (which records the canonical attributes).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper

from dnn64build.frontend.normalize import NORMALISERS, NodeInfo, Unsupported
from dnn64build.ir.kernels import KERNELS
from dnn64build.ir.params import PARAM_INPUTS, absorb

# Ops evaluated at import time when their inputs are known, to resolve shapes.
SHAPE_OPS = frozenset({"Shape", "Gather", "Slice", "Concat", "Reshape", "Div", "Mul", "Add",
                       "Sub", "Cast", "Unsqueeze", "Squeeze", "Floor", "Ceil", "Identity"})
_MAX_EVAL_ELEMENTS = 4096


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
                 shapes: dict[str, list[int] | None], opset: int) -> np.ndarray | None:
    """The value of a small shape-computing node's output, if its inputs are known."""
    if node.op_type not in SHAPE_OPS or len(node.output) != 1:
        return None
    inputs = list(node.input)
    if node.op_type in PARAM_INPUTS:
        data, params = inputs[:1], param_names(node)
    else:
        data, params = inputs, {}
    needed = [n for n in data if n] if node.op_type != "Shape" else []
    if any(name not in known for name in [*needed, *params.values()]):
        return None
    if node.op_type == "Shape":
        in_shape = shapes.get(inputs[0])
        if in_shape is None or None in in_shape:
            return None
        arrays = [np.broadcast_to(np.uint8(0), in_shape)]  # only the shape is read
    else:
        arrays = [known[name] for name in data if name]
        if any(a.size > _MAX_EVAL_ELEMENTS for a in arrays):
            return None
    try:
        attrs = canonical_attrs(node, [list(a.shape) for a in arrays], [None], opset,
                                {key: known[name] for key, name in params.items()})
        result = KERNELS[node.op_type](arrays, attrs, [None])[0]
    except (Unsupported, ValueError, KeyError, IndexError, TypeError):
        # Evaluation is opportunistic: translating the node later reports what is wrong.
        return None
    return np.asarray(result) if result.size <= _MAX_EVAL_ELEMENTS else None
