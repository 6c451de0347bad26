"""One quantisation for a Concat and its inputs, so the Concat needs no requantising copy.

An int8 Concat copies bytes: every input must carry the output's (scale, zero point). When
an input's own quantisation differs, the rewrite puts a ``Requantize`` copy in front of it,
and that copy defeats the planner's copy-free concat (each producer writing straight into
its slice of the output). As TFLite's converter does, the quantiser instead gives the
Concat's output and inputs one quantisation covering all of their ranges.

Tensors that must share a quantisation are grouped (union-find over fp32-graph tensor
names): a Concat's output with each of its activation inputs, and a data-movement op's
(``SHARED``: views, pools, Pad, Resize) output with its input, so that widening a MaxPool's
output also widens the tensor it pools. A group whose members already agree is left as it
is; otherwise every member gets ``activation_qparams`` over the union of the members'
representable ranges. A link is not made where a quantisation is fixed (a pre-quantised
model's, Softmax's): there the scales truly differ and the Requantize copy remains, as it
does for constant Concat inputs.

One quantisation is a loss where the ranges differ by orders of magnitude: YOLOv8's output
concatenates boxes in pixels (up to the image size) with class scores in [0, 1], and a
shared scale of a few pixels rounds every score to 0. Where the Concat makes a float32
graph output, nothing forces one quantisation: ``float_output_concats`` names such
Concats, which the quantiser then keeps in float32 (each input dequantized with its own
scale, the concatenation exact).
"""

from __future__ import annotations

from collections.abc import Mapping, Set

from dnn64build.ir.graph import Graph
from dnn64build.quant.qparams import QParams, activation_qparams


def share_concat_qparams(graph: Graph, int8_nodes: Set[str], table: dict[str, QParams],
                         fixed: Set[str], shared_ops: Set[str]) -> None:
    """Rewrite ``table`` in place so every int8 Concat's inputs have its output's QParams
    where none of the tensors linked to it has a ``fixed`` quantisation."""
    parent: dict[str, str] = {}

    def find(t: str) -> str:
        while parent.get(t, t) != t:
            t = parent[t]
        return t

    def link(a: str, b: str) -> None:
        if a in fixed or b in fixed or a not in table or b not in table:
            return
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[rb] = ra

    for node in graph.nodes:
        if node.name not in int8_nodes:
            continue
        out = node.outputs[0]
        if node.op == "Concat":
            for name in node.inputs:
                if name and not graph.is_constant(name):
                    link(out, name)
        elif node.op in shared_ops and table.get(out) == table.get(node.inputs[0]):
            link(out, node.inputs[0])

    groups: dict[str, list[str]] = {}
    for t in parent:
        groups.setdefault(find(t), []).append(t)
    for root, members in groups.items():
        members.append(root)
        if len({table[t] for t in members}) == 1:
            continue
        low = min(representable(table[t])[0] for t in members)
        high = max(representable(table[t])[1] for t in members)
        common = activation_qparams(low, high)
        for t in members:
            table[t] = common


# A float32 output Concat whose inputs' scales differ more than this (4 bits of the
# narrowest input lost to a shared scale) runs in float32.
DISPARATE_SCALES = 16.0


def float_output_concats(graph: Graph, int8_nodes: Set[str],
                         own: Mapping[str, QParams]) -> list[str]:
    """The int8 Concats making a graph output whose activation inputs' own quantisations
    (``own``: before any sharing) have scales more than DISPARATE_SCALES apart."""
    names = []
    for node in graph.nodes:
        if node.name not in int8_nodes or node.op != "Concat" \
                or node.outputs[0] not in graph.outputs:
            continue
        scales = [own[name].scale for name in node.inputs
                  if name and not graph.is_constant(name)]
        if len(scales) > 1 and max(scales) > DISPARATE_SCALES * min(scales):
            names.append(node.name)
    return names


def representable(q: QParams) -> tuple[float, float]:
    """The real range an int8 tensor with ``q`` holds: [(-128 - zp) * s, (127 - zp) * s]."""
    return (-128 - q.zero_point) * q.scale, (127 - q.zero_point) * q.scale
