"""A small ONNX graph builder that emits nodes the way PyTorch's exporter does.

Weights are seeded random with He-style initialisation (std = sqrt(2 / fan_in)) so
activations stay O(1) through deep nets; BatchNormalization follows Conv as a separate
node; flatten, channel shuffle and resize sizes go through Shape/Gather/... chains.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 10  # onnx 1.23 defaults to IR 14, which onnxruntime refuses


class NetBuilder:
    """Accumulates nodes and initializers; every method returns its output tensor name."""

    def __init__(self, name: str, seed: int = 0, opset: int = OPSET):
        if not 11 <= opset <= 21:
            raise ValueError(f"the zoo builder writes opsets 11 to 21, not {opset}")
        self.name = name
        self.opset = opset
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self._count = 0

    # --- plumbing ---

    def _fresh(self, prefix: str) -> str:
        self._count += 1
        return f"/{prefix}_{self._count}"

    def node(self, op: str, inputs: list[str], prefix: str | None = None, **attrs) -> str:
        out = self._fresh(prefix or op.lower()) + "_output_0"
        self.nodes.append(helper.make_node(op, inputs, [out], name=out[:-9], **attrs))
        return out

    def const(self, value: np.ndarray, prefix: str = "const") -> str:
        name = self._fresh(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def constant_node(self, value: np.ndarray) -> str:
        """A Constant node, as PyTorch emits for small scalars and index lists."""
        return self.node("Constant", [], "Constant", value=numpy_helper.from_array(
            np.asarray(value)))

    def input(self, name: str, shape: list[int]) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        return name

    def build(self, outputs: dict[str, list[int]]) -> onnx.ModelProto:
        """The checked model with the given outputs (name -> shape)."""
        outs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
                for name, shape in outputs.items()]
        graph = helper.make_graph(self.nodes, self.name, self.inputs, outs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)],
                                  ir_version=IR_VERSION, producer_name="dnn64build-zoo")
        onnx.checker.check_model(model)
        return model

    # --- layers ---

    def _he(self, shape: tuple[int, ...], fan_in: int) -> np.ndarray:
        return (self.rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

    def conv(self, x: str, cin: int, cout: int, k: int, stride: int = 1, pad: int | None = None,
             group: int = 1, bias: bool = False, dilation: int = 1) -> str:
        pad = (k - 1) // 2 * dilation if pad is None else pad
        w = self.const(self._he((cout, cin // group, k, k), cin // group * k * k), "weight")
        inputs = [x, w]
        if bias:
            inputs.append(self.const((self.rng.standard_normal(cout) * 0.1).astype(np.float32),
                                     "bias"))
        return self.node("Conv", inputs, "Conv", kernel_shape=[k, k], strides=[stride, stride],
                         pads=[pad] * 4, group=group, dilations=[dilation, dilation])

    def conv_transpose(self, x: str, cin: int, cout: int, k: int, stride: int) -> str:
        w = self.const(self._he((cin, cout, k, k), cin), "weight")
        b = self.const((self.rng.standard_normal(cout) * 0.1).astype(np.float32), "bias")
        return self.node("ConvTranspose", [x, w, b], "ConvTranspose", kernel_shape=[k, k],
                         strides=[stride, stride])

    def bn(self, x: str, c: int) -> str:
        r = self.rng
        params = [r.uniform(0.8, 1.2, c), r.normal(0, 0.1, c), r.normal(0, 0.1, c),
                  r.uniform(0.8, 1.2, c)]
        names = [self.const(p.astype(np.float32), "bn") for p in params]
        return self.node("BatchNormalization", [x, *names], "BatchNormalization", epsilon=1e-5)

    def act(self, x: str, kind: str | None) -> str:
        if kind is None:
            return x
        if kind == "relu":
            return self.node("Relu", [x], "Relu")
        if kind == "relu6":
            lo, hi = self.constant_node(np.float32(0)), self.constant_node(np.float32(6))
            return self.node("Clip", [x, lo, hi], "Clip")
        if kind == "hardswish":
            if self.opset < 14:  # no HardSwish op yet: PyTorch writes x * HardSigmoid(x)
                return self.mul(x, self.node("HardSigmoid", [x], "HardSigmoid", alpha=1 / 6,
                                             beta=0.5))
            return self.node("HardSwish", [x], "HardSwish")
        if kind == "hardsigmoid":
            return self.node("HardSigmoid", [x], "HardSigmoid", alpha=1 / 6, beta=0.5)
        if kind == "leaky_relu":
            return self.node("LeakyRelu", [x], "LeakyRelu", alpha=0.1)
        if kind == "silu":
            return self.node("Mul", [x, self.node("Sigmoid", [x], "Sigmoid")], "Mul")
        if kind == "sigmoid":
            return self.node("Sigmoid", [x], "Sigmoid")
        raise ValueError(kind)

    def conv_bn(self, x: str, cin: int, cout: int, k: int, stride: int = 1, group: int = 1,
                act: str | None = "relu", dilation: int = 1) -> str:
        y = self.conv(x, cin, cout, k, stride, group=group, dilation=dilation)
        return self.act(self.bn(y, cout), act)

    def unet_down(self, x: str, cin: int, widths: Iterable[int],
                  double: Callable[[str, int, int], str]) -> tuple[str, int, list[tuple[str, int]]]:
        """U-Net's contracting path: at each width ``double(x, cin, cout)`` (its two convs),
        whose output is kept as a skip connection, then a 2x2 max pool. Returns the pooled
        tensor, its channels, and the skips (tensor, channels) from the top level down."""
        skips = []
        for c in widths:
            x = double(x, cin, c)
            skips.append((x, c))
            x = self.maxpool(x, 2, 2)
            cin = c
        return x, cin, skips

    def gemm(self, x: str, fin: int, fout: int) -> str:
        """nn.Linear: Gemm with transB=1."""
        w = self.const(self._he((fout, fin), fin), "weight")
        b = self.const((self.rng.standard_normal(fout) * 0.1).astype(np.float32), "bias")
        return self.node("Gemm", [x, w, b], "Gemm", alpha=1.0, beta=1.0, transB=1)

    def maxpool(self, x: str, k: int, stride: int, pad: int = 0, ceil: int = 0) -> str:
        return self.node("MaxPool", [x], "MaxPool", kernel_shape=[k, k], strides=[stride] * 2,
                         pads=[pad] * 4, ceil_mode=ceil)

    def avgpool(self, x: str, k: int, stride: int, pad: int = 0) -> str:
        return self.node("AveragePool", [x], "AveragePool", kernel_shape=[k, k],
                         strides=[stride] * 2, pads=[pad] * 4, count_include_pad=1)

    def gap(self, x: str) -> str:
        return self.node("GlobalAveragePool", [x], "GlobalAveragePool")

    def add(self, a: str, b: str) -> str:
        return self.node("Add", [a, b], "Add")

    def mul(self, a: str, b: str) -> str:
        return self.node("Mul", [a, b], "Mul")

    def concat(self, xs: list[str], axis: int = 1) -> str:
        return self.node("Concat", xs, "Concat", axis=axis)

    def flatten(self, x: str) -> str:
        """torch.flatten(x, 1)."""
        return self.node("Flatten", [x], "Flatten", axis=1)

    def _dim(self, shape: str, index: int) -> str:
        """x.size(index) as PyTorch exports it: a scalar Gather on the Shape."""
        return self.node("Gather", [shape, self.constant_node(np.int64(index))], "Gather",
                         axis=0)

    def _unsqueeze0(self, scalar: str) -> str:
        if self.opset < 13:  # axes became an input in opset 13
            return self.node("Unsqueeze", [scalar], "Unsqueeze", axes=[0])
        return self.node("Unsqueeze", [scalar, self.const(np.array([0], np.int64), "axes")],
                         "Unsqueeze")

    def view_flatten(self, x: str) -> str:
        """x.view(x.size(0), -1)."""
        shape = self.node("Shape", [x], "Shape")
        n = self._unsqueeze0(self._dim(shape, 0))
        target = self.concat([n, self.const(np.array([-1], np.int64), "minus_one")], axis=0)
        return self.node("Reshape", [x, target], "Reshape")

    def channel_shuffle(self, x: str, groups: int) -> str:
        """ShuffleNet's view / transpose / view, with sizes read from x.size()."""
        shape = self.node("Shape", [x], "Shape")
        n, c, h, w = (self._dim(shape, i) for i in range(4))
        per_group = self.node("Div", [c, self.constant_node(np.int64(groups))], "Div")
        g = self.constant_node(np.array([groups], np.int64))
        dims = [self._unsqueeze0(d) for d in (n, per_group, h, w)]
        split = self.concat([dims[0], g, *dims[1:]], axis=0)
        y = self.node("Reshape", [x, split], "Reshape")
        y = self.node("Transpose", [y], "Transpose", perm=[0, 2, 1, 3, 4])
        minus_one = self.constant_node(np.array([-1], np.int64))
        merged = self.concat([dims[0], minus_one, dims[2], dims[3]], axis=0)
        return self.node("Reshape", [y, merged], "Reshape")

    def mean_hw(self, x: str) -> str:
        """x.mean([2, 3]): ReduceMean without keepdims (axes an input from opset 18)."""
        if self.opset >= 18:
            return self.node("ReduceMean", [x, self.const(np.array([2, 3], np.int64), "axes")],
                             "ReduceMean", keepdims=0)
        return self.node("ReduceMean", [x], "ReduceMean", axes=[2, 3], keepdims=0)

    def channels(self, x: str, start: int, end: int) -> str:
        """x[:, start:end] (a half of torch's x.chunk(2, dim=1))."""
        bounds = [self.const(np.array([v], np.int64), "slice") for v in (start, end, 1)]
        return self.node("Slice", [x, bounds[0], bounds[1], bounds[2]], "Slice")

    def upsample2x(self, x: str, mode: str = "nearest") -> str:
        """F.interpolate(x, scale_factor=2) exported with computed output sizes."""
        return self.upsample(x, 2, mode)

    def upsample(self, x: str, factor: int, mode: str = "nearest") -> str:
        """F.interpolate(x, scale_factor=factor) exported with computed output sizes."""
        shape = self.node("Shape", [x], "Shape")
        starts, ends = (self.const(np.array([v], np.int64), "slice") for v in (2, 4))
        hw = self.node("Slice", [shape, starts, ends], "Slice")
        hw = self.node("Cast", [hw], "Cast", to=TensorProto.FLOAT)
        hw = self.node("Mul", [hw, self.constant_node(np.float32(factor))], "Mul")
        hw = self.node("Floor", [hw], "Floor")
        hw = self.node("Cast", [hw], "Cast", to=TensorProto.INT64)
        nc = self.node("Slice", [shape, self.const(np.array([0], np.int64), "slice"),
                                 self.const(np.array([2], np.int64), "slice")], "Slice")
        sizes = self.concat([nc, hw], axis=0)
        kwargs = {"coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"} \
            if mode == "nearest" else {"coordinate_transformation_mode": "pytorch_half_pixel"}
        # Before opset 13, roi and scales had to be given (as empty tensors) with sizes.
        empty = self.const(np.zeros(0, np.float32), "empty") if self.opset < 13 else ""
        return self.node("Resize", [x, empty, empty, sizes], "Resize", mode=mode, **kwargs)
