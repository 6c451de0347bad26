"""Fused groups: find chains of spatial ops, decide which run row-streamed or
patch by patch, and rewrite the graph so that each group is one node.

``planner: {fusion: ...}`` (docs/planner.md):

- ``none``: no group;
- ``stream``: every chain runs row-streamed (no extra MACs), bands of one row;
- ``patch``: the planner picks chain sections and grids (MCUNetV2), one group
  at a time, each the one that lowers the peak live bytes most, while the
  extra MACs stay within ``MAX_EXTRA_MACS`` of the model's; what is left of
  every chain is streamed;
- ``dag``: whole sub-DAGs between single-tensor cuts (residual blocks, dense
  blocks) row-streamed (planner/dagstream.py), no extra MACs, each member's weights
  re-read for every firing;
- ``auto``: the stream groups with the least activation + staging bytes (none, every
  chain, or chains added one at a time); the plan stage plans the other modes, with the
  input and output streamed, only when that does not fit its memory (planner/ladder.py).

``planner: {input: ...}`` (``INPUT_MODES``): ``stream`` makes the first dag group start
at the graph input and read it row by row (planner/dagstream.py), so the whole input
never occupies the arena (fusion ``dag`` or ``auto`` only); ``whole`` never does;
``auto`` (the default) streams it only under fusion ``auto``, when nothing else fits
(ladder.py).

``planner: {output: ...}`` (``OUTPUT_MODES``): ``stream`` makes the last dag group end
at the graph output and hand its rows to the caller as they are finished (an output
stage, planner/dagstream.py), so the whole output never occupies the arena; ``whole``
never does; ``auto`` (the default) only under fusion ``auto``, when nothing else fits
(after the streamed input alone).

A chain is a run of Conv / MaxPool / AveragePool nodes (batch 1, NCHW) where
each intermediate is read only by the next node and is no graph output. A
group is one node ``FusedGroup`` whose inputs are X and every member's
constants, and whose outputs are Y and the group's buffers (planned like any
tensor, live at that one step). plan.json records each group (``fusion``) so
that code generation rebuilds the same graph with ``apply_groups``.

Weights: all members' weights are staged together as one tile (they are all
used in every band or tile, and re-reading them per band would cost far more
cartridge bandwidth), so the staging area must hold the group's weights in one
half: chains are cut where their weights would pass ``weight_cap``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dnn64build.errors import UserError
from dnn64build.ir.graph import Graph, Node, Tensor
from dnn64build.planner.dagstream import (
    DagProgram,
    cuts,
    dag_program,
    dag_record,
    emit_refusal,
    find_segments,
    first_row_refusal,
    group_live_bytes,
    macs_per_row,
    min_buffer_bytes,
    step_live_bytes,
    stream_refusal,
)
from dnn64build.planner.regions import (
    Axis,
    Member,
    Program,
    patch_program,
    stream_program,
    unfused_macs,
)
from dnn64build.planner.schedule import Dag, Op

FUSION_MODES = ("none", "stream", "patch", "dag", "auto")
INPUT_MODES = ("whole", "stream", "auto")
OUTPUT_MODES = ("whole", "stream", "auto")
GROUP_OP = "FusedGroup"
SPATIAL_OPS = ("Conv", "MaxPool", "AveragePool")
MAX_EXTRA_MACS = 0.15  # patch groups may add at most this fraction of the model's MACs
GRIDS = tuple((n, n) for n in range(2, 9))
# Weights one group may stage at once (one staging half), unless staging_bytes says less.
GROUP_WEIGHT_CAP = 128 * 1024
# Longest run of segments one dag group may span. A residual block is two segments (its
# Add, its Relu): a megapixel ResNet-50 streams only as one group over its whole trunk
# (every cut tensor is megabytes), which the row-buffer bound of _dag_choice keeps cheap.
MAX_DAG_SEGMENTS = 64
# The row program of each dag group a choice weighed (a pure function of graph and group).
DagPrograms = dict["Group", DagProgram]


@dataclass(frozen=True)
class Group:
    """A fused group as plan.json records it."""

    nodes: tuple[str, ...]
    mode: str  # "stream" | "patch" | "dag" (planner/dagstream.py)
    grid: tuple[int, int] = (1, 1)  # patch: rows x columns of tiles of Y
    band_rows: int = 1  # stream: output rows per band
    streams: str = ""  # dag: the graph input it reads row by row ("" if it reads X whole)
    emits: str = ""  # dag: the graph output it hands out row by row ("" if Y is whole)

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"nodes": list(self.nodes), "mode": self.mode}
        if self.mode == "patch":
            out["grid"] = list(self.grid)
        else:
            out["band_rows"] = self.band_rows
        if self.streams:
            out["streams"] = self.streams
        if self.emits:
            out["emits"] = self.emits
        return out

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> Group:
        return cls(tuple(rec["nodes"]), rec["mode"], tuple(rec.get("grid", (1, 1))),
                   int(rec.get("band_rows", 1)), str(rec.get("streams", "")),
                   str(rec.get("emits", "")))


def ineligible(graph: Graph, node: Node) -> str:
    """Why ``node`` cannot be a member of a group ("" if it can)."""
    if node.op not in SPATIAL_OPS:
        return f"{node.op} is not one of {', '.join(SPATIAL_OPS)}"
    x, y = node.inputs[0], node.outputs[0]
    shape = graph.tensors[x].shape
    if len(shape) != 4 or shape[0] != 1:
        return "its input is not a batch-1 NCHW tensor"
    if graph.is_constant(x):
        return "its input is a constant"
    if graph.tensors[x].dtype not in ("float32", "int8") or \
            graph.tensors[y].dtype != graph.tensors[x].dtype:
        return "its tensors are not all float32 or all int8"
    if len(node.outputs) > 1 and node.outputs[1]:
        return "it has MaxPool's Indices output"
    if node.op == "Conv" and not all(graph.is_constant(t) for t in node.inputs[1:] if t):
        return "its weight or bias is not constant"
    return ""


def link_refusal(graph: Graph, readers: dict[str, list[Node]], producer: Node,
                 consumer: Node) -> str:
    """Why ``producer``'s output cannot stay inside a group feeding ``consumer`` ("" if it
    can); ``readers`` is ``graph.consumers()``."""
    t = producer.outputs[0]
    if t in graph.outputs:
        return f"its output {t!r} is a graph output"
    if len(readers.get(t, [])) != 1:
        return f"its output {t!r} is read by {len(readers.get(t, []))} nodes"
    if consumer.inputs[0] != t:
        return f"its output {t!r} is not the data input of {consumer.name!r}"
    return ""


def find_chains(graph: Graph) -> tuple[list[list[Node]], list[str]]:
    """Maximal chains (two or more nodes) in graph order, and why others are not chains."""
    readers = graph.consumers()
    in_chain: set[str] = set()
    chains: list[list[Node]] = []
    reasons: list[str] = []
    for node in graph.nodes:
        if node.name in in_chain:
            continue
        why = ineligible(graph, node)
        if why:
            if node.op in SPATIAL_OPS:
                reasons.append(f"node {node.name!r} ({node.op}): {why}")
            continue
        chain = [node]
        while True:
            nxt = readers.get(chain[-1].outputs[0], [])
            if len(nxt) != 1:
                break
            refusal = ineligible(graph, nxt[0]) or link_refusal(graph, readers, chain[-1], nxt[0])
            if refusal:
                break
            chain.append(nxt[0])
        if len(chain) >= 2:
            chains.append(chain)
            in_chain.update(n.name for n in chain)
        else:
            nxt = readers.get(node.outputs[0], [])
            detail = (ineligible(graph, nxt[0]) or link_refusal(graph, readers, node, nxt[0])
                      if len(nxt) == 1 else link_refusal(graph, readers, node, node))
            reasons.append(f"node {node.name!r} ({node.op}): cannot be fused with the next "
                           f"node: {detail}")
    return chains, reasons


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


def group_io(graph: Graph, members: list[Node]) -> tuple[list[str], str]:
    """A group's whole input tensors (read by members, produced by none) and its output."""
    made = {m.outputs[0] for m in members}
    inputs: list[str] = []
    for m in members:
        inputs += [t for t in m.inputs
                   if t and t not in made and not graph.is_constant(t) and t not in inputs]
    return inputs, members[-1].outputs[0]


