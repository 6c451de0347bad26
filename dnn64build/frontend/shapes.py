"""Static shapes and dtypes for every tensor of an ONNX model.

onnx.shape_inference (with data propagation) resolves most shapes, but not those that
depend on shape arithmetic it cannot propagate (e.g. Div in a PyTorch channel-shuffle
chain). So: infer, evaluate the shape sub-graphs whose inputs are now known, feed their
values back as initializers of a weight-free copy of the model, and infer again until
every shape is static or nothing new can be evaluated.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, numpy_helper

from dnn64build.frontend.evaluate import constant_value, try_evaluate

# Initializers with more elements than this are replaced by typed inputs in the copy
# that shape inference sees (their values never matter for shapes).
_SMALL = 64


class ShapeInferenceError(Exception):
    """onnx.shape_inference rejected the model."""


@dataclass
class TensorType:
    shape: list[int | None] | None
    dtype: str

    @property
    def static(self) -> bool:
        return self.shape is not None and None not in self.shape


def _np_dtype(elem_type: int) -> str:
    return str(np.dtype(helper.tensor_dtype_to_np_dtype(elem_type)))


def _value_info_type(vi: onnx.ValueInfoProto) -> TensorType | None:
    tt = vi.type.tensor_type
    if not tt.elem_type:
        return None
    shape = None
    if tt.HasField("shape"):
        shape = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
    return TensorType(shape, _np_dtype(tt.elem_type))


def _collect(model: onnx.ModelProto, known: dict[str, np.ndarray]) -> dict[str, TensorType]:
    types: dict[str, TensorType] = {}
    g = model.graph
    for vi in [*g.output, *g.value_info, *g.input]:  # later entries win: inputs are bound
        found = _value_info_type(vi)
        if found is not None:
            types[vi.name] = found
    for init in g.initializer:
        types[init.name] = TensorType(list(init.dims), _np_dtype(init.data_type))
    for name, value in known.items():
        types[name] = TensorType(list(value.shape), str(value.dtype))
    return types


def _light_model(model: onnx.ModelProto, known: dict[str, np.ndarray], folded: set[int],
                 patched: dict[int, onnx.NodeProto]) -> onnx.ModelProto:
    """The model without big weights and with the known values as initializers."""
    g = model.graph
    small = [init for init in g.initializer if int(np.prod(init.dims)) <= _SMALL]
    big = [helper.make_tensor_value_info(init.name, init.data_type, list(init.dims))
           for init in g.initializer if int(np.prod(init.dims)) > _SMALL]
    inits = {init.name for init in g.initializer}
    extra = [numpy_helper.from_array(value, name) for name, value in known.items()
             if name not in inits]
    inputs = [vi for vi in g.input if vi.name not in inits] + big
    nodes = [patched.get(i, node) for i, node in enumerate(g.node) if i not in folded]
    light = helper.make_graph(nodes, g.name, inputs, list(g.output), small + extra)
    # IR < 4 ignores initializers that are not also graph inputs; the copy keeps them apart.
    return helper.make_model(light, opset_imports=model.opset_import,
                             ir_version=max(model.ir_version, 4))


def resolve_types(model: onnx.ModelProto, opset: int) -> dict[str, TensorType]:
    """Type (shape may still hold None where unresolvable) of every tensor in ``model``."""
    known: dict[str, np.ndarray] = {}
    for init in model.graph.initializer:
        if int(np.prod(init.dims)) <= _SMALL:
            known[init.name] = numpy_helper.to_array(init)
    folded: set[int] = set()
    for index, node in enumerate(model.graph.node):
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            try:
                value = constant_value(node)
            except ValueError:
                continue
            if value.size <= _SMALL:
                known[node.output[0]] = value
                folded.add(index)
    patched: dict[int, onnx.NodeProto] = {}
    while True:
        light = _light_model(model, known, folded, patched)
        try:
            inferred = onnx.shape_inference.infer_shapes(light, check_type=True,
                                                         strict_mode=True, data_prop=True)
        except onnx.shape_inference.InferenceError as exc:
            raise ShapeInferenceError(str(exc)) from exc
        types = _collect(inferred, known)
        progress = _patch_ceil_pools(model, types, patched)
        if all(t.static for t in types.values()) and not progress:
            return types
        shapes = {name: t.shape for name, t in types.items()}
        for index, node in enumerate(model.graph.node):
            if index in folded:
                continue
            value = try_evaluate(node, known, shapes, opset)
            if value is not None:
                known[node.output[0]] = value
                shapes[node.output[0]] = list(value.shape)
                folded.add(index)
                progress = True
        if not progress:
            return types


def _patch_ceil_pools(model: onnx.ModelProto, types: dict[str, TensorType],
                      patched: dict[int, onnx.NodeProto]) -> bool:
    """Make shape inference drop ceil_mode windows that start past the input.

    onnxruntime (like PyTorch, and the ONNX spec text) ignores a last window that would
    start in the end padding; onnx.shape_inference counts it. For inference only, such a
    pool is given ceil_mode=0 and just enough end padding to produce the right size.
    Returns True if a node was patched (shapes must be inferred again).
    """
    changed = False
    for index, node in enumerate(model.graph.node):
        if index in patched or node.op_type not in ("MaxPool", "AveragePool"):
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if not attrs.get("ceil_mode") or attrs.get("auto_pad", b"NOTSET") != b"NOTSET":
            continue
        in_type = types.get(node.input[0])
        if in_type is None or not in_type.static or len(in_type.shape) != 4:
            continue
        rank = 2
        kernel, strides = list(attrs["kernel_shape"]), list(attrs.get("strides", [1] * rank))
        dilations = list(attrs.get("dilations", [1] * rank))
        pads = list(attrs.get("pads", [0] * 2 * rank))
        extra = []
        for i in range(rank):
            size, begin, end = in_type.shape[2 + i], pads[i], pads[i + rank]
            span = (kernel[i] - 1) * dilations[i] + 1
            out = -(-(size + begin + end - span) // strides[i]) + 1
            if (out - 1) * strides[i] >= size + begin:
                out -= 1
            extra.append(max(0, (out - 1) * strides[i] + span - (size + begin + end)))
        patch = onnx.NodeProto()
        patch.CopyFrom(node)
        del patch.attribute[:]
        new_attrs = {**attrs, "ceil_mode": 0,
                     "pads": pads[:rank] + [pads[rank + i] + extra[i] for i in range(rank)]}
        patch.attribute.extend(helper.make_attribute(k, v) for k, v in new_attrs.items())
        patched[index] = patch
        changed = True
    return changed
