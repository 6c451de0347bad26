"""Which groups a ``fusion`` mode chooses (see the package doc), and why a graph input or
output cannot be streamed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dnn64build.errors import UserError
from dnn64build.ir.graph import Graph, Node
from dnn64build.planner.dagstream import (
    cuts,
    dag_program,
    emit_refusal,
    find_segments,
    first_row_refusal,
    group_live_bytes,
    min_buffer_bytes,
    step_live_bytes,
    stream_refusal,
)
from dnn64build.planner.fusion.chains import GROUP_WEIGHT_CAP, find_chains, split_by_weights
from dnn64build.planner.fusion.cost import (
    DagPrograms,
    extra_macs,
    groups_staging_bytes,
    model_macs,
)
from dnn64build.planner.fusion.records import FUSION_MODES, INPUT_MODES, OUTPUT_MODES, Group

MAX_EXTRA_MACS = 0.15  # patch groups may add at most this fraction of the model's MACs
GRIDS = tuple((n, n) for n in range(2, 9))
# Longest run of segments one dag group may span. A residual block is two segments (its
# Add, its Relu): a megapixel ResNet-50 streams only as one group over its whole trunk
# (every cut tensor is megabytes), which the row-buffer bound of _dag_choice keeps cheap.
MAX_DAG_SEGMENTS = 64


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
    """The groups for ``mode`` (see the package doc). ``peak(groups)`` measures the graph
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
    if mode == "auto":  # the other modes are options of the ladder (ladder.py)
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


def _sections(chain: list[Node]) -> list[tuple[str, ...]]:
    """Every run of two or more consecutive nodes of a chain."""
    names = [n.name for n in chain]
    return [tuple(names[i:j]) for i in range(len(names)) for j in range(i + 2, len(names) + 1)]


def refuse(mode: str, graph: Graph, reasons: list[str]) -> UserError:
    shown = "; ".join(reasons[:5]) + (f"; and {len(reasons) - 5} more" if len(reasons) > 5
                                      else "")
    return UserError(
        f"planner fusion {mode!r} cannot apply to this model: "
        f"{shown or 'it has no Conv, MaxPool or AveragePool node'}",
        where=f"model {graph.name}",
        hint="use planner: {fusion: auto} (fuses where it can) or {fusion: none}")
