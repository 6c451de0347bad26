"""int64 graph inputs that only index (Gather's indices: an embedding's token ids) run as
int32: the importer declares them int32, ``dnn64build run`` converts their data at the
graph boundary (array_files.fitting refuses, naming the input, a value outside int32's
range) and the kernels read int32 indices. Any other int64 input keeps its type (its
arithmetic would change meaning; code generation refuses it, naming the node).
"""

from __future__ import annotations

import onnx
from onnx import TensorProto

# op -> the input positions that only index (the data read there is never computed on)
INDEX_INPUTS = {"Gather": (1,)}


def index_inputs_as_int32(model: onnx.ModelProto) -> None:
    """Declare int32 every int64 graph input that every consumer reads as indices."""
    g = model.graph
    inits = {init.name for init in g.initializer}
    for vi in g.input:
        tensor_type = vi.type.tensor_type
        if vi.name in inits or tensor_type.elem_type != TensorProto.INT64:
            continue
        uses = [(node, k) for node in g.node for k, name in enumerate(node.input)
                if name == vi.name]
        if uses and all(node.domain in ("", "ai.onnx") and k in INDEX_INPUTS.get(node.op_type, ())
                        for node, k in uses):
            tensor_type.elem_type = TensorProto.INT32
