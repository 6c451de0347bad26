"""Plan an IR graph (``dnn64build.ir.Graph``): derive the op DAG, then plan it.

Only activations (graph inputs, node outputs) live in the arena; constants do
not. A tensor's bytes are ``prod(shape) * dtype size``. Alias kinds per node:

- "view": ``attrs["view"]`` is true, or the op only reinterprets its input
  (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout);
- "inplace": element-wise ops (the output index reads the same input index),
  over an input of exactly the output's shape and dtype;
- "concat": a Concat whose inputs are contiguous chunks of the output, i.e.
  every dimension before the axis is 1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from dnn64build.errors import UserError
from dnn64build.ir.graph import Graph, Node
from dnn64build.ir.ops import ACTIVATION_OPS, VIEW_OPS
from dnn64build.planner.dagplan import PlanError, PlanParams, plan_dag, scheduled_problem
from dnn64build.planner.fusion.chains import GROUP_WEIGHT_CAP
from dnn64build.planner.fusion.cost import DagPrograms, fusion_record
from dnn64build.planner.fusion.policy import choose_groups
from dnn64build.planner.fusion.records import GROUP_OP, Group, streamed_inputs, streamed_outputs
from dnn64build.planner.fusion.rewrite import apply_groups, fuse_dag
from dnn64build.planner.problem import lower_bound
from dnn64build.planner.schedule import Dag, Op, peak_bytes

ELEMENTWISE_OPS = frozenset({
    "Add", "Sub", "Mul", "Div", *ACTIVATION_OPS, "Floor", "Ceil", "BatchNormalization",
    "PRelu", "Max", "Min", "Pow",
})


def tensor_bytes(shape: list[int], dtype: str) -> int:
    return math.prod(shape) * np.dtype(dtype).itemsize


def _alias_kind(node: Node, graph: Graph) -> str:
    if node.attrs.get("view") is True or node.op in VIEW_OPS:
        return "view"
    if node.op in ELEMENTWISE_OPS:
        return "inplace"
    if node.op == "Concat" and node.outputs:
        shape = graph.tensors[node.outputs[0]].shape
        axis = node.attrs.get("axis", 0) % max(len(shape), 1)
        return "concat" if math.prod(shape[:axis]) == 1 else ""
    return ""


def _inplace_inputs(node: Node, graph: Graph) -> tuple[str, ...] | None:
    """Element-wise inputs with the output's exact shape and dtype (a broadcast
    operand, or a same-size one of another rank, is never overwritten)."""
    if not node.outputs or node.op not in ELEMENTWISE_OPS:
        return None
    out = graph.tensors[node.outputs[0]]
    return tuple(
        t for t in node.inputs
        if t and graph.tensors[t].shape == out.shape and graph.tensors[t].dtype == out.dtype
    )


def dag_from_graph(graph: Graph, pairs: Sequence[tuple[str, str]] = ()) -> Dag:
    """The op DAG of ``graph``; a graph input a fused group streams (``streams`` in its
    record) or a graph output it hands out (``emits``) is no arena tensor: its rows
    live in the group's buffers. For each (QuantizeLinear, Conv) of ``pairs`` the Conv's
    op also reads the QuantizeLinear's float input, which so stays alive (and apart from
    the Conv's output) through it: the Conv's call quantizes it as it goes."""
    also_reads = {conv: q for q, conv in pairs}
    by_name = {node.name: node for node in graph.nodes}
    streamed = {node.attrs["fusion"].get(key) for node in graph.nodes
                if node.op == GROUP_OP for key in ("streams", "emits")}
    sizes = {
        name: tensor_bytes(t.shape, t.dtype)
        for name, t in graph.tensors.items()
        if t.kind != "constant" and name not in streamed
    }
    ops = tuple(
        Op(node.name, tuple(t for t in node.inputs if t) + (
            (by_name[also_reads[node.name]].inputs[0],) if node.name in also_reads else ()),
           tuple(t for t in node.outputs if t not in streamed),
           _alias_kind(node, graph), _inplace_inputs(node, graph))
        for node in graph.nodes
    )
    return Dag(ops, sizes, tuple(t for t in graph.inputs if t not in streamed),
               tuple(t for t in graph.outputs if t not in streamed))


def plan_graph(
    graph: Graph,
    params: PlanParams | None = None,
    *,
    fusion: str = "none",
    groups: list[Group] | None = None,
    fusion_weight_cap: int = GROUP_WEIGHT_CAP,
    fusion_staging: int = 0,
    input_mode: str = "auto",
    output_mode: str = "auto",
    pairs: Sequence[tuple[str, str]] = (),
    programs: DagPrograms | None = None,
) -> dict[str, Any]:
    """plan.json content for ``graph`` (see dnn64build.planner.planfile), planned as
    ``params`` say (default PlanParams(); see plan_dag). Raises UserError when no plan
    fits ``params.capacity``.

    ``fusion`` (none | stream | patch | dag | auto, see planner/fusion/) fuses chains
    into groups first (``auto``: the cheapest stream groups; the plan stage's ladder,
    planner/fusion/search.py, plans the other modes when they do not fit); ``groups`` fixes
    the groups instead of choosing them (tests, benchmarks); ``fusion_weight_cap``
    bounds the weight bytes of one group (one staging half); ``fusion_staging`` is the
    staging size without groups (what ``auto`` weighs a group's staging against);
    ``input_mode`` (whole | stream | auto, planner/fusion/): ``stream`` streams the
    graph input into the first dag group; ``output_mode`` (likewise) hands the graph
    output out row by row from the last one. The plan then also holds
    ``op_bound_bytes`` (the lower bound of the unfused graph), ``extra_macs`` and ``fusion``
    (the mode, each group with its buffers and extra MACs, the model's MACs).

    ``pairs``: (QuantizeLinear, Conv) nodes codegen may run as one call (codegen's
    quantize_stem_pairs); those outside fused groups are planned with the float input
    alive through the Conv (dag_from_graph) and recorded in ``quantize_stem``.
    ``programs``: dag row programs kept between calls on the same graph (choose_groups).
    """
    params = params or PlanParams()
    programs = {} if programs is None else programs
    base = dag_from_graph(graph)
    cache: dict[Group, dict[str, int]] = {}

    def peak(candidate: list[Group]) -> int:
        dag = fuse_dag(base, graph, candidate, cache)
        return peak_bytes(dag, range(len(dag.ops)), params.alignment)

    def bound(candidate: list[Group]) -> int:
        """The lower bound plan_dag will reach: the scheduler's order, aliases grouped."""
        problem = scheduled_problem(fuse_dag(base, graph, candidate, cache), params)[3]
        return lower_bound(problem).bytes

    notes: list[str] = []
    if groups is None:
        choice = choose_groups(graph, fusion, peak=peak, bound=bound,
                               weight_cap=fusion_weight_cap, staging_bytes=fusion_staging,
                               input_mode=input_mode, output_mode=output_mode,
                               programs=programs)
        groups, notes = choice.groups, choice.notes
    else:
        fusion = "given"
    fused = apply_groups(graph, groups, programs)
    kept, pair_notes = _unfused_pairs(fused, pairs)
    try:
        plan = plan_dag(dag_from_graph(fused, kept), params)
    except PlanError as exc:
        raise UserError(
            str(exc), where=f"model {graph.name}",
            hint="use a target with more memory (Expansion Pak), or a smaller model",
        ) from exc
    op_bound = plan["lower_bound_bytes"]
    if groups:  # the whole-tensor bound, from the unfused graph's own schedule
        unfused = replace(params, algorithm="greedy_by_size", capacity=None, deadline_s=None)
        op_bound = plan_dag(dag_from_graph(graph), unfused)["lower_bound_bytes"]
    plan["op_bound_bytes"] = op_bound
    plan["fusion"] = {**fusion_record(graph, fusion, groups, programs), "notes": notes}
    plan["extra_macs"] = plan["fusion"]["extra_macs"]  # MACs the groups add (patch halos)
    # Graph inputs never whole in the arena: a dag group reads their rows (checker.py).
    plan["streamed_inputs"] = streamed_inputs(groups)
    # Graph outputs never whole in the arena: a dag group hands out their rows.
    plan["streamed_outputs"] = streamed_outputs(groups)
    plan["quantize_stem"] = {"pairs": [_pair_record(fused, q, conv) for q, conv in kept],
                             "notes": pair_notes}
    return plan


def _unfused_pairs(fused: Graph, pairs: Sequence[tuple[str, str]]
                   ) -> tuple[list[tuple[str, str]], list[str]]:
    """The pairs both of whose nodes stay nodes of ``fused`` (not in a group), and a note
    for each other one."""
    names = {node.name for node in fused.nodes}
    kept = [(q, conv) for q, conv in pairs if q in names and conv in names]
    notes = [f"not paired: {q!r} and {conv!r}, one of them in a fused group"
             for q, conv in pairs if (q, conv) not in kept]
    return kept, notes


def _pair_record(graph: Graph, quantize: str, conv: str) -> dict[str, str]:
    """plan.json's record of a pair: its nodes, the float input that lives through the
    Conv and the Conv's output, which must not share its bytes (planner/checker.py)."""
    nodes = {node.name: node for node in graph.nodes}
    return {"quantize": quantize, "conv": conv, "float_input": nodes[quantize].inputs[0],
            "output": nodes[conv].outputs[0]}
