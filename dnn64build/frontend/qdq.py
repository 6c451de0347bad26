"""Import pre-quantised ONNX models (QDQ, QLinearConv, QLinearMatMul), keeping their
scales and zero points.

The frontend imports float models only, so this is a pre-pass on the ModelProto:

1. QLinearConv / QLinearMatMul become DequantizeLinear -> Conv/MatMul -> QuantizeLinear
   (their int32 bias becomes a float bias ``B * x_scale * w_scale``); data movement and
   MaxPool applied to int8 tensors get DequantizeLinear / QuantizeLinear around them.
2. A DequantizeLinear of a constant (a weight or bias) becomes the float constant it
   computes; a weight's per-channel (or per-tensor) scales are recorded.
3. A QuantizeLinear -> DequantizeLinear pair on an activation is removed; the activation's
   (scale, zero point) is recorded. uint8 activations become int8 with zero point - 128
   (the same real values).

The float model is then imported by the frontend and the recorded parameters are put on
the fp32 tensors as ``Tensor.quant`` (docs/quant-ir.md, "pre-quantised models"); the
quantize stage keeps them instead of calibrating.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from dnn64build.errors import UserError
from dnn64build.frontend.onnx_import import import_model
from dnn64build.ir.graph import Graph

QDQ_OPS = ("QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul")
# Ops that onnxruntime's QOperator format applies to int8 tensors as they are.
DIRECT_INT8 = ("Flatten", "MaxPool", "Reshape", "Resize", "Squeeze", "Transpose", "Unsqueeze")


def is_prequantized(model: onnx.ModelProto) -> bool:
    return any(node.op_type in QDQ_OPS for node in model.graph.node)


def import_qdq(model: onnx.ModelProto, input_shapes: dict[str, list[int]] | None = None,
               *, where: str, name: str) -> Graph:
    """Import a pre-quantised ONNX model (loaded by ``load_onnx``) as an fp32 graph whose
    tensors carry the model's fixed quantisation."""
    float_model, fixed = strip_qdq(model, where)
    graph = import_model(float_model, input_shapes, where=where, name=name)
    for tensor, quant in fixed.items():
        if tensor in graph.tensors:
            graph.tensors[tensor].quant = quant
    return graph


class _Model:
    """The nodes and constants of a graph being rewritten."""

    def __init__(self, model: onnx.ModelProto, where: str):
        self.where = where
        self.nodes = list(model.graph.node)
        self.consts = {init.name: numpy_helper.to_array(init) for init in model.graph.initializer}
        for node in self.nodes:
            if node.op_type == "Constant":
                value = next((a for a in node.attribute if a.name == "value"), None)
                if value is not None:
                    self.consts[node.output[0]] = numpy_helper.to_array(value.t)
        self.new_inits: dict[str, np.ndarray] = {}
        self.fixed: dict[str, dict] = {}

    def const(self, node: onnx.NodeProto, index: int, default: np.ndarray | None = None
              ) -> np.ndarray:
        name = node.input[index] if index < len(node.input) else ""
        if not name:
            if default is None:
                raise self.fail(node, f"input #{index + 1} is missing")
            return default
        if name not in self.consts:
            raise self.fail(node, f"input {name!r} must be a constant")
        return self.consts[name]

    def fail(self, node: onnx.NodeProto, problem: str) -> UserError:
        return UserError(f"node {node.name or node.output[0]!r} ({node.op_type}): {problem}",
                         where=self.where,
                         hint="dnn64build imports QDQ models with int8/uint8 per-tensor "
                              "activations and symmetric int8 weights (onnxruntime "
                              "quantize_static with weight_type=QInt8)")


def _axis_shape(ndim: int, axis: int, size: int) -> list[int]:
    shape = [1] * ndim
    if size > 1:
        shape[axis] = size
    return shape


def _dequantize(m: _Model, node: onnx.NodeProto, value: np.ndarray) -> tuple[np.ndarray, dict]:
    """Float value of a constant DequantizeLinear and the weight quant it carries."""
    scale = m.const(node, 1).astype(np.float32).reshape(-1)
    zp = m.const(node, 2, np.zeros(1, value.dtype)).astype(np.int64).reshape(-1)
    axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
    axis = axis % max(value.ndim, 1)
    shape = _axis_shape(value.ndim, axis, scale.size)
    real = (value.astype(np.int64) - zp.reshape(shape)) * scale.reshape(shape).astype(np.float64)
    if value.dtype == np.int8 and np.any(zp != 0):
        raise m.fail(node, "int8 weights with a non-zero zero point (asymmetric)")
    if value.dtype not in (np.int8, np.int32):
        raise m.fail(node, f"constant of type {value.dtype} (int8 weights or int32 bias "
                           "expected)")
    quant = {"scale": scale.astype(np.float64).tolist(), "zero_point": [0] * scale.size,
             "axis": axis if scale.size > 1 else 0}
    return real.astype(np.float32), quant


def _activation_quant(m: _Model, node: onnx.NodeProto) -> dict:
    scale = m.const(node, 1).reshape(-1)
    zp = m.const(node, 2, np.zeros(1, np.uint8)).reshape(-1)
    if scale.size != 1 or zp.size != 1:
        raise m.fail(node, "per-channel activation quantisation")
    if zp.dtype not in (np.int8, np.uint8):
        raise m.fail(node, f"activation type {zp.dtype} (int8 or uint8 expected)")
    shift = 128 if zp.dtype == np.uint8 else 0
    return {"scale": float(np.float32(scale[0])), "zero_point": int(zp[0]) - shift}


