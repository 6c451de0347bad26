"""Build the quantised graph from the fp32 graph, the int8 node set and the QParams table.

Walks the fp32 nodes in order. Each original tensor may exist in two versions, the fp32
one and the int8 one; a missing version is made on first use by a QuantizeLinear or
DequantizeLinear node, so conversions sit exactly at fp32 <-> int8 boundaries. Graph
inputs and outputs keep their names and stay float32.
"""

from __future__ import annotations

import numpy as np

from dnn64build.ir.graph import Graph, Node, Tensor
from dnn64build.ir.ops import SCALAR_OPERAND_ACTIVATIONS
from dnn64build.quant import lower
from dnn64build.quant.calibrate import pre_key
from dnn64build.quant.overflow import check_weighted_accumulator, widen_scales
from dnn64build.quant.plan import ACTIVATION_OPS, ELEMENTWISE, SHARED, WEIGHTED
from dnn64build.quant.qparams import (
    QParams,
    activation_qparams,
    quantize_bias,
    quantize_values,
    quantize_weights,
    weight_scales,
)


class Rewriter:
    def __init__(self, src: Graph, int8_nodes: set[str], table: dict[str, QParams],
                 io_int8: bool = False):
        self.src = src
        self.int8_nodes = int8_nodes
        self.table = table
        self.io_int8 = io_int8
        self.out = Graph(src.name, list(src.inputs), list(src.outputs), {}, [])
        # io int8 makes the float inputs int8; others (int32 indices) keep their type
        int8_inputs = {name for name in src.inputs
                       if io_int8 and src.tensors[name].dtype == "float32"}
        for name in src.inputs:
            quant = table[name].as_quant() if name in int8_inputs else None
            self.out.tensors[name] = Tensor(list(src.tensors[name].shape),
                                            "int8" if name in int8_inputs
                                            else src.tensors[name].dtype, "input", quant)
        for name, value in src.constants.items():
            self.out.add_constant(name, value)
        self.fp32_names: dict[str, str] = {name: name for name in src.inputs
                                           if name not in int8_inputs}
        self.int8_names: dict[str, str] = {name: name for name in int8_inputs}

    # --- tensor versions ---

    def _new_tensor(self, base: str, shape: list[int], dtype: str, quant: dict | None) -> str:
        name = self.out.unique_name(base)
        self.out.tensors[name] = Tensor(list(shape), dtype, "activation", quant)
        return name

    def _emit(self, base: str, op: str, inputs: list[str], output: str, attrs: dict) -> None:
        self.out.nodes.append(Node(self.out.unique_name(base), op, inputs, [output], attrs))

    def int8(self, name: str) -> str:
        """The int8 version of the fp32-graph tensor ``name`` (quantising it if needed)."""
        if name in self.int8_names:
            return self.int8_names[name]
        if self.src.is_constant(name):
            return self._constant_int8(name)
        q = self.table[name]
        out = self._new_tensor(f"{name}__q", self.src.tensors[name].shape, "int8", q.as_quant())
        self._emit(f"{name}__quantize", "QuantizeLinear", [self.fp32(name)], out,
                   {"int8": {"scale": q.scale, "zero_point": q.zero_point}})
        self.int8_names[name] = out
        return out

    def fp32(self, name: str) -> str:
        """The float32 version of ``name`` (dequantising the int8 one if needed)."""
        if name in self.fp32_names or self.src.is_constant(name):
            return self.fp32_names.get(name, name)
        q = self.table[name]
        shape = self.src.tensors[name].shape
        if name in self.src.outputs:
            out = name
            self.out.tensors[name] = Tensor(list(shape), "float32", "output")
        else:
            out = self._new_tensor(f"{name}__dq", shape, "float32", None)
        self._emit(f"{name}__dequantize", "DequantizeLinear", [self.int8_names[name]], out,
                   {"int8": {"scale": q.scale, "zero_point": q.zero_point}})
        self.fp32_names[name] = out
        return out

    def _constant_int8(self, name: str) -> str:
        """A constant operand (Add/Mul/Concat) quantised per tensor over its own range."""
        value = self.src.constants[name]
        quant = self.src.tensors[name].quant
        q = (QParams.from_quant(quant) if quant and not isinstance(quant["scale"], list)
             else activation_qparams(float(value.min(initial=0.0)),
                                     float(value.max(initial=0.0))))
        self.table[name] = q
        out = self.out.unique_name(f"{name}__q")
        self.out.add_constant(out, quantize_values(value, q))
        self.out.tensors[out].quant = q.as_quant()
        self.int8_names[name] = out
        return out

    # --- nodes ---

    def run(self) -> Graph:
        for node in self.src.nodes:
            if node.name in self.int8_nodes:
                self._int8_node(node)
            else:
                self._fp32_node(node)
        for name in self.src.outputs:
            if self.io_int8:
                self._int8_output(name)
            else:
                self.fp32(name)
        self.out.remove_unused()
        return self.out

    def _int8_output(self, name: str) -> None:
        """Graph output ``name`` as an int8 tensor (quantising an fp32 result into it)."""
        if self.int8_names.get(name) == name:
            return
        q = self.table[name]
        self.out.tensors[name] = Tensor(list(self.src.tensors[name].shape), "int8", "output",
                                        q.as_quant())
        self._emit(f"{name}__quantize", "QuantizeLinear", [self.fp32(name)], name,
                   {"int8": {"scale": q.scale, "zero_point": q.zero_point}})

    def _fp32_node(self, node: Node) -> None:
        inputs = [self.fp32(name) if name else "" for name in node.inputs]
        outputs = []
        for name in node.outputs:
            t = self.src.tensors[name]
            internal = name
            if self.io_int8 and name in self.src.outputs:  # the int8 output keeps the name
                internal = self._new_tensor(f"{name}__f", t.shape, t.dtype, None)
            else:
                self.out.tensors[name] = Tensor(list(t.shape), t.dtype, t.kind)
            self.fp32_names[name] = internal
            outputs.append(internal)
        self.out.nodes.append(Node(node.name, node.op, inputs, outputs, dict(node.attrs)))

    def _int8_node(self, node: Node) -> None:
        attrs = dict(node.attrs)
        if node.op in WEIGHTED and self.src.is_constant(node.inputs[1]):
            inputs, attrs = self._weighted(node, attrs)
        elif node.op == "Concat":
            inputs = [self._concat_input(name, node.outputs[0]) for name in node.inputs]
            attrs["int8"] = {}
        else:
            # an activation of its first input keeps that one (the scalar is in its table)
            data = node.inputs[:1] if node.op in SCALAR_OPERAND_ACTIVATIONS else node.inputs
            inputs = [self.int8(name) for name in data if name]
            attrs["int8"] = self._params(node, attrs)
        out_name = node.outputs[0]
        q = self.table[out_name]
        shape = self.src.tensors[out_name].shape
        if out_name in self.src.outputs and not self.io_int8:
            result = self._new_tensor(f"{out_name}__q", shape, "int8", q.as_quant())
        elif out_name in self.src.outputs:
            result = out_name
            self.out.tensors[out_name] = Tensor(list(shape), "int8", "output", q.as_quant())
        else:
            result = out_name
            self.out.tensors[out_name] = Tensor(list(shape), "int8", "activation", q.as_quant())
        self.int8_names[out_name] = result
        in_q = self.table[node.inputs[0]]
        if node.op not in SHARED or in_q == q:
            self.out.nodes.append(Node(node.name, node.op, inputs, [result], attrs))
            return
        if node.op == "GlobalAveragePool":  # a mean with its own output quantisation
            x_shape = self.src.tensors[node.inputs[0]].shape
            params = lower.reduce_mean(x_shape, [2, 3], in_q, q)
            self.out.nodes.append(Node(node.name, "ReduceMean", inputs, [result],
                                       {"axes": [2, 3], "keepdims": 1, "int8": params}))
            return
        shared = self._new_tensor(f"{out_name}__shared", shape, "int8", in_q.as_quant())
        self.out.nodes.append(Node(node.name, node.op, inputs, [shared], attrs))
        self._emit(f"{out_name}__requantize", "Requantize", [shared], result,
                   {"int8": lower.requantize(in_q, q)})

    def _params(self, node: Node, attrs: dict) -> dict:
        t = self.table
        x = node.inputs[0]
        out_q = t[node.outputs[0]]
        if node.op == "MatMul":
            return lower.matmul_activations(t[x], t[node.inputs[1]], out_q)
        if node.op in ELEMENTWISE:
            return lower.elementwise(node.op, attrs, t[x], t[node.inputs[1]], out_q)
        if node.op in ACTIVATION_OPS:
            return lower.activation(node.op, attrs, t[x], out_q)
        if node.op in SCALAR_OPERAND_ACTIVATIONS:
            name, key = SCALAR_OPERAND_ACTIVATIONS[node.op]
            scalar = float(self.src.constants[node.inputs[1]].reshape(-1)[0])
            return {"lut": lower.lut(name, {key: scalar}, t[x], out_q)}
        if node.op == "AveragePool":
            return {"x_zero_point": t[x].zero_point, "act_min": -128, "act_max": 127}
        if node.op == "GlobalAveragePool":
            return {"act_min": -128, "act_max": 127}
        if node.op in ("ReduceMean", "ReduceSum"):
            return lower.reduce_mean(self.src.tensors[x].shape, attrs["axes"], t[x], out_q,
                                     count=1 if node.op == "ReduceSum" else None)
        if node.op == "Softmax":
            return lower.softmax(t[x], out_q)
        if node.op == "Pad":
            return lower.pad_value(attrs.get("value", 0.0), t[x])
        return {}  # MaxPool, Resize, views

    def _concat_input(self, name: str, out: str) -> str:
        source = self.int8(name)
        in_q, out_q = self.table[name], self.table[out]
        if in_q == out_q:
            return source
        result = self._new_tensor(f"{name}__requant", self.src.tensors[name].shape, "int8",
                                  out_q.as_quant())
        self._emit(f"{name}__requantize", "Requantize", [source], result,
                   {"int8": lower.requantize(in_q, out_q)})
        return result

    def _weighted(self, node: Node, attrs: dict) -> tuple[list[str], dict]:
        """Quantise weights per output channel and the bias to int32; normalise Gemm."""
        w_name = node.inputs[1]
        w = self.src.constants[w_name].astype(np.float64)
        b_name = node.inputs[2] if len(node.inputs) > 2 else ""
        axis = {"Conv": 0, "ConvTranspose": 1, "Gemm": 0, "MatMul": 1}[node.op]
        if node.op == "Gemm":
            w = w * attrs["alpha"]
            if not attrs["transB"]:
                w = w.T
            attrs.update(alpha=1.0, beta=1.0, transB=1)
        channels = w.shape[axis]
        bias = np.zeros(channels)
        if b_name:
            bias = np.broadcast_to(self.src.constants[b_name].astype(np.float64).reshape(-1),
                                   (channels,))
            bias = bias * (attrs["beta"] if node.op == "Gemm" else 1.0)
        x_q = self.table[node.inputs[0]]
        scales = self._weight_scales(w_name, w, axis, node.attrs.get("alpha", 1.0))
        fixed = self.src.tensors[w_name].quant is not None
        if not fixed:  # a pre-quantised model's scales are the model's own
            scales = widen_scales(w, bias, axis, scales, x_q.scale, x_q.zero_point)
        pre_q = self.table.get(pre_key(node))
        attrs["int8"] = lower.weighted(attrs, x_q, scales, self.table[node.outputs[0]], pre_q)
        w_q = self.out.unique_name(f"{w_name}__q")
        w_int = quantize_weights(w, scales, axis, -128 if fixed else -127)
        b_int = quantize_bias(bias, x_q.scale, scales)
        check_weighted_accumulator(node.name, node.op, w_int, b_int, axis, x_q.zero_point)
        self.out.add_constant(w_q, w_int)
        self.out.tensors[w_q].quant = {"scale": scales.tolist(), "zero_point": [0] * channels,
                                       "axis": axis}
        b_q = self.out.unique_name(f"{b_name}__q" if b_name else f"{node.name}__bias_q")
        self.out.add_constant(b_q, b_int)
        self.out.tensors[b_q].quant = {"scale": (x_q.scale * scales).tolist(),
                                       "zero_point": [0] * channels, "axis": 0}
        return [self.int8(node.inputs[0]), w_q, b_q], attrs

    def _weight_scales(self, name: str, w: np.ndarray, axis: int, alpha: float) -> np.ndarray:
        quant = self.src.tensors[name].quant
        if quant is None:
            return weight_scales(w, axis)
        fixed = np.asarray(quant["scale"], dtype=np.float64).reshape(-1) * abs(alpha)
        return np.broadcast_to(fixed.astype(np.float32).astype(np.float64),
                               (w.shape[axis],)).copy()
