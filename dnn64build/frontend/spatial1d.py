"""1-D convolution and pooling (audio, keyword spotting) rewritten as 2-D with H = 1.

A Conv, ConvTranspose, MaxPool or AveragePool whose window has one spatial dim
(kernel_shape, or the weight, of one dim) becomes Unsqueeze(axis 2) -> the 2-D op with a
1 x k window -> Squeeze(axis 2), on the ONNX model before shapes are resolved, so every
later stage sees only the 2-D form; the Unsqueeze/Squeeze are views (copy-free). A
constant weight [A, B, k] becomes a [A, B, 1, k] initializer.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from dnn64build.frontend.evaluate import onnx_attrs
from dnn64build.ir.graph import free_name

_OPS = ("Conv", "ConvTranspose", "MaxPool", "AveragePool")
_WEIGHTED = ("Conv", "ConvTranspose")
_AXES_INPUT_OPSET = 13  # from here on Squeeze/Unsqueeze take their axes as an input


def lift_1d(model: onnx.ModelProto, opset: int) -> None:
    """Rewrite ``model``'s 1-D convolution and pooling nodes as 2-D ones, in place."""
    SpatialLifter(model.graph, opset).run()


class SpatialLifter:
    """Rewrites a graph's nodes in order, each kept or replaced by what ``_lift`` makes;
    spatial3d.py's splitter reuses its naming and initializer helpers."""

    def __init__(self, graph: onnx.GraphProto, opset: int):
        self.g = graph
        self.opset = opset
        self.inits = {init.name: init for init in graph.initializer}
        self.taken = {name for node in graph.node for name in [*node.input, *node.output]}
        self.taken.update(self.inits)
        self.taken.update(vi.name for vi in [*graph.input, *graph.output, *graph.value_info])
        self.nodes: list[onnx.NodeProto] = []

    def run(self) -> None:
        for node in self.g.node:
            if self._is_1d(node) and not any(node.output[1:]):
                self._lift(node)
            else:
                self.nodes.append(node)
        del self.g.node[:]
        self.g.node.extend(self.nodes)

    def _is_1d(self, node: onnx.NodeProto) -> bool:
        if node.domain not in ("", "ai.onnx") or node.op_type not in _OPS:
            return False
        kernel = onnx_attrs(node).get("kernel_shape")
        if kernel is not None:
            return len(kernel) == 1
        weight = self.inits.get(node.input[1]) if node.op_type in _WEIGHTED else None
        return weight is not None and len(weight.dims) == 3

    def _lift(self, node: onnx.NodeProto) -> None:
        label = node.name or node.output[0]
        inputs = [self._axes_op("Unsqueeze", node.input[0], f"{label}__unsqueeze"),
                  *node.input[1:]]
        if node.op_type in _WEIGHTED:
            inputs[1] = self._weight(inputs[1], label)
        y2d = self._fresh(f"{node.output[0]}__2d")
        self.nodes.append(helper.make_node(node.op_type, inputs, [y2d], name=node.name,
                                           **_lift_attrs(onnx_attrs(node))))
        self._axes_op("Squeeze", y2d, f"{label}__squeeze", node.output[0])

    def _weight(self, name: str, label: str) -> str:
        """The weight [A, B, k] as [A, B, 1, k]: a new initializer, or an Unsqueeze."""
        init = self.inits.get(name)
        if init is None:
            return self._axes_op("Unsqueeze", name, f"{label}__weight_unsqueeze")
        value = numpy_helper.to_array(init)
        lifted = self._fresh(f"{name}__2d")
        self.g.initializer.append(numpy_helper.from_array(
            value.reshape(value.shape[0], value.shape[1], 1, value.shape[2]), lifted))
        return lifted

    def _axes_op(self, op: str, x: str, label: str, y: str | None = None) -> str:
        """Append ``op`` (Squeeze/Unsqueeze) of axis 2 on ``x``; returns its output."""
        y = y or self._fresh(f"{x}__2d")
        if self.opset < _AXES_INPUT_OPSET:
            self.nodes.append(helper.make_node(op, [x], [y], name=self._fresh(label),
                                               axes=[2]))
            return y
        axes = self._fresh(f"{label}_axes")
        self.g.initializer.append(numpy_helper.from_array(np.array([2], np.int64), axes))
        self.nodes.append(helper.make_node(op, [x, axes], [y], name=self._fresh(label)))
        return y

    def _fresh(self, base: str) -> str:
        name = free_name(base, self.taken)
        self.taken.add(name)
        return name


def _lift_attrs(attrs: dict) -> dict:
    """The 2-D attributes of a 1-D window: a leading H dim of size 1, no H padding."""
    lifted = dict(attrs)
    for key, h_value in (("kernel_shape", 1), ("strides", 1), ("dilations", 1),
                         ("output_padding", 0), ("output_shape", 1)):
        if key in attrs:
            lifted[key] = [h_value, *attrs[key]]
    if "pads" in attrs:
        begin, end = attrs["pads"]
        lifted["pads"] = [0, begin, 0, end]
    return lifted