def _expand_qlinear(m: _Model) -> None:
    """QLinearConv/QLinearMatMul -> DequantizeLinear, float op, QuantizeLinear; an op of
    DIRECT_INT8 reading an int8 tensor gets the same around it, its output keeping the
    input's quantisation (what onnxruntime's QOperator format means by such an op)."""
    nodes = []
    int8_params: dict[str, list[str]] = {}  # int8 tensor -> [scale, zero point] names
    for node in m.nodes:
        if node.op_type == "QuantizeLinear":
            int8_params[node.output[0]] = list(node.input[1:3])
        if node.op_type in DIRECT_INT8 and node.input[0] in int8_params:
            params, tag = int8_params[node.input[0]], node.name or node.output[0]
            x_f, y_f = f"{tag}__x_f", f"{tag}__y_f"
            nodes.append(helper.make_node("DequantizeLinear", [node.input[0], *params], [x_f],
                                          name=f"{tag}__dq_x"))
            float_node = helper.make_node(node.op_type, [x_f, *node.input[1:]], [y_f],
                                          name=tag)
            float_node.attribute.extend(node.attribute)
            nodes.append(float_node)
            nodes.append(helper.make_node("QuantizeLinear", [y_f, *params], [node.output[0]],
                                          name=f"{tag}__q_y"))
            int8_params[node.output[0]] = params
            continue
        if node.op_type not in ("QLinearConv", "QLinearMatMul"):
            nodes.append(node)
            continue
        int8_params[node.output[0]] = list(node.input[6:8])
        ins, out, tag = list(node.input), node.output[0], node.name or node.output[0]
        a_f, b_f, y_f = f"{tag}__a_f", f"{tag}__b_f", f"{tag}__y_f"
        nodes.append(helper.make_node("DequantizeLinear", ins[0:3], [a_f], name=f"{tag}__dq_a"))
        nodes.append(helper.make_node("DequantizeLinear", ins[3:6], [b_f], name=f"{tag}__dq_b",
                                      axis=0 if node.op_type == "QLinearConv" else 1))
        float_ins = [a_f, b_f]
        if node.op_type == "QLinearConv" and len(ins) > 8 and ins[8]:
            bias = m.const(node, 8).astype(np.float64)
            scale = (m.const(node, 1).astype(np.float64).reshape(-1)
                     * m.const(node, 4).astype(np.float64).reshape(-1))
            m.new_inits[f"{tag}__bias_f"] = (bias * scale).astype(np.float32)
            float_ins.append(f"{tag}__bias_f")
        op = "Conv" if node.op_type == "QLinearConv" else "MatMul"
        float_node = helper.make_node(op, float_ins, [y_f], name=tag)
        float_node.attribute.extend(node.attribute)
        nodes.append(float_node)
        nodes.append(helper.make_node("QuantizeLinear", [y_f, ins[6], ins[7]], [out],
                                      name=f"{tag}__q_y"))
    m.nodes = nodes


def strip_qdq(model: onnx.ModelProto, where: str = "model") -> tuple[onnx.ModelProto, dict]:
    """The float model and the fixed quantisation (tensor name -> quant dict) it had."""
    m = _Model(model, where)
    _expand_qlinear(m)
    for init_name, value in m.new_inits.items():
        m.consts[init_name] = value
    graph_outputs = {vi.name for vi in model.graph.output}
    quantize_of: dict[str, onnx.NodeProto] = {}  # Q output -> the Q node
    rename: dict[str, str] = {}
    kept: list[onnx.NodeProto] = []
    for node in m.nodes:
        if node.op_type == "QuantizeLinear":
            if node.output[0] in graph_outputs:
                raise m.fail(node, "an int8 graph output (outputs must be float)")
            quantize_of[node.output[0]] = node
        elif node.op_type == "DequantizeLinear":
            source = node.input[0]
            if source in m.consts and source not in quantize_of:
                real, quant = _dequantize(m, node, m.consts[source])
                m.new_inits[node.output[0]] = real
                if m.consts[source].dtype == np.int8:
                    m.fixed[node.output[0]] = quant
                continue
            q = quantize_of.get(source)
            if q is None:
                raise m.fail(node, f"input {source!r} is neither a constant nor the output "
                                   "of a QuantizeLinear")
            x = rename.get(q.input[0], q.input[0])
            quant = _activation_quant(m, q)
            if _activation_quant(m, node) != quant:
                raise m.fail(node, "DequantizeLinear parameters differ from its "
                                   "QuantizeLinear's")
            m.fixed[x] = quant
            if node.output[0] in graph_outputs:
                kept.append(helper.make_node("Identity", [x], [node.output[0]],
                                             name=f"{node.output[0]}__identity"))
                m.fixed[node.output[0]] = quant
            else:
                rename[node.output[0]] = x
        else:
            kept.append(node)
    for node in kept:
        for i, name in enumerate(node.input):
            node.input[i] = rename.get(name, name)
        if any(name in quantize_of for name in node.input):
            raise m.fail(node, "reads an int8 tensor directly (only Q -> DQ pairs and "
                               "QLinearConv/QLinearMatMul are supported)")
    return _rebuild(model, kept, m), m.fixed


def _rebuild(model: onnx.ModelProto, nodes: list[onnx.NodeProto], m: _Model) -> onnx.ModelProto:
    used = {name for node in nodes for name in node.input}
    inits = [init for init in model.graph.initializer if init.name in used]
    inits += [numpy_helper.from_array(value, name) for name, value in m.new_inits.items()
              if name in used]
    graph = helper.make_graph(nodes, model.graph.name, list(model.graph.input),
                              list(model.graph.output), inits)
    opsets = [o for o in model.opset_import if o.domain in ("", "ai.onnx")]
    return helper.make_model(graph, opset_imports=opsets, ir_version=model.ir_version)
