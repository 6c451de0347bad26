"""The graph with each group one node: ``apply_groups`` for planning and code generation,
``fuse_dag`` for the planner's DAG of a candidate choice (no graph copied)."""

from __future__ import annotations

from dnn64build.ir.graph import Graph, Node, Tensor
from dnn64build.planner.fusion.cost import DagPrograms, program_of
from dnn64build.planner.fusion.records import (
    GROUP_OP,
    Group,
    buffer_names,
    group_name,
    streamed_inputs,
    streamed_outputs,
)
from dnn64build.planner.schedule import Dag, Op


def group_io(graph: Graph, members: list[Node]) -> tuple[list[str], str]:
    """A group's whole input tensors (read by members, produced by none) and its output."""
    made = {m.outputs[0] for m in members}
    inputs: list[str] = []
    for m in members:
        inputs += [t for t in m.inputs
                   if t and t not in made and not graph.is_constant(t) and t not in inputs]
    return inputs, members[-1].outputs[0]


def apply_groups(graph: Graph, groups: list[Group], programs: DagPrograms | None = None
                 ) -> Graph:
    """``graph`` with each group replaced by one FusedGroup node (at its first member's
    place). The node's attrs: ``fusion`` (the record), ``members`` (the member nodes).
    The intermediates stay described in ``tensors`` (for their shapes) but no node
    produces them, so no plan gives them memory. The new graph shares ``graph``'s nodes
    and tensors (neither is changed: the planner and codegen only read them), which a deep
    copy would copy for every candidate plan. ``programs``: as program_of's."""
    if not groups:
        return graph
    out = Graph(name=graph.name, inputs=list(graph.inputs), outputs=list(graph.outputs),
                tensors=dict(graph.tensors), nodes=list(graph.nodes),
                constants=dict(graph.constants))
    by_name = {n.name: n for n in out.nodes}
    first = {}
    for group in groups:
        members = [by_name[name] for name in group.nodes]
        program = program_of(out, group, programs)
        buffers = buffer_names(group, len(program.buffer_bytes))
        for name, size in zip(buffers, program.buffer_bytes, strict=True):
            out.tensors[name] = Tensor([max(size, 1)], "int8", "activation")
        consts = [t for m in members for t in m.inputs[1:] if t and out.is_constant(t)]
        xs, y = group_io(out, members)
        xs = [x for x in xs if x != group.streams]  # a streamed input is no arena tensor
        node = Node(group_name(group), GROUP_OP, [*xs, *consts], [y, *buffers],
                    {"fusion": group.record(), "members": members})
        first[members[0].name] = node
    dropped = {name for g in groups for name in g.nodes}
    out.nodes = [first.get(n.name, n) for n in out.nodes
                 if n.name in first or n.name not in dropped]
    return out


def fuse_dag(dag: Dag, graph: Graph, groups: list[Group],
             cache: dict[Group, dict[str, int]]) -> Dag:
    """``dag`` (of ``graph``) with each group one op, as ``apply_groups`` then
    ``dag_from_graph`` would give, without copying the graph. ``cache`` keeps each
    group's buffer sizes between calls on the same graph."""
    member = {name: g for g in groups for name in g.nodes}
    ops = {op.name: op for op in dag.ops}
    sizes = dict(dag.sizes)
    fused = []
    for op in dag.ops:
        group = member.get(op.name)
        if group is None:
            fused.append(op)
        elif op.name == group.nodes[0]:
            if group not in cache:
                program = program_of(graph, group)
                names = buffer_names(group, len(program.buffer_bytes))
                cache[group] = {n: max(b, 1) for n, b in zip(names, program.buffer_bytes,
                                                             strict=True)}
            buffers = cache[group]
            sizes.update(buffers)
            made = {t for n in group.nodes for t in ops[n].outputs}
            xs = tuple(dict.fromkeys(t for n in group.nodes for t in ops[n].inputs
                                     if t not in made and t in sizes and t != group.streams))
            y = () if group.emits else (ops[group.nodes[-1]].outputs[0],)
            fused.append(Op(group_name(group), xs, (*y, *buffers)))
    streamed = set(streamed_inputs(groups))
    emitted = set(streamed_outputs(groups))
    for t in streamed | emitted:
        del sizes[t]
    return Dag(tuple(fused), sizes, tuple(t for t in dag.inputs if t not in streamed),
               tuple(t for t in dag.outputs if t not in emitted))
