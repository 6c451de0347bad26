"""A planned graph through the emitters: the graph as the planner fused it (a fused group
is one node) and, in schedule order, what each node's emitter makes of it (lowering.py's
Lowered: its declarations and steps). What generate_model writes out (model.py) and what
the code's shape counts (shape.py) without writing it."""

from __future__ import annotations

import json
from typing import Any

from dnn64build.codegen.arena import ArenaMap, PlanMismatch
from dnn64build.codegen.fused import fused_group
from dnn64build.codegen.fused_dag import dag_group
from dnn64build.codegen.lowering import Ctx, Lowered, unsupported
from dnn64build.codegen.ops_fp32 import FP32_EMITTERS
from dnn64build.codegen.ops_int8 import INT8_EMITTERS
from dnn64build.ir.graph import Graph, Node
from dnn64build.ir.params import PARAM_INPUTS, absorb, has_pending_params
from dnn64build.planner.fusion.records import GROUP_OP, groups_from_plan
from dnn64build.planner.fusion.rewrite import apply_groups


def lower_plan(graph: Graph, plan: dict[str, Any], where: str, kernels: str = "cpu"
               ) -> tuple[Graph, ArenaMap, list[tuple[Node, Lowered]]]:
    """The graph as the planner fused it, its arena map, and every scheduled node through
    its emitter, in schedule order. ``where`` names the model in errors; ``kernels`` as
    for generate_model."""
    graph = apply_groups(graph, groups_from_plan(plan))
    try:
        arena = ArenaMap.from_plan(plan)
    except PlanMismatch as exc:
        raise ValueError(f"{where}: {exc}") from exc
    nodes = {node.name: node for node in graph.nodes}
    if sorted(arena.schedule) != sorted(nodes):
        raise ValueError(f"{where}: the plan's schedule does not list the graph's nodes")
    partner = {}  # plan.json quantize_stem: each node of a pair names the other
    for pair in plan.get("quantize_stem", {}).get("pairs", []):
        partner[pair["quantize"]], partner[pair["conv"]] = pair["conv"], pair["quantize"]
    lowered: list[tuple[Node, Lowered]] = []
    for index, name in enumerate(arena.schedule):
        node = _absorb_params(graph, nodes[name])
        ctx = Ctx(graph, arena, node, index, kernels,
                  nodes[partner[name]] if name in partner else None)
        table = INT8_EMITTERS if "int8" in node.attrs else FP32_EMITTERS
        if node.op == GROUP_OP:
            table = {GROUP_OP: dag_group if node.attrs["fusion"]["mode"] == "dag"
                     else fused_group}
        if node.op not in table:
            raise unsupported(node, "this operator" + (" in int8" if "int8" in node.attrs else ""))
        lowered.append((node, table[node.op](ctx)))
    return graph, arena, lowered


def lowering_key(plan: dict[str, Any]) -> str:
    """What lower_plan reads of ``plan``, as text: the buffers and arena (ArenaMap), the
    schedule, the fusion groups and the QuantizeLinear + stem pairs. Two plans alike in
    it lower alike."""
    read = [plan["arena_bytes"], plan["buffers"], plan["schedule"],
            plan.get("fusion", {}).get("groups"), plan.get("quantize_stem", {}).get("pairs")]
    return json.dumps(read, sort_keys=True)


def _absorb_params(graph: Graph, node: Node) -> Node:
    """Parameter inputs still on a node (see ir/params.py) become attributes if constant."""
    if not has_pending_params(node.op, node.inputs):
        return node
    params = {}
    for key, name in zip(PARAM_INPUTS[node.op], node.inputs[1:], strict=False):
        if name:
            if not graph.is_constant(name):
                raise unsupported(node, f"a computed {key!r} input")
            params[key] = graph.constants[name]
    attrs = absorb(node.op, node.attrs, params, graph.tensors[node.inputs[0]].shape,
                   graph.tensors[node.outputs[0]].shape)
    return Node(node.name, node.op, node.inputs[:1], list(node.outputs), attrs)
