"""Independent references for the planner tests: brute-force placement and
schedule enumerators, and hypothesis strategies. Shares no code with the
allocators beyond the Buffer/Problem data types."""

from __future__ import annotations

from itertools import permutations

from hypothesis import strategies as st

from dnn64build.planner.problem import Buffer, Problem
from dnn64build.planner.schedule import Dag, Op


def brute_force_arena(problem: Problem) -> int:
    """The smallest arena (max offset + footprint) over all placements, by trying
    every capacity from the live-bytes peak up and every aligned offset."""
    bufs = list(problem.buffers)
    unit = min(b.alignment for b in bufs)
    fps = [-(-b.size // b.alignment) * b.alignment for b in bufs]
    capacity = max(  # live footprint bytes at the busiest step
        sum(fp for b, fp in zip(bufs, fps, strict=True) if b.lower <= t < b.upper)
        for t in range(max(b.upper for b in bufs))
    )
    while True:
        if _fits(bufs, fps, capacity, unit):
            return capacity
        capacity += unit


def _fits(bufs: list[Buffer], fps: list[int], capacity: int, unit: int) -> bool:
    placed: list[tuple[int, int]] = []  # (index, offset)

    def go(k: int) -> bool:
        if k == len(bufs):
            return True
        b = bufs[k]
        for offset in range(0, capacity - fps[k] + 1, b.alignment):
            clash = any(
                bufs[j].lower < b.upper and b.lower < bufs[j].upper
                and o < offset + fps[k] and offset < o + fps[j]
                for j, o in placed
            )
            if not clash:
                placed.append((k, offset))
                if go(k + 1):
                    return True
                placed.pop()
        return False

    return go(0)


def brute_force_peak(dag: Dag, alignment: int) -> int:
    """Least peak live bytes over every topological order, simulated step by step."""
    producer = {t: i for i, op in enumerate(dag.ops) for t in op.outputs}
    best = None
    for perm in permutations(range(len(dag.ops))):
        pos = {op: k for k, op in enumerate(perm)}
        if any(pos[producer[t]] > pos[i] for i, op in enumerate(dag.ops)
               for t in op.inputs if t in producer):
            continue
        peak = _simulate(dag, perm, alignment)
        best = peak if best is None else min(best, peak)
    return best


def _simulate(dag: Dag, perm: tuple[int, ...], alignment: int) -> int:
    def fp(t: str) -> int:
        return -(-dag.sizes[t] // alignment) * alignment

    last = len(perm) - 1
    peak = 0
    for step in range(len(perm)):
        live = 0
        for t in dag.sizes:
            if t in dag.inputs:
                born = 0
            else:
                born = next(k for k, i in enumerate(perm) if t in dag.ops[i].outputs)
            uses = [k for k, i in enumerate(perm) if t in dag.ops[i].inputs]
            dies = last if t in dag.outputs else max(uses + [born])
            if born <= step <= dies:
                live += fp(t)
        peak = max(peak, live)
    return peak


@st.composite
def problems(draw, max_buffers: int = 10, max_units: int = 8, alignments=(16,)) -> Problem:
    n = draw(st.integers(1, max_buffers))
    bufs = []
    for i in range(n):
        lower = draw(st.integers(0, 8))
        upper = lower + draw(st.integers(1, 5))
        alignment = draw(st.sampled_from(alignments))
        size = draw(st.integers(0, max_units * 16))
        bufs.append(Buffer(f"b{i}", lower, upper, size, alignment))
    return Problem.of(bufs)


ALIAS_KINDS = ("", "", "view", "inplace", "concat")


@st.composite
def dags(draw, max_ops: int = 8) -> Dag:
    """A random op DAG: each op reads one to three earlier tensors (or the
    input, or a constant) and writes one tensor of random size."""
    n = draw(st.integers(1, max_ops))
    sizes = {"x": draw(st.integers(1, 200))}
    tensors = ["x"]
    ops = []
    for i in range(n):
        k = draw(st.integers(1, min(3, len(tensors))))
        ins = tuple(draw(st.permutations(tensors))[:k])
        if draw(st.booleans()):
            ins += ("const",)
        kind = draw(st.sampled_from(ALIAS_KINDS))
        out = f"t{i}"
        if kind == "concat":
            sizes[out] = sum(sizes[t] for t in ins if t in sizes)
        elif kind in ("view", "inplace"):
            sizes[out] = sizes.get(ins[0], 16)
        else:
            sizes[out] = draw(st.integers(1, 200))
        ops.append(Op(f"op{i}", ins, (out,), kind))
        tensors.append(out)
    extra = draw(st.lists(st.sampled_from(tensors[1:]), max_size=2, unique=True))
    outputs = tuple(dict.fromkeys([f"t{n - 1}", *extra]))
    return Dag(tuple(ops), sizes, ("x",), outputs)


def memory_hazards(dag: Dag, plan: dict) -> list[str]:
    """Independent data-flow check of a graph plan: every tensor is live from
    its producer to its last reader, and no op writes bytes that still hold a
    tensor someone reads later, unless that write is harmless (a view writes
    nothing; an in-place op may overwrite an input it reads for the last time;
    a copy-free concat leaves its inputs' bytes alone)."""
    steps = {name: k for k, name in enumerate(plan["schedule"])}
    op_of = {op.outputs[0]: op for op in dag.ops}
    entry = {b["name"]: b for b in plan["buffers"]}
    last_step = len(plan["schedule"]) - 1
    own: dict[str, tuple[int, int]] = {}
    for t in dag.sizes:
        born = 0 if t in dag.inputs else steps[op_of[t].name]
        reads = [steps[op.name] for op in dag.ops if t in op.inputs]
        dies = last_step if t in dag.outputs else max(reads + [born])
        own[t] = (born, dies)
    problems = []
    for t, (born, dies) in own.items():
        if not entry[t]["first"] <= born or entry[t]["last"] < dies:
            problems.append(f"{t}: plan lifetime misses steps {born}..{dies}")

    def span(t: str) -> tuple[int, int]:
        return entry[t]["offset"], entry[t]["offset"] + entry[t]["size"]

    for a in dag.sizes:
        for b in dag.sizes:
            (pa, la), (pb, _) = own[a], own[b]
            if a == b or not pa < pb <= la:
                continue  # b is written while a still holds data
            (a0, a1), (b0, b1) = span(a), span(b)
            if not (a0 < b1 and b0 < a1) or not entry[a]["size"] or not entry[b]["size"]:
                continue
            op = op_of[b]
            if op.alias == "view":
                continue
            if op.alias == "inplace" and la == pb and a in op.inputs:
                continue
            if op.alias == "concat" and any(
                c in op.inputs and span(c)[0] <= a0 and a1 <= span(c)[1]
                and entry[c].get("alias_of") == entry[b].get("alias_of", b)
                for c in dag.sizes
            ):
                continue
            problems.append(f"{op.name} writes {b} over {a}, which is read until step {la}")
    return problems
