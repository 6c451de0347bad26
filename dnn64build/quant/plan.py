"""Which nodes run in int8, and the quantisation of every int8 tensor.

A node runs in int8 when it has an int8 kernel in the configuration it is used in (see
docs/quant-ir.md) and is not named in ``fp32_nodes``; otherwise the reason it stays fp32
is recorded. Tensor quantisation follows from calibrated ranges, from parameters fixed by
a pre-quantised model (``Tensor.quant`` on an fp32 tensor) and from the op rules (data
movement and pooling keep their input's quantisation, Softmax has a fixed one).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dnn64build.ir.graph import Graph, Node
from dnn64build.ir.ops import ACTIVATION_OPS, SCALAR_OPERAND_ACTIVATIONS, VIEW_OPS
from dnn64build.ir.params import has_pending_params
from dnn64build.quant.calibrate import pre_key
from dnn64build.quant.overflow import MAX_ACTIVATION_PRODUCT_TERMS
from dnn64build.quant.qparams import QParams
from dnn64build.quant.shared_scales import share_concat_qparams

# Fused activations that are only a clamp of the output; the others need a lookup table.
CLAMP_ACTIVATIONS = ("relu", "relu6", "clip")
WEIGHTED = ("Conv", "ConvTranspose", "Gemm", "MatMul")
ELEMENTWISE = ("Add", "Sub", "Mul", "Div", "Max", "Min")
VIEWS = (*VIEW_OPS, "Transpose")
# Output quantisation == input quantisation.
SHARED = (*VIEWS, "MaxPool", "AveragePool", "GlobalAveragePool", "Pad", "Resize", "ReduceMax",
          "Slice", "Expand", "Tile")
OTHER = ("Softmax", "ReduceMean", "Concat", "ReduceSum")
INT8_CAPABLE = frozenset((*WEIGHTED, *ELEMENTWISE, *ACTIVATION_OPS, *SHARED, *OTHER,
                          *SCALAR_OPERAND_ACTIVATIONS))
# Weighted ops with a longer reduction stay fp32 without trying (only unusually small
# weights could pass the proof). Shorter ones are proven channel by channel once quantised
# (quant/overflow.py), the bias included; a node that fails it is refused.
MAX_REDUCTION = 65793  # 2**31 / (255 * 128)
RESIZE_COORDS = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric")
SOFTMAX_QPARAMS = QParams(1.0 / 256.0, -128)


def fp32_reason(graph: Graph, node: Node, int8_tensors: set[str]) -> str | None:
    """Why ``node`` must stay fp32, or None if it can run in int8."""
    if node.op not in INT8_CAPABLE:
        return f"no int8 kernel for {node.op}"
    if has_pending_params(node.op, node.inputs):
        return "operator parameters are not constant"
    data = [name for name in node.inputs if name]
    if any(graph.tensors[name].dtype != "float32" for name in data + node.outputs):
        return "not a float32 computation"
    if len(node.outputs) != 1:
        return "more than one output"
    consts = [graph.is_constant(name) for name in data]
    if node.op in VIEWS:
        x = data[0]
        return None if x in int8_tensors or x in graph.inputs else "input is fp32"
    if node.op in WEIGHTED:
        return _weighted_reason(graph, node, consts)
    if node.op in ELEMENTWISE:
        if all(consts):
            return "all inputs constant"
        if node.attrs.get("activation", None) not in (None, *CLAMP_ACTIVATIONS):
            return "element-wise op with a fused non-clamp activation"
        return None
    if consts[0]:
        return "constant input"
    if node.op in SCALAR_OPERAND_ACTIVATIONS and not all(
            graph.is_constant(name) and graph.constants[name].size == 1 for name in data[1:]):
        return f"{node.op} with a second operand other than a constant scalar"
    return _other_reason(graph, node)


def _weighted_reason(graph: Graph, node: Node, consts: list[bool]) -> str | None:
    w = graph.tensors[node.inputs[1]].shape
    if node.op == "MatMul" and not consts[1]:
        a = graph.tensors[node.inputs[0]].shape
        if len(a) < 2 or len(w) < 2 or consts[0]:
            return "MatMul operands must both be activations of rank >= 2"
        if a[:-2] != w[:-2] and min(int(np.prod(a[:-2])), int(np.prod(w[:-2]))) != 1:
            return "MatMul batch dims broadcast in a way the int8 kernel does not"
        if a[-1] > MAX_ACTIVATION_PRODUCT_TERMS:
            return (f"reduction longer than {MAX_ACTIVATION_PRODUCT_TERMS} (int32 accumulator "
                    "bound of two int8 activations)")
        return None
    if consts[0] or not consts[1] or (len(consts) > 2 and not consts[2]):
        return "weights and bias must be constant and the data input not"
    if node.op == "Gemm":
        if node.attrs["transA"]:
            return "Gemm with transA"
        n = w[0] if node.attrs["transB"] else w[1]
        if len(consts) > 2 and int(np.prod(graph.tensors[node.inputs[2]].shape)) not in (1, n):
            return "Gemm bias is not per output column"
        k = w[1] if node.attrs["transB"] else w[0]
    elif node.op == "MatMul":
        if len(w) != 2:
            return "MatMul with a constant B of rank other than 2"
        k = w[0]
    elif node.op == "ConvTranspose":
        if node.attrs["group"] != 1:
            return "grouped ConvTranspose"
        k = w[0] * w[2] * w[3]
    else:
        k = w[1] * w[2] * w[3]
    return None if k <= MAX_REDUCTION else "reduction longer than 65793"


def _other_reason(graph: Graph, node: Node) -> str | None:
    shape = graph.tensors[node.inputs[0]].shape
    if node.op == "Pad" and node.attrs["mode"] not in ("constant", "reflect", "edge"):
        return f"Pad mode {node.attrs['mode']}"
    if node.op == "Resize":
        if len(shape) != 4 or list(node.attrs["scales"][:2]) != [1.0, 1.0]:
            return "Resize other than over H and W of an NCHW tensor"
        if node.attrs["coordinate_transformation_mode"] not in RESIZE_COORDS:
            return f"Resize coordinate mode {node.attrs['coordinate_transformation_mode']}"
    if node.op == "Softmax" and shape[node.attrs["axis"]] > 32767:
        return "Softmax axis longer than 32767"
    if node.op in ("ReduceMean", "ReduceSum", "ReduceMax") and not node.attrs["axes"]:
        return f"{node.op} over no axes"
    return None


def needs_pre_activation(node: Node) -> bool:
    return node.op in WEIGHTED and node.attrs.get("activation") not in (None,
                                                                        *CLAMP_ACTIVATIONS)


def choose_int8(graph: Graph, fp32_nodes: set[str]) -> tuple[set[str], list[dict]]:
    """Names of the int8 nodes, and one {node, op, reason} entry per fp32 node."""
    int8_nodes: set[str] = set()
    int8_tensors: set[str] = set()
    kept: list[dict] = []
    for node in graph.nodes:
        reason = ("listed in fp32_nodes" if node.name in fp32_nodes
                  else fp32_reason(graph, node, int8_tensors))
        if reason is None:
            int8_nodes.add(node.name)
            int8_tensors.update(node.outputs)
        else:
            kept.append({"node": node.name, "op": node.op, "reason": reason})
    return int8_nodes, kept


Lookup = Callable[[str], QParams | None]


def quant_table(graph: Graph, int8_nodes: set[str], calibrated: Lookup,
                boundary: tuple[str, ...] = (), *, share: bool = True) -> dict[str, QParams]:
    """QParams of every int8 tensor (by fp32 graph name) and pre-activation (``node#pre``),
    and of the ``boundary`` tensors (graph inputs and outputs made int8).

    ``calibrated(key)`` gives the QParams from calibration; fixed parameters of a
    pre-quantised model take precedence. With ``share``, a Concat's inputs share its
    output's QParams where none is fixed (dnn64build.quant.shared_scales).
    """
    table: dict[str, QParams] = {}
    fixed: set[str] = set()  # tensors whose QParams are not ours to choose

    def fixed_or_calibrated(key: str) -> QParams:
        quant = graph.tensors[key].quant if key in graph.tensors else None
        if quant is not None and not isinstance(quant["scale"], list):
            fixed.add(key)
            return QParams.from_quant(quant)
        return calibrated(key)

    for node in graph.nodes:
        if node.name not in int8_nodes:
            continue
        for name in node.inputs:
            if name and name not in table and not graph.is_constant(name):
                table[name] = fixed_or_calibrated(name)
        out = node.outputs[0]
        if node.op in SHARED:
            # A pre-quantised model may fix another output quantisation: the rewrite then
            # requantizes the kernel's output (which has the input's) into it.
            quant = graph.tensors[out].quant
            table[out] = QParams.from_quant(quant) if quant else table[node.inputs[0]]
            if quant:
                fixed.add(out)
        elif node.op == "Softmax":
            quant = graph.tensors[out].quant
            table[out] = QParams.from_quant(quant) if quant else SOFTMAX_QPARAMS
            fixed.add(out)
        else:
            table[out] = fixed_or_calibrated(out)
        if needs_pre_activation(node):
            table[pre_key(node)] = calibrated(pre_key(node))
    for name in boundary:
        if name not in table:
            table[name] = fixed_or_calibrated(name)
    if share:
        share_concat_qparams(graph, int8_nodes, table, fixed, frozenset(SHARED))
    return table
