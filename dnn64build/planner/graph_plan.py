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
from typing import Any

import numpy as np

from dnn64build.errors import UserError
from dnn64build.ir.graph import Graph, Node
from dnn64build.ir.ops import ACTIVATION_OPS, VIEW_OPS
from dnn64build.planner.dagplan import PlanError, order_problem, plan_dag
from dnn64build.planner.exact import WORK_BUDGET, ExactParams
from dnn64build.planner.fusion import (
    GROUP_WEIGHT_CAP,
    Group,
    apply_groups,
    choose_groups,
    fuse_dag,
    fusion_record,
)
from dnn64build.planner.problem import lower_bound
from dnn64build.planner.schedule import EXPANSION_BUDGET, Dag, Op, peak_bytes, schedule

ELEMENTWISE_OPS = frozenset({
    "Add", "Sub", "Mul", "Div", *ACTIVATION_OPS, "Floor", "Ceil", "BatchNormalization",
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


def dag_from_graph(graph: Graph) -> Dag:
    sizes = {
        name: tensor_bytes(t.shape, t.dtype)
        for name, t in graph.tensors.items()
        if t.kind != "constant"
    }
    ops = tuple(
        Op(node.name, tuple(t for t in node.inputs if t), tuple(node.outputs),
           _alias_kind(node, graph), _inplace_inputs(node, graph))
        for node in graph.nodes
    )
    return Dag(ops, sizes, tuple(graph.inputs), tuple(graph.outputs))


def plan_graph(
    graph: Graph,
    *,
    algorithm: str = "auto",
    scheduler: str = "auto",
    alignment: int = 16,
    capacity: int | None = None,
    work_budget: int = WORK_BUDGET,
    expansion_budget: int = EXPANSION_BUDGET,
    deadline_s: float | None = None,
    timings: bool = True,
    fusion: str = "none",
    fusion_budget: int | None = None,
    groups: list[Group] | None = None,
    fusion_weight_cap: int = GROUP_WEIGHT_CAP,
    fusion_staging: int = 0,
) -> dict[str, Any]:
    """plan.json content for ``graph`` (see dnn64build.planner.planfile).

    The searches stop on work budgets (``work_budget`` units for the exact
    placement, ``expansion_budget`` for the schedule search), so with
    ``timings=False`` (no seconds in the file) the same graph and arguments
    give a byte-identical plan on any machine. ``deadline_s`` is an opt-in
    wall-clock limit that gives up that guarantee. Raises UserError when no
    plan fits ``capacity``.

    ``fusion`` (none | stream | patch | auto, see planner/fusion.py) fuses chains
    into groups first; ``fusion_budget`` is the activation bytes ``auto`` must fit
    before it tries patch groups (None: never); ``groups`` fixes the groups instead
    of choosing them (tests, benchmarks); ``fusion_weight_cap`` bounds the weight bytes
    of one group (one staging half); ``fusion_staging`` is the staging size without
    groups (what ``auto`` weighs a group's staging against). The plan then also holds
    ``op_bound_bytes`` (the lower bound of the unfused graph), ``extra_macs`` and ``fusion``
    (the mode, each group with its buffers and extra MACs, the model's MACs).
    """
    base = dag_from_graph(graph)
    cache: dict[Group, dict[str, int]] = {}

    def peak(candidate: list[Group]) -> int:
        dag = fuse_dag(base, graph, candidate, cache)
        return peak_bytes(dag, range(len(dag.ops)), alignment)

    def bound(candidate: list[Group]) -> int:
        """The lower bound plan_dag will reach: the scheduler's order, aliases grouped."""
        dag = fuse_dag(base, graph, candidate, cache)
        order = schedule(dag, scheduler, alignment=alignment,
                         expansion_budget=expansion_budget).order
        index = {op.name: i for i, op in enumerate(dag.ops)}
        problem = order_problem(dag, [index[n] for n in order], alignment)[2]
        return lower_bound(problem).bytes

    fits = None if fusion_budget is None else (lambda gs: bound(gs) <= fusion_budget)
    notes: list[str] = []
    if groups is None:
        choice = choose_groups(graph, fusion, peak=peak, bound=bound, fits=fits,
                               weight_cap=fusion_weight_cap, staging_bytes=fusion_staging)
        groups, notes = choice.groups, choice.notes
    else:
        fusion = "given"
    try:
        plan = plan_dag(
            dag_from_graph(apply_groups(graph, groups)), algorithm=algorithm,
            scheduler=scheduler, alignment=alignment, capacity=capacity,
            exact_params=ExactParams(work_budget=work_budget),
            expansion_budget=expansion_budget, deadline_s=deadline_s, timings=timings,
        )
    except PlanError as exc:
        raise UserError(
            str(exc), where=f"model {graph.name}",
            hint="use a target with more memory (Expansion Pak), or a smaller model",
        ) from exc
    op_bound = plan["lower_bound_bytes"]
    if groups:  # the whole-tensor bound, from the unfused graph's own schedule
        op_bound = plan_dag(dag_from_graph(graph), algorithm="greedy_by_size",
                            scheduler=scheduler, alignment=alignment,
                            expansion_budget=expansion_budget, timings=False)["lower_bound_bytes"]
    plan["op_bound_bytes"] = op_bound
    plan["fusion"] = {**fusion_record(graph, fusion, groups), "notes": notes}
    plan["extra_macs"] = plan["fusion"]["extra_macs"]  # MACs the groups add (patch halos)
    return plan
