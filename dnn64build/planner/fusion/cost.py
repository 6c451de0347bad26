"""What a group costs: its members' geometry, its tile or row program, the MACs it adds,
the weights it stages; and plan.json's ``fusion`` record of those."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dnn64build.ir.graph import Graph, Node
from dnn64build.planner.dagstream import DagProgram, dag_program, dag_record, macs_per_row
from dnn64build.planner.fusion.chains import member_weight_bytes
from dnn64build.planner.fusion.records import GROUP_OP, Group, buffer_names, group_name
from dnn64build.planner.regions import (
    Axis,
    Member,
    Program,
    patch_program,
    stream_program,
    unfused_macs,
)

# The row program of each dag group a choice weighed (a pure function of graph and group).
DagPrograms = dict[Group, DagProgram]


def member_of(graph: Graph, node: Node) -> Member:
    """The geometry of one member."""
    a = node.attrs
    _, c_in, h, w = graph.tensors[node.inputs[0]].shape
    _, c_out, oh, ow = graph.tensors[node.outputs[0]].shape
    if node.op == "Conv":
        kernel = list(graph.tensors[node.inputs[1]].shape[-2:])
        macs = (c_in // a["group"]) * kernel[0] * kernel[1]
    else:
        kernel, macs = list(a["kernel_shape"]), 0
    elem = np.dtype(graph.tensors[node.outputs[0]].dtype).itemsize
    return Member(
        Axis(kernel[0], a["strides"][0], a["pads"][0], a["dilations"][0], h, oh),
        Axis(kernel[1], a["strides"][1], a["pads"][1], a["dilations"][1], w, ow),
        c_out, elem, macs)


def nodes_by_name(graph: Graph) -> dict[str, Node]:
    """Every node, members of fused groups included."""
    nodes = {n.name: n for n in graph.nodes}
    for node in graph.nodes:
        if node.op == GROUP_OP:
            nodes.update((m.name, m) for m in node.attrs["members"])
    return nodes


def program_of(graph: Graph, group: Group, programs: DagPrograms | None = None
               ) -> Program | DagProgram:
    """The group's tile or row program; a dag group's is taken from, or kept in,
    ``programs`` (row programs of ``graph``'s groups, see choose_groups)."""
    if group.mode == "dag" and programs is not None and group in programs:
        return programs[group]
    nodes = nodes_by_name(graph)
    if group.mode == "dag":
        program = dag_program(graph, [nodes[name] for name in group.nodes], group.streams,
                              bool(group.emits))
        if programs is not None:
            programs[group] = program
        return program
    members = [member_of(graph, nodes[name]) for name in group.nodes]
    if group.mode == "stream":
        return stream_program(members, group.band_rows)
    return patch_program(members, group.grid)


def group_weight_bytes(graph: Graph, group: Group) -> int:
    """Bytes of the group's one weight tile (all members' constants)."""
    nodes = nodes_by_name(graph)
    return sum(member_weight_bytes(graph, nodes[name]) for name in group.nodes)


def groups_staging_bytes(graph: Graph, groups: list[Group], base: int) -> int:
    """Weight staging (both halves) with ``groups``, given ``base`` without them: a chain
    group stages all its weights at once, in a 16-byte aligned half; a dag group re-reads
    tiles that fit the default staging."""
    return max([base, *(2 * -(-group_weight_bytes(graph, g) // 16) * 16
                        for g in groups if g.mode != "dag")])


def fusion_record(graph: Graph, mode: str, groups: list[Group],
                  programs: DagPrograms | None = None) -> dict[str, Any]:
    """plan.json's ``fusion``: what was fused, with which buffers, at what cost
    (``programs``: as program_of's)."""
    records = []
    for group in groups:
        program = program_of(graph, group, programs)
        rec = group.record()
        rec["name"] = group_name(group)
        rec["buffers"] = buffer_names(group, len(program.buffer_bytes))
        rec["tiles"] = len(program.steps)
        rec["extra_macs"] = extra_macs(graph, [group], programs)
        rec["weight_bytes"] = group_weight_bytes(graph, group)
        if isinstance(program, DagProgram):
            rec["program"] = dag_record(graph, program, rec["buffers"])
        records.append(rec)
    return {"mode": mode, "groups": records, "model_macs": model_macs(graph),
            "extra_macs": sum(r["extra_macs"] for r in records)}


def model_macs(graph: Graph) -> int:
    """Multiply-accumulates of the (unfused) model's Conv, ConvTranspose, Gemm, MatMul."""
    return sum(node_macs(graph, node) for node in graph.nodes)


def node_macs(graph: Graph, node: Node) -> int:
    """Multiply-accumulates of one Conv, ConvTranspose, Gemm or MatMul node (0 otherwise)."""
    if node.op in ("Conv", "ConvTranspose"):
        w = graph.tensors[node.inputs[1]].shape
        per = node.outputs[0] if node.op == "Conv" else node.inputs[0]
        return math.prod(graph.tensors[per].shape) * math.prod(w[1:])
    if node.op in ("Gemm", "MatMul"):
        a = graph.tensors[node.inputs[0]].shape
        return math.prod(graph.tensors[node.outputs[0]].shape) * a[-1]
    return 0


def extra_macs(graph: Graph, groups: list[Group], programs: DagPrograms | None = None) -> int:
    """MACs the groups add to the unfused model (patch halos; ``programs``: as
    program_of's)."""
    nodes = {n.name: n for n in graph.nodes}
    extra = 0
    for group in groups:
        if group.mode == "dag":
            program = program_of(graph, group, programs)
            extra += program.macs - sum(macs_per_row(graph, nodes[n]) *
                                        graph.tensors[nodes[n].outputs[0]].shape[2]
                                        for n in group.nodes)
            continue
        members = [member_of(graph, nodes[name]) for name in group.nodes]
        extra += program_of(graph, group).macs - unfused_macs(members)
    return extra
