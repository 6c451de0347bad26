"""3-D convolution and pooling (video, volumes) rewritten as 2-D ones, depth by depth.

A Conv, MaxPool or AveragePool with a 3-D window on an input [N, C, D, H, W] of static
shape becomes, for each output depth d, the 2-D op on the input's depth slices that its
window covers (Gather of one depth index: [N, C, H, W]), then Unsqueeze(axis 2), and a
Concat of the depths along axis 2:
- Conv: the sum (Add) of one 2-D Conv per covered slice j with the weight's depth slice
  W[:, :, j] (a constant), the bias added by the first;
- MaxPool: a 2-D MaxPool of the element-wise Max of the covered slices;
- AveragePool: a 2-D AveragePool of their sum divided by kD (count_include_pad) or by
  the number of covered slices (the same divisor for every H, W position: exact).
Padding along D only drops slices; auto_pad, ceil_mode, a second output or a weight that
is not constant keep the node 3-D, and the normaliser refuses it naming the node.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference

from dnn64build.frontend.evaluate import onnx_attrs
from dnn64build.frontend.spatial1d import SpatialLifter

_OPS = ("Conv", "MaxPool", "AveragePool")


def split_3d(model: onnx.ModelProto, opset: int) -> None:
    """Rewrite ``model``'s 3-D Conv/MaxPool/AveragePool nodes as 2-D ones, in place."""
    g = model.graph
    ranks = {init.name: len(init.dims) for init in g.initializer}
    if not any(_window_dims(node, ranks) == 3 for node in g.node):
        return
    try:
        inferred = shape_inference.infer_shapes(model).graph
    except Exception:  # noqa: BLE001 - shapes are resolved (and errors reported) later
        return
    shapes = {}
    for vi in [*inferred.input, *inferred.value_info]:
        dims = vi.type.tensor_type.shape.dim
        if vi.type.tensor_type.HasField("shape") and all(d.HasField("dim_value") for d in dims):
            shapes[vi.name] = [d.dim_value for d in dims]
    _Splitter(g, opset, shapes).run()


