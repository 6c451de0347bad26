"""float64 models run in float32: the importer converts every float64 tensor of the ONNX
model (graph inputs and outputs, initializers, Constant values, casts to float64) to
float32, with a note. The host and the N64 compute in float32; ``dnn64build run``
converts a float64 input to float32 at the graph boundary (array_files.fitting)
and returns float32 outputs.
(int64 graph inputs are not converted to float: those that only index run as int32,
frontend/indices.py; code generation refuses the others, naming the node.)
"""

from __future__ import annotations

import warnings

import onnx
from onnx import TensorProto, numpy_helper

_DOUBLE, _FLOAT = TensorProto.DOUBLE, TensorProto.FLOAT


def float64_as_float32(model: onnx.ModelProto, where: str) -> None:
    """Convert ``model``'s float64 tensors to float32 in place; warn naming its float64
    graph inputs and outputs when there are any float64 tensors."""
    g = model.graph
    boundary = [vi for vi in [*g.input, *g.output] if vi.type.tensor_type.elem_type == _DOUBLE]
    changed = bool(boundary)
    for vi in [*g.input, *g.output, *g.value_info]:
        if vi.type.tensor_type.elem_type == _DOUBLE:
            vi.type.tensor_type.elem_type = _FLOAT
    for tensor in g.initializer:
        changed |= _to_float32(tensor)
    for node in g.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.TENSOR:
                changed |= _to_float32(attr.t)
            elif node.op_type == "Cast" and attr.name == "to" and attr.i == _DOUBLE:
                attr.i = _FLOAT
                changed = True
    if changed:
        names = ", ".join(repr(vi.name) for vi in boundary) or "none"
        warnings.warn(f"{where}: the model computes in float64 (float64 graph inputs and "
                      f"outputs: {names}); it runs in float32: float64 inputs are converted "
                      "to float32 and its outputs are float32", stacklevel=3)


def _to_float32(tensor: onnx.TensorProto) -> bool:
    if tensor.data_type != _DOUBLE:
        return False
    converted = numpy_helper.from_array(numpy_helper.to_array(tensor).astype("float32"),
                                        tensor.name)
    tensor.CopyFrom(converted)
    return True