def group_name(group: Group) -> str:
    return f"fused[{group.nodes[0]}..{group.nodes[-1]}]"


def buffer_names(group: Group, count: int) -> list[str]:
    return [f"{group_name(group)}.buf{k}" for k in range(count)]


def member_weight_bytes(graph: Graph, node: Node) -> int:
    """Bytes node's constants take in a staged tile, each padded to 16 (an upper bound:
    int8 layers also stage per-channel int32 multipliers and shifts)."""
    total = sum(-(-graph.constants[t].nbytes // 16) * 16
                for t in node.inputs[1:] if t and graph.is_constant(t))
    if "int8" in node.attrs and node.op == "Conv":
        total += 2 * -(-4 * graph.tensors[node.outputs[0]].shape[1] // 16) * 16
    return total


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


def split_by_weights(graph: Graph, chains: list[list[Node]], cap: int
                     ) -> tuple[list[list[Node]], list[str]]:
    """Chains cut into runs whose weights fit one staging half of ``cap`` bytes (a group's
    weights are staged at once); runs shorter than two nodes are dropped, with a reason."""
    runs, reasons = [], []
    for chain in chains:
        run: list[Node] = []
        used = 0
        for node in [*chain, None]:
            size = member_weight_bytes(graph, node) if node is not None else 0
            if node is not None and used + size <= cap:
                run.append(node)
                used += size
                continue
            if len(run) >= 2:
                runs.append(run)
            if node is not None and size > cap:
                reasons.append(f"node {node.name!r} ({node.op}): its weights ({size} bytes) "
                               f"exceed the {cap} bytes a group may stage")
                run, used = [], 0
            else:
                run, used = ([node], size) if node is not None else ([], 0)
    return runs, reasons


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


def streamed_inputs(groups: list[Group]) -> list[str]:
    """The graph inputs ``groups`` read row by row (never whole in the arena)."""
    return [g.streams for g in groups if g.streams]


def streamed_outputs(groups: list[Group]) -> list[str]:
    """The graph outputs ``groups`` hand out row by row (never whole in the arena)."""
    return [g.emits for g in groups if g.emits]


def groups_from_plan(plan: dict[str, Any]) -> list[Group]:
    return [Group.from_record(rec) for rec in plan.get("fusion", {}).get("groups", [])]


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


def _sections(chain: list[Node]) -> list[tuple[str, ...]]:
    """Every run of two or more consecutive nodes of a chain."""
    names = [n.name for n in chain]
    return [tuple(names[i:j]) for i in range(len(names)) for j in range(i + 2, len(names) + 1)]


@dataclass(frozen=True)
class Choice:
    """The groups a mode chose, and notes on what it could not do."""

    groups: list[Group]
    notes: list[str]


def choose_groups(graph: Graph, mode: str, *, peak: Callable[[list[Group]], int],
                  bound: Callable[[list[Group]], int] | None = None,
                  weight_cap: int = GROUP_WEIGHT_CAP, staging_bytes: int = 0,
                  input_mode: str = "auto", output_mode: str = "auto",
                  programs: DagPrograms | None = None) -> Choice:
    """The groups for ``mode`` (see the module doc). ``peak(groups)`` measures the graph
    with those groups (live bytes, a fast estimate for searching); ``bound(groups)``
    (default: ``peak``) the bound its plan will have, for auto's final pick among a few
    candidates; ``staging_bytes`` is the weight staging without groups (auto weighs
    a group's staging against the activation bytes it saves). Raises UserError when
    ``stream`` or ``patch`` is asked for and no chain exists; ``patch`` that finds no
    patch group worth it keeps the streamed plan and says so in a note. ``input_mode``
    (INPUT_MODES): ``stream`` raises UserError, naming the node and why, when the graph
    input cannot be streamed or ``mode`` is not dag or auto; ``output_mode``
    (OUTPUT_MODES) likewise for the graph output. ``programs`` keeps the row programs
    of the dag groups tried, for later calls on the same graph (the plan stage's options)."""
    if mode not in FUSION_MODES:
        raise ValueError(f"unknown fusion mode {mode!r}; expected one of {FUSION_MODES}")
    if input_mode not in INPUT_MODES:
        raise ValueError(f"unknown input mode {input_mode!r}; expected one of {INPUT_MODES}")
    if output_mode not in OUTPUT_MODES:
        raise ValueError(f"unknown output mode {output_mode!r}; expected one of {OUTPUT_MODES}")
    asked = [(side, refusal) for side, how, refusal in
             (("input", input_mode, input_refusal), ("output", output_mode, output_refusal))
             if how == "stream"]
    for side, _ in asked:
        if mode not in ("dag", "auto"):
            raise UserError(f"planner {side} 'stream' needs fusion 'dag' or 'auto', not "
                            f"{mode!r}: the {side} is streamed through a dag group",
                            where=f"model {graph.name}",
                            hint=f"use planner: {{fusion: dag, {side}: stream}}, "
                                 f"or {side}: whole")
    if mode == "none":
        return Choice([], [])
    chains, reasons = find_chains(graph)
    chains, heavy = split_by_weights(graph, chains, weight_cap)
    reasons += heavy
    if asked:
        for side, refusal in asked:
            why = refusal(graph)
            if why:
                raise UserError(f"planner {side} 'stream' cannot apply to this model: {why}",
                                where=f"model {graph.name}",
                                hint=f"use planner: {{{side}: whole}} (or auto)")
        return _dag_choice(graph, chains, peak, bound or peak, stream=input_mode == "stream",
                           emit=output_mode == "stream", programs=programs)
    if mode == "dag":
        return _dag_choice(graph, chains, peak, bound or peak, programs=programs)
    if mode == "auto":  # the other modes are options of the plan stage's ladder (ladder.py)
        picked = (_cheapest_stream(graph, chains, peak, bound or peak, staging_bytes)
                  if chains else [])
        return Choice(picked, [] if chains else reasons[:5])
    if not chains:
        raise refuse(mode, graph, reasons)
    streamed = _with_stream(chains, [])
    if mode == "stream":
        return Choice(streamed, [])
    limit = MAX_EXTRA_MACS * model_macs(graph)
    programs: dict[Group, int] = {}

    def extra(groups: list[Group]) -> int:
        for g in groups:
            if g not in programs:
                programs[g] = extra_macs(graph, [g])
        return sum(programs[g] for g in groups)

    options = [Group(section, "patch", grid) for chain in chains
               for section in _sections(chain) for grid in GRIDS]
    patches = _greedy(chains, options, lambda gs: peak(_with_stream(chains, gs)), extra, limit)
    notes = []
    if not patches:
        notes.append(f"no patch group lowers the peak of {peak(streamed)} bytes within "
                     f"{MAX_EXTRA_MACS:.0%} extra MACs: chains are streamed only")
    return Choice(_with_stream(chains, patches), notes)


def input_refusal(graph: Graph) -> str:
    """Why the graph input cannot be streamed into a dag group ("" if it can): the
    model needs one graph input, a cut right after it and row-wise nodes up to the next
    cut (the first group's members)."""
    if len(graph.inputs) != 1:
        return f"the model has {len(graph.inputs)} graph inputs (streaming needs one)"
    at = cuts(graph)
    if not at or at[0][0] != 0 or len(at) < 2:
        return f"the graph input {graph.inputs[0]!r} is read past the next single-tensor cut"
    first = graph.nodes[:at[1][0]]
    return first_row_refusal(graph, first) or stream_refusal(graph, first)


def output_refusal(graph: Graph) -> str:
    """Why the graph output cannot be handed out row by row by the last dag group (""
    if it can): the model needs one graph output, made by its last node, a cut right
    before it and row-wise nodes from that cut on (the last group's members)."""
    if len(graph.outputs) != 1:
        return f"the model has {len(graph.outputs)} graph outputs (streaming needs one)"
    at = cuts(graph)
    y = graph.outputs[0]
    if len(at) < 2 or at[-1] != (len(graph.nodes), y):
        return f"the graph output {y!r} is not the last tensor of the graph order"
    last = graph.nodes[at[-2][0]:]
    return first_row_refusal(graph, last) or emit_refusal(graph, last)


def _dag_choice(graph: Graph, chains: list[list[Node]], peak: Callable[[list[Group]], int],
                bound: Callable[[list[Group]], int], stream: bool = False,
                emit: bool = False, programs: DagPrograms | None = None) -> Choice:
    """``dag`` groups: a dynamic programme over the cuts (dagstream.cuts) of the graph
    order. At a cut only one tensor is live, so the peak is the largest of the peaks
    between consecutive chosen cuts: of a dag group (X + Y + its buffers) over a run of
    row-wise segments (at most ``MAX_DAG_SEGMENTS``), or of the unfused nodes. The
    programme minimises the peak, then the nodes fused; the result is the better (by
    ``bound``) of those groups alone and with every chain they leave out streamed.
    ``stream`` (``input_refusal`` says it can): the first group starts at the graph input
    and streams it (even a group of one node); ``emit`` (``output_refusal`` says it can):
    the last group ends at the graph output and hands it out row by row."""
    found, why_not = find_segments(graph)
    segments = set(found)
    if not segments:
        raise refuse("dag", graph, why_not or ["no node lies between two single-tensor "
                                               "cuts (every tensor is read far ahead)"])
    at = [k for k, _ in cuts(graph)]
    live = step_live_bytes(graph)
    nodes = graph.nodes
    # best[i]: (peak, fused nodes, groups) of the graph up to cut i
    best: list[tuple[int, int, list[Group]]] = [(0, 0, [])]
    streams = graph.inputs[0] if stream else ""
    if stream:  # the first segment lies in the group that streams the input
        segments.add((at[0], at[1]))
    if emit:  # and the last one in the group that hands out the output
        segments.add((at[-2], at[-1]))
    rows = [min_buffer_bytes(graph, n) for n in nodes]
    for i in range(1, len(at)):
        options = [] if (stream and i == 1) or (emit and i == len(at) - 1) else [
            (max(best[i - 1][0], max(live[at[i - 1]:at[i]], default=0)),
             best[i - 1][1], best[i - 1][2])]
        out = graph.outputs[0] if emit and i == len(at) - 1 else ""
        y = 0 if out else group_live_bytes(graph, nodes[at[i] - 1:at[i]], None, streamed=True)
        held = -rows[at[i] - 1]  # Y is whole or the output stage's: not one of them
        for j in range(i - 1, max(i - 1 - MAX_DAG_SEGMENTS, -1), -1):
            if (at[j], at[j + 1]) not in segments:
                break
            # Y and a row of every member's own buffer: a bound on every group ending
            # at cut i that grows as it starts earlier, so no earlier start can win.
            held += sum(rows[at[j]:at[j + 1]])
            if options and y + held > min(o[0] for o in options):
                break
            members = nodes[at[j]:at[i]]
            here = streams if j == 0 else ""
            if len(members) < 2 and not here and not out:
                continue
            whole = group_live_bytes(graph, members, None, streamed=bool(here),
                                     emitted=bool(out))
            known = min((o[0] for o in options), default=None)
            if known is not None and max(best[j][0], whole + held) > known:
                continue  # X, Y and a row of each buffer already cost more than a known option
            group = Group(tuple(n.name for n in members), "dag", streams=here, emits=out)
            program = None if programs is None else programs.get(group)
            if program is None:
                # a program whose buffers pass what a known option costs is dropped half-way
                program = dag_program(graph, members, here, bool(out),
                                      limit=None if known is None else known - whole)
                if program is None:
                    continue
                if programs is not None:
                    programs[group] = program
            cost = group_live_bytes(graph, members, program, streamed=bool(here),
                                    emitted=bool(out))
            options.append((max(best[j][0], cost), best[j][1] + len(members),
                            [*best[j][2], group]))
        best.append(min(options, key=lambda o: o[:2]))
    chosen = best[-1][2]
    if not chosen:
        return Choice([], [f"no dag group lowers the peak of {peak([])} bytes"])
    return Choice(min([chosen, _with_stream(chains, chosen)], key=lambda gs: (bound(gs), len(gs))),
                  [])


def _cheapest_stream(graph: Graph, chains: list[list[Node]], peak: Callable[[list[Group]], int],
                     bound: Callable[[list[Group]], int], staging_bytes: int) -> list[Group]:
    """Stream groups with the least activation + staging bytes: none, every chain, or
    chains added one at a time while that total drops (a group stages all its weights
    at once, so on a small model streaming can cost more staging than it saves). The
    search uses ``peak``; the three candidates are compared by ``bound``."""
    def total(groups: list[Group]) -> int:
        return peak(groups) + groups_staging_bytes(graph, groups, staging_bytes)

    candidates = [[], _with_stream(chains, [])]
    chosen: list[Group] = []
    options = [Group(tuple(n.name for n in chain), "stream") for chain in chains]
    while True:
        trials = [[*chosen, o] for o in options if o not in chosen]
        best = min(trials, key=total, default=None)
        if best is None or total(best) >= total(chosen):
            break
        chosen = best
    candidates.append(sorted(chosen, key=lambda g: g.nodes))
    return min(candidates, key=lambda gs: (
        bound(gs) + groups_staging_bytes(graph, gs, staging_bytes), len(gs)))


def _with_stream(chains: list[list[Node]], patches: list[Group]) -> list[Group]:
    """``patches`` plus a stream group for every run of two or more chain nodes they
    leave out (streaming costs no MACs)."""
    taken = {name for g in patches for name in g.nodes}
    groups = list(patches)
    for chain in chains:
        run: list[str] = []
        for name in [n.name for n in chain] + [""]:
            if name and name not in taken:
                run.append(name)
                continue
            if len(run) >= 2:
                groups.append(Group(tuple(run), "stream"))
            run = []
    return sorted(groups, key=lambda g: g.nodes)


def _greedy(chains: list[list[Node]], options: list[Group],
            peak: Callable[[list[Group]], int], extra: Callable[[list[Group]], int],
            mac_limit: float) -> list[Group]:
    """Patch groups added one at a time, each the option that lowers the peak most (fewest
    extra MACs on a tie) among those clear of the groups chosen so far, until none lowers
    it."""
    chosen: list[Group] = []
    best_peak = peak(chosen)
    while True:
        taken = {name for g in chosen for name in g.nodes}
        best: tuple[int, int, list[Group]] | None = None
        for option in options:
            if taken.intersection(option.nodes):
                continue
            trial = [*chosen, option]
            cost = extra(trial)
            if cost > mac_limit:
                continue
            value = peak(trial)
            if value < best_peak and (best is None or (value, cost) < best[:2]):
                best = (value, cost, trial)
        if best is None:
            return chosen
        best_peak, _, chosen = best


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


def refuse(mode: str, graph: Graph, reasons: list[str]) -> UserError:
    shown = "; ".join(reasons[:5]) + (f"; and {len(reasons) - 5} more" if len(reasons) > 5
                                      else "")
    return UserError(
        f"planner fusion {mode!r} cannot apply to this model: "
        f"{shown or 'it has no Conv, MaxPool or AveragePool node'}",
        where=f"model {graph.name}",
        hint="use planner: {fusion: auto} (fuses where it can) or {fusion: none}")