class _Splitter(SpatialLifter):
    def __init__(self, graph: onnx.GraphProto, opset: int, shapes: dict[str, list[int]]):
        super().__init__(graph, opset)
        self.shapes = shapes

    def run(self) -> None:
        for node in self.g.node:
            depths = self._depths(node)
            if depths is None:
                self.nodes.append(node)
            else:
                self._split(node, depths)
        del self.g.node[:]
        self.g.node.extend(self.nodes)

    def _depths(self, node: onnx.NodeProto) -> list[list[tuple[int, int]]] | None:
        """Per output depth, the (window position, input depth) pairs it covers; None when
        the node is not a 3-D window this rewrite handles."""
        if node.domain not in ("", "ai.onnx") or node.op_type not in _OPS or any(node.output[1:]):
            return None
        attrs = onnx_attrs(node)
        shape = self.shapes.get(node.input[0])
        if shape is None or len(shape) != 5 or attrs.get("ceil_mode", 0) or attrs.get(
                "auto_pad", "NOTSET") not in ("NOTSET", b"NOTSET"):
            return None
        if node.op_type == "Conv":
            weight = self.inits.get(node.input[1])
            if weight is None or len(weight.dims) != 5:
                return None
            kernel = int(weight.dims[2])
        else:
            kernel = int(attrs["kernel_shape"][0])
        stride = int(attrs.get("strides", [1] * 3)[0])
        dilation = int(attrs.get("dilations", [1] * 3)[0])
        pads = attrs.get("pads", [0] * 6)
        size = shape[2]
        out = (size + pads[0] + pads[3] - dilation * (kernel - 1) - 1) // stride + 1
        depths = [[(j, z) for j in range(kernel)
                   if 0 <= (z := d * stride - pads[0] + j * dilation) < size]
                  for d in range(out)]
        return depths if out >= 1 and all(depths) else None

    def _split(self, node: onnx.NodeProto, depths: list[list[tuple[int, int]]]) -> None:
        label = node.name or node.output[0]
        attrs = onnx_attrs(node)
        flat = _attrs_2d(attrs)
        slices: dict[int, str] = {}
        weights: dict[int, str] = {}
        planes = []
        for d, covered in enumerate(depths):
            here = f"{label}__d{d}"
            inputs = [self._slice(node.input[0], z, label, slices) for _, z in covered]
            if node.op_type == "Conv":
                terms = []
                for k, ((j, _), x) in enumerate(zip(covered, inputs, strict=True)):
                    bias = node.input[2:3] if k == 0 and len(node.input) > 2 else []
                    terms.append(self._emit("Conv", [x, self._weight_slice(
                        node.input[1], j, weights), *bias], f"{here}_conv{j}", **flat))
                plane = self._chain("Add", terms, here)
            elif node.op_type == "MaxPool":
                plane = self._emit("MaxPool", [self._chain("Max", inputs, here)],
                                   f"{here}_pool", **flat)
            else:
                divisor = attrs["kernel_shape"][0] if attrs.get("count_include_pad", 0) \
                    else len(covered)
                total = self._chain("Add", inputs, here)
                if divisor != 1:
                    total = self._emit("Mul", [total, self._scalar(1.0 / divisor, here)],
                                       f"{here}_mean")
                plane = self._emit("AveragePool", [total], f"{here}_pool", **flat)
            last = len(depths) == 1
            planes.append(self._axes_op("Unsqueeze", plane, f"{here}_unsqueeze",
                                        node.output[0] if last else None))
        if len(depths) > 1:
            self.nodes.append(helper.make_node("Concat", planes, [node.output[0]],
                                               name=self._fresh(f"{label}__concat"), axis=2))

    def _emit(self, op: str, inputs: list[str], label: str, **attrs) -> str:
        out = self._fresh(f"{label}_out")
        self.nodes.append(helper.make_node(op, inputs, [out], name=self._fresh(label), **attrs))
        return out

    def _chain(self, op: str, terms: list[str], label: str) -> str:
        """``terms`` combined by the two-input ``op`` (Add, Max), left to right."""
        acc = terms[0]
        for k, term in enumerate(terms[1:], start=1):
            acc = self._emit(op, [acc, term], f"{label}_{op.lower()}{k}")
        return acc

    def _slice(self, x: str, z: int, label: str, made: dict[int, str]) -> str:
        """x[:, :, z] ([N, C, H, W]), once per depth."""
        if z not in made:
            index = self._constant(np.array(z, np.int64), f"{label}__z{z}")
            made[z] = self._emit("Gather", [x, index], f"{label}__slice{z}", axis=2)
        return made[z]

    def _weight_slice(self, weight: str, j: int, made: dict[int, str]) -> str:
        """W[:, :, j] of the constant weight [M, C/group, kD, kH, kW], once per j."""
        if j not in made:
            value = numpy_helper.to_array(self.inits[weight])[:, :, j]
            made[j] = self._constant(np.ascontiguousarray(value), f"{weight}__d{j}")
        return made[j]

    def _scalar(self, value: float, label: str) -> str:
        return self._constant(np.array(value, np.float32), f"{label}_divisor")

    def _constant(self, value: np.ndarray, base: str) -> str:
        name = self._fresh(base)
        self.g.initializer.append(numpy_helper.from_array(value, name))
        return name


def _window_dims(node: onnx.NodeProto, ranks: dict[str, int]) -> int | None:
    """How many spatial dims the window of a Conv/MaxPool/AveragePool has, if known."""
    if node.domain not in ("", "ai.onnx") or node.op_type not in _OPS:
        return None
    kernel = onnx_attrs(node).get("kernel_shape")
    if kernel is not None:
        return len(kernel)
    rank = ranks.get(node.input[1]) if node.op_type == "Conv" else None
    return None if rank is None else rank - 2


def _attrs_2d(attrs: dict) -> dict:
    """The H, W part of a 3-D window's attributes."""
    flat = {key: value for key, value in attrs.items()
            if key in ("group", "count_include_pad", "storage_order")}
    for key in ("kernel_shape", "strides", "dilations"):
        if key in attrs:
            flat[key] = list(attrs[key][1:])
    if "pads" in attrs:
        pads = attrs["pads"]
        flat["pads"] = [pads[1], pads[2], pads[4], pads[5]]
    return flat
