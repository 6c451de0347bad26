"""Row streaming through a sub-DAG (``dag`` groups): residual Adds, activations,
Concats and stride-2 branches inside one fused group, no extra multiply-accumulates.

A *segment* of the graph order lies between two *cuts*: positions where exactly one
activation tensor is live (a residual block's input or output, a stem's output). A
group is a run of segments whose nodes are all *row-wise*: output row r depends on a
window of rows of each input (Conv, MaxPool, AveragePool) or on row r of each input
(Add and Mul of two same-shape activations or by a per-channel constant, activations,
channel Concat, the QuantizeLinear of a float32 graph input to int8, the
DequantizeLinear of an int8 tensor to a float32 graph output) or on rows ``floor(v)``
and ``floor(v) + 1`` of ``v = (r + 0.5) / scale - 0.5`` (a bilinear half-pixel Resize:
``RowTaps``). The
group's input X (the tensor at its first cut) and its output Y (the tensor at its last
cut) exist whole; every other tensor of the group lives in a *row buffer* holding only
the rows its consumers still need.

The program is depth-first and pull-driven, one row at a time: to compute row r of Y,
every input row its window needs is computed first (recursively, each tensor's rows in
order), so a tensor's buffer holds from the lowest row any consumer will still read
up to its newest row: a 3x3 consumer's three rows, a skip connection's rows the Add
has not reached yet, the two rows a stride-2 window advances by. Consecutive rows of
one member are merged into one *firing*. Before a firing writes a buffer, the rows no
longer needed are dropped (``keep``: the buffer is re-packed, compact, rows
``[lo, hi)`` of every channel). An element-wise stage that is the only reader of a
buffered input of its shape and type writes over that input's rows in its buffer.

A group that starts at the graph input may *stream* it (``planner: {input: stream}``):
X then lives in a row buffer too, filled by an input stage (stage 0, no inputs, named
``input <X>``) whose firings fetch just the rows the group's first members need, from
the cartridge in a ROM or from the game's row callback in a library.

Symmetrically, a group that ends at a graph output may *emit* it (``planner: {output:
stream}``): Y then lives in a row buffer too, drained by an output stage (the last
stage, named ``output <Y>``, reading Y, writing no tensor) whose firings hand each
finished row of Y to the caller (printed by the ROM program, the game's row callback
in a library), once and in order, so the whole output never occupies the arena.

plan.json records each firing (member, rows, the held range of its output buffer
before and after), so the independent checker (planner/checker.py) can replay it:
every input row a firing reads is held and not yet overwritten, every row is computed
once, in order, and no buffer holds more rows than its size allows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import overload

import numpy as np

from dnn64build.ir.graph import Graph, Node
from dnn64build.ir.ops import ACTIVATION_OPS
from dnn64build.planner.regions import Axis, Span

WINDOW_OPS = ("Conv", "MaxPool", "AveragePool", "Resize")
ROW_OPS = ("Add", "Mul", *ACTIVATION_OPS, "Concat", "QuantizeLinear", "DequantizeLinear")
# the type a conversion's input has (other row ops read their output's type)
_CONVERTS_FROM = {"QuantizeLinear": "float32", "DequantizeLinear": "int8"}


RESIZE_MODES = ("half_pixel", "pytorch_half_pixel")  # coordinate modes a row Resize takes
MAX_LEAD_ROWS = 7  # rows before the two blended ones a one-row Resize call may start at
FRACTION_SLACK = 2.0 ** -22  # float32: how far a one-row call's blend fraction may be off


@dataclass(frozen=True)
class RowTaps:
    """The row axis of a bilinear Resize: output row r is one call of the whole-tensor
    kernel on input rows ``[first[r], first[r] + count[r])`` to one output row, with
    half-pixel coordinates and the float32 scale ``scale[r]`` that makes that call blend
    the same two rows with the same fraction as the whole Resize (``resize_row_taps``)."""

    first: tuple[int, ...]
    count: tuple[int, ...]
    scale: tuple[float, ...]

    def needed(self, out: Span) -> Span:
        lo, hi = out
        if hi <= lo:
            return (0, 0)
        return (min(self.first[lo:hi]),
                max(f + n for f, n in zip(self.first[lo:hi], self.count[lo:hi], strict=True)))


def _kernel_tap(o: int, scale: np.float32, size_in: int) -> tuple[int, np.float32]:
    """(i0, fraction) of output row o as kernels/dnn64_resize.c computes them in float32
    for half-pixel coordinates: v = (o + 0.5f) / scale - 0.5f clamped to [0, in - 1]."""
    f32 = np.float32
    v = (f32(o) + f32(0.5)) / scale - f32(0.5)
    v = min(max(v, f32(0)), f32(size_in - 1))
    return int(v), f32(v - f32(int(v)))


def _q11(f: np.float32) -> int:
    """The int8 kernel's Q11 weight of a fraction: (int32_t)(f * 2048.0f + 0.5f)."""
    return int(f * np.float32(2048) + np.float32(0.5))


def _one_row_call(i0: int, f: np.float32, same: Callable[[np.float32], bool]
                  ) -> tuple[int, np.float32] | None:
    """(j, s): a half-pixel call on rows [i0 - j, i0 + 2) to one output row with scale s
    blends rows i0 and i0 + 1 with a fraction ``same`` accepts (None if no j <= i0,
    MAX_LEAD_ROWS has one near 0.5 / (j + f + 0.5))."""
    f32 = np.float32
    for j in range(min(i0, MAX_LEAD_ROWS) + 1):
        s = f32(0.5 / (j + float(f) + 0.5))
        for _ in range(8):  # the quotient moves by about an ulp per step of s
            got_i0, got_f = _kernel_tap(0, s, j + 2)
            if got_i0 == j and same(got_f):
                return j, s
            v = f32(0.5) / s - f32(0.5)
            s = np.nextafter(s, f32(0) if v < j + f else f32(np.inf), dtype=np.float32)
    return None


# Cached: the fusion search asks again for every candidate group holding the Resize.
@cache
def resize_row_taps(scale: float, size_in: int, size_out: int, int8: bool
                    ) -> RowTaps | None:
    """Each output row's one-row kernel call, or None when some row has none. Row r of
    the whole Resize blends rows i0 and i0 + 1 with fraction f (row i0 alone where f is
    0: a call on that row with scale 1). A call on rows [i0 - j, i0 + 2) to one output
    row computes v' = 0.5f / s - 0.5f, and a scale s is searched for whose fraction
    v' - j the kernel turns into the same blend: int8, the same Q11 weight (so the same
    values, bit for bit); float32, f itself where some j <= i0 has one, else the nearest
    fraction within FRACTION_SLACK of f (rows near the top: the blend then differs by at
    most that share of the two rows' difference, far below the float32 tolerance)."""
    f32 = np.float32
    first, count, scales = [], [], []
    for o in range(size_out):
        i0, f = _kernel_tap(o, f32(scale), size_in)
        if f == 0:
            first.append(i0)
            count.append(1)
            scales.append(1.0)
            continue
        if int8:
            found = _one_row_call(i0, f, lambda g, f=f: _q11(g) == _q11(f))
        else:
            found = _one_row_call(i0, f, lambda g, f=f: g == f) or _one_row_call(
                i0, f, lambda g, f=f: abs(float(g) - float(f)) <= FRACTION_SLACK)
        if found is None:
            return None
        first.append(i0 - found[0])
        count.append(found[0] + 2)
        scales.append(float(found[1]))
    return RowTaps(tuple(first), tuple(count), tuple(scales))


@dataclass(frozen=True)
class Stage:
    """One member of a dag group: the activation tensors it reads, the one it writes, and
    (window ops) its row axis; row-wise ops read row r of each input for output row r."""

    name: str
    inputs: tuple[str, ...]
    output: str
    window: Axis | RowTaps | None

    def needed(self, rows: Span) -> Span:
        return self.window.needed(rows) if self.window else rows


@dataclass(frozen=True)
class Firing:
    """Stage ``stage`` computes output rows ``rows``; its output buffer held ``before``
    and holds ``after`` (rows ``[after[0], max(before[1], rows[1]))``: an element-wise
    stage writing over its input's rows in place does not extend it); both None when the
    output is Y (whole)."""

    stage: int
    rows: Span
    before: Span | None
    after: Span | None


@dataclass(frozen=True)
class DagProgram:
    stages: tuple[Stage, ...]
    firings: tuple[Firing, ...]
    tensors: tuple[str, ...]  # the group's row-buffered tensors, in stage order
    buffer_of: tuple[int, ...]  # the buffer each of them lives in (shared when in place)
    buffer_rows: tuple[int, ...]  # most rows each buffer holds at once
    buffer_bytes: tuple[int, ...]
    macs: int

    @property
    def steps(self) -> tuple[Firing, ...]:
        return self.firings

    @property
    def streamed(self) -> str:
        """The graph input the group streams row by row ("" if none)."""
        first = self.stages[0]
        return first.output if not first.inputs else ""

    @property
    def emitted(self) -> str:
        """The graph output the group hands out row by row ("" if none)."""
        last = self.stages[-1]
        return last.inputs[0] if last.inputs and last.output == OUTPUT_STAGE + last.inputs[0] \
            else ""


INPUT_STAGE = "input "  # an input stage's name: this prefix and the input's name
OUTPUT_STAGE = "output "  # an output stage's name (and pseudo output): this prefix and Y's


def first_row_refusal(graph: Graph, nodes: Sequence[Node]) -> str:
    """Why the first of ``nodes`` that cannot run row by row cannot ("" if all can)."""
    for node in nodes:
        why = row_refusal(graph, node)
        if why:
            return f"node {node.name!r} ({node.op}): {why}"
    return ""


def row_refusal(graph: Graph, node: Node) -> str:
    """Why ``node`` cannot run row by row inside a dag group ("" if it can)."""
    if node.op not in WINDOW_OPS + ROW_OPS:
        return f"{node.op} does not compute row by row"
    outs = [t for t in node.outputs if t]
    if len(outs) != 1:
        return "it has more than one output"
    y = graph.tensors[outs[0]]
    if len(y.shape) != 4 or y.shape[0] != 1:
        return "its output is not a batch-1 NCHW tensor"
    data = [t for t in node.inputs if t and not graph.is_constant(t)]
    if not data:
        return "it reads only constants"
    for t in data:
        shape = graph.tensors[t].shape
        dtype = _CONVERTS_FROM.get(node.op, y.dtype)
        if len(shape) != 4 or shape[0] != 1 or graph.tensors[t].dtype != dtype:
            return f"its input {t!r} is not a batch-1 NCHW tensor of type {dtype}"
        if node.op not in WINDOW_OPS and shape[2:] != y.shape[2:]:
            return f"its input {t!r} is broadcast along rows or columns"
    if node.op in ("Add", "Mul") and not all(
            t and (graph.tensors[t].shape == y.shape if not graph.is_constant(t)
                   else graph.constants[t].size in (1, y.shape[1])
                   and graph.constants[t].shape[-2:] in ((), (1,), (1, 1)))
            for t in node.inputs[:2]):
        return "its operands are neither of its output's shape nor per-channel constants"
    if node.op == "QuantizeLinear" and (y.dtype != "int8" or "int8" not in node.attrs):
        return "it does not quantise to int8 with one scale"
    if node.op == "DequantizeLinear" and (y.dtype != "float32" or "int8" not in node.attrs):
        return "it does not dequantise int8 with one scale to float32"
    if node.op == "Concat" and node.attrs.get("axis", 0) % 4 != 1:
        return "it concatenates along another axis than channels"
    if node.op in WINDOW_OPS and data != [node.inputs[0]]:
        return "its weight or bias is not constant"
    if node.op == "Resize":
        return _resize_refusal(graph, node)
    if node.op == "MaxPool" and len(node.outputs) > 1 and node.outputs[1]:
        return "it has MaxPool's Indices output"
    return ""


def _resize_refusal(graph: Graph, node: Node) -> str:
    a = node.attrs
    x, y = (graph.tensors[t].shape for t in (node.inputs[0], node.outputs[0]))
    if a.get("mode") != "linear" or a.get("coordinate_transformation_mode") not in RESIZE_MODES:
        return "only a bilinear half-pixel Resize runs row by row"
    if x[:2] != y[:2] or min(y[2:]) < 2:
        return "it resizes other than rows and columns, or to one row or column"
    if resize_row_taps(a["scales"][-2], x[2], y[2], graph.tensors[node.outputs[0]].dtype == "int8"
                       ) is None:
        return "its row fractions have no exact one-row form"
    return ""


def stage_of(graph: Graph, node: Node) -> Stage:
    data = tuple(t for t in node.inputs if t and not graph.is_constant(t))
    y = node.outputs[0]
    window: Axis | RowTaps | None = None
    if node.op == "Resize":
        taps = resize_row_taps(node.attrs["scales"][-2], graph.tensors[data[0]].shape[2],
                               graph.tensors[y].shape[2], graph.tensors[y].dtype == "int8")
        assert taps is not None, "row_refusal refuses it"
        return Stage(node.name, data, y, taps)
    if node.op in WINDOW_OPS:
        a = node.attrs
        kernel = (graph.tensors[node.inputs[1]].shape[2] if node.op == "Conv"
                  else a["kernel_shape"][0])
        window = Axis(kernel, a["strides"][0], a["pads"][0], a["dilations"][0],
                      graph.tensors[data[0]].shape[2], graph.tensors[y].shape[2])
    return Stage(node.name, data, y, window)


def row_bytes(graph: Graph, tensor: str) -> int:
    t = graph.tensors[tensor]
    return t.shape[1] * t.shape[3] * np.dtype(t.dtype).itemsize


def macs_per_row(graph: Graph, node: Node) -> int:
    """Multiply-accumulates of one output row of a Conv (0 for other members)."""
    if node.op != "Conv":
        return 0
    _, c_out, _, w = graph.tensors[node.outputs[0]].shape
    return c_out * w * math.prod(graph.tensors[node.inputs[1]].shape[1:])


class _OverLimit(Exception):
    """dag_program's buffers passed its ``limit``."""


@overload
def dag_program(graph: Graph, nodes: list[Node], streamed: str = "",
                emitted: bool = False, limit: None = None) -> DagProgram: ...
@overload
def dag_program(graph: Graph, nodes: list[Node], streamed: str = "",
                emitted: bool = False, limit: int | None = None) -> DagProgram | None: ...


def dag_program(graph: Graph, nodes: list[Node], streamed: str = "",
                emitted: bool = False, limit: int | None = None) -> DagProgram | None:
    """The pull-driven row program of ``nodes`` (a group found by ``find_segments``);
    ``streamed``: the graph input X the group reads row by row through an input stage;
    ``emitted``: the group's output Y (a graph output) is handed out row by row by an
    output stage instead of being written whole. ``limit``: None as soon as the
    buffers' footprints (as group_live_bytes counts them) pass that many bytes (a
    search's candidate that cannot win; buffers only grow, so this is exact)."""
    stages = [stage_of(graph, n) for n in nodes]
    macs_of = [macs_per_row(graph, n) for n in nodes]
    if streamed:
        stages.insert(0, Stage(INPUT_STAGE + streamed, (), streamed, None))
        macs_of.insert(0, 0)
    if emitted:
        y_name = stages[-1].output
        stages.append(Stage(OUTPUT_STAGE + y_name, (y_name,), OUTPUT_STAGE + y_name, None))
        macs_of.append(0)
    ops = {n.name: n.op for n in nodes}
    producer = {s.output: j for j, s in enumerate(stages)}
    readers: dict[str, list[int]] = {}
    for j, s in enumerate(stages):
        for t in s.inputs:
            readers.setdefault(t, []).append(j)
    y = stages[-1].output
    buffered = tuple(s.output for s in stages if s.output != y)
    # An element-wise stage writes over its input's rows in the same buffer.
    buffer_of: dict[str, int] = {}
    for j, s in enumerate(stages):
        if s.output == y:
            continue
        over = None
        if s.window is None and s.inputs and ops[s.name] != "Concat":
            out = graph.tensors[s.output]
            over = next((t for t in s.inputs if t in producer and readers[t] == [j]
                         and graph.tensors[t].shape == out.shape
                         and graph.tensors[t].dtype == out.dtype), None)
        buffer_of[s.output] = buffer_of[over] if over else len(set(buffer_of.values()))
    count = len(set(buffer_of.values()))
    sharing: list[list[str]] = [[] for _ in range(count)]
    for t in buffered:
        sharing[buffer_of[t]].append(t)
    height = {s.output: graph.tensors[s.output].shape[2] for s in stages[:len(stages) - emitted]}
    if emitted:  # the output stage's pseudo output: one row for each row of Y handed out
        height[stages[-1].output] = height[stages[-1].inputs[0]]
    # Row tables by stage index (the pull loop runs once per row and stage of every
    # candidate group, so it looks rows up instead of asking the windows again):
    # ``reach[j][r]``, the end of the input rows output row r of stage j reads;
    # ``low_from[j][r]``, the first input row that rows r onwards still read.
    rows = [height[s.output] for s in stages]
    reach, low_from = [], []
    for j, s in enumerate(stages):
        spans = [s.needed((r, r + 1)) for r in range(rows[j])] if s.inputs else []
        reach.append([hi for _, hi in spans])
        lows = [lo for lo, _ in spans]
        for r in range(len(lows) - 2, -1, -1):
            lows[r] = min(lows[r], lows[r + 1])
        low_from.append(lows)
    pulls = [[producer[t] for t in s.inputs if t in producer] for s in stages]
    # per buffer: each sharing tensor's producer and the stages that read it
    holders = [[(producer[t], readers[t]) for t in ts] for ts in sharing]
    last = len(stages) - 1
    done = [0] * len(stages)  # rows computed so far, by producing stage
    held: list[Span] = [(0, 0)] * count
    most = [0] * count
    firings: list[list] = []  # [stage, lo, hi, before, after]

    row_of = [row_bytes(graph, ts[0]) for ts in sharing]
    footprint = [0] * count
    total = 0

    def grow(b: int, held_rows: int) -> None:
        nonlocal total
        most[b] = held_rows
        if limit is not None:
            size = _footprint(held_rows * row_of[b], 16)
            total += size - footprint[b]
            footprint[b] = size
            if total > limit:
                raise _OverLimit

    def low_water(p: int, reading: list[int]) -> int:
        """The first row of stage p's output any reader will still read."""
        lows = [low_from[j][done[j]] for j in reading if done[j] < rows[j]]
        return min(lows, default=done[p])

    def fire(j: int) -> None:
        r = done[j]
        if pulls[j]:
            upto = reach[j][r]
            for p in pulls[j]:
                while done[p] < upto:
                    fire(p)
        done[j] = r + 1
        if j == last:  # Y: whole, or the output stage's pseudo output
            before = after = None
        else:
            b = buffer_of[stages[j].output]
            before = held[b]
            low = min(low_water(p, reading) for p, reading in holders[b])
            after = (min(max(low, before[0]), r), max(before[1], r + 1))
            held[b] = after
            if after[1] - after[0] > most[b]:
                grow(b, after[1] - after[0])
        prev = firings[-1] if firings else None
        if prev and prev[0] == j and prev[2] == r and prev[4] == before and (
                before is None or before[0] == after[0]):
            prev[2], prev[4] = r + 1, after  # one more row of the same firing, nothing dropped
        else:
            firings.append([j, r, r + 1, before, after])

    try:
        while done[last] < rows[last]:
            fire(last)
    except _OverLimit:
        return None
    macs = sum(macs_of[j] * (hi - lo) for j, lo, hi, _, _ in firings)
    return DagProgram(
        tuple(stages), tuple(Firing(j, (lo, hi), b, a) for j, lo, hi, b, a in firings),
        buffered, tuple(buffer_of[t] for t in buffered), tuple(most),
        tuple(r * b for r, b in zip(most, row_of, strict=True)), macs)


def stream_refusal(graph: Graph, nodes: list[Node]) -> str:
    """Why a dag group of ``nodes`` cannot stream its input X row by row ("" if it can)."""
    x = next(t for t in nodes[0].inputs if t and not graph.is_constant(t))
    if x not in graph.inputs:
        return f"its input {x!r} is not a graph input"
    if x in graph.outputs:
        return f"the graph input {x!r} is also a graph output"
    shape = graph.tensors[x].shape
    if len(shape) != 4 or shape[0] != 1:
        return f"the graph input {x!r} is not a batch-1 NCHW tensor"
    return ""


def emit_refusal(graph: Graph, nodes: list[Node]) -> str:
    """Why a dag group of ``nodes`` cannot hand its output Y out row by row ("" if it
    can)."""
    y = nodes[-1].outputs[0]
    if y not in graph.outputs:
        return f"its output {y!r} is not a graph output"
    if y in graph.inputs:
        return f"the graph output {y!r} is also a graph input"
    return ""


def cuts(graph: Graph) -> list[tuple[int, str]]:
    """(position, tensor) where exactly one activation tensor is live between node
    ``position - 1`` and node ``position`` of the graph order."""
    last_read: dict[str, int] = {}
    born: dict[str, int] = dict.fromkeys(graph.inputs, -1)
    for i, node in enumerate(graph.nodes):
        for t in node.inputs:
            if t and not graph.is_constant(t):
                last_read[t] = i
        for t in node.outputs:
            if t:
                born.setdefault(t, i)
    for t in graph.outputs:
        last_read[t] = len(graph.nodes)
    out = []
    for k in range(len(graph.nodes) + 1):
        live = [t for t, b in born.items() if b < k <= last_read.get(t, -1)]
        if len(live) == 1:
            out.append((k, live[0]))
    return out


def find_segments(graph: Graph) -> tuple[list[tuple[int, int]], list[str]]:
    """Node index ranges ``[a, b)`` between consecutive cuts whose nodes are all row-wise
    (what a dag group may be made of), and for the other ranges the first node that is
    not, and why."""
    at = cuts(graph)
    out, reasons = [], []
    for (a, _), (b, t) in zip(at, at[1:], strict=False):
        if b <= a or t in graph.inputs:
            continue
        why = first_row_refusal(graph, graph.nodes[a:b])
        if why:
            reasons.append(why)
        else:
            out.append((a, b))
    return out, reasons


def dag_record(graph: Graph, program: DagProgram, buffers: list[str]) -> dict:
    """What plan.json records of a dag group's program, for the independent checker:
    each tensor's rows, bytes per row and buffer (None: whole in the arena), each stage's
    inputs, output and row window ([kernel, stride, pad, dilation] or None), and each
    firing as [stage, first row, end row, held before (lo, hi), held after (lo, hi)]
    (-1s for the whole output). An output stage records ``"output": null`` and
    ``"emits": Y``; an input stage ``"streams": X``."""
    stages = program.stages
    emitted = program.emitted
    buffer_of = {t: buffers[k] for t, k in zip(program.tensors, program.buffer_of, strict=True)}
    names = dict.fromkeys(t for s in stages for t in (*s.inputs, s.output)
                          if t != OUTPUT_STAGE + emitted)
    return {
        "tensors": {t: {"rows": graph.tensors[t].shape[2], "row_bytes": row_bytes(graph, t),
                        "buffer": buffer_of.get(t)} for t in names},
        "stages": [{"node": s.name, "inputs": list(s.inputs),
                    "output": None if emitted and s is stages[-1] else s.output,
                    "window": _window_record(graph, s),
                    **({"streams": s.output} if not s.inputs else {}),
                    **({"emits": emitted} if emitted and s is stages[-1] else {})}
                   for s in stages],
        "firings": [[f.stage, *f.rows, *(f.before or (-1, -1)), *(f.after or (-1, -1))]
                    for f in program.firings],
    }


def _window_record(graph: Graph, s: Stage) -> list | None:
    """[kernel, stride, pad, dilation]; a Resize's ["resize", scale] (half-pixel: the
    checker computes its taps itself); None for row-for-row stages."""
    if isinstance(s.window, RowTaps):
        node = next(n for n in graph.nodes if n.name == s.name)
        return ["resize", node.attrs["scales"][-2]]
    if s.window is None:
        return None
    return [s.window.kernel, s.window.stride, s.window.pad, s.window.dil]


def _footprint(size: int, alignment: int) -> int:
    return -(-max(size, 1) // alignment) * alignment


def step_live_bytes(graph: Graph, alignment: int = 16) -> list[int]:
    """Live footprint bytes at each node of the graph order, nothing fused (a tensor
    lives from its producer, or step 0 for a graph input, through its last reader)."""
    born: dict[str, int] = dict.fromkeys(graph.inputs, 0)
    last: dict[str, int] = {}
    for i, node in enumerate(graph.nodes):
        for t in node.outputs:
            if t:
                born.setdefault(t, i)
                last.setdefault(t, i)
        for t in node.inputs:
            if t and not graph.is_constant(t):
                last[t] = i
    for t in graph.outputs:
        last[t] = len(graph.nodes) - 1
    delta = [0] * (len(graph.nodes) + 1)
    for t, first in born.items():
        size = _footprint(math.prod(graph.tensors[t].shape) *
                          np.dtype(graph.tensors[t].dtype).itemsize, alignment)
        delta[first] += size
        delta[last.get(t, first) + 1] -= size
    live, running = [], 0
    for d in delta[:-1]:
        running += d
        live.append(running)
    return live


def min_buffer_bytes(graph: Graph, node: Node, alignment: int = 16) -> int:
    """Bytes a dag group's row buffers hold at least for ``node``'s output when it is
    neither the group's Y nor X: one row of its own buffer for a window op or Concat
    (dag_program writes over an input's rows only for the other row ops, which so may
    hold nothing of their own)."""
    if node.op not in WINDOW_OPS and node.op != "Concat":
        return 0
    return _footprint(row_bytes(graph, node.outputs[0]), alignment)


def group_live_bytes(graph: Graph, nodes: list[Node], program: DagProgram | None,
                     alignment: int = 16, streamed: bool = False, emitted: bool = False
                     ) -> int:
    """Bytes live while a dag group of ``nodes`` runs: X (unless ``streamed``), Y (unless
    ``emitted``) and its buffers (the group lies between two cuts, so nothing else is
    live); without a program, the whole X and Y only."""
    x = next(t for t in nodes[0].inputs if t and not graph.is_constant(t))
    y = nodes[-1].outputs[0]
    whole = sum(_footprint(math.prod(graph.tensors[t].shape) *
                           np.dtype(graph.tensors[t].dtype).itemsize, alignment)
                for t, gone in ((x, streamed), (y, emitted)) if not gone)
    if program is None:
        return whole
    return whole + sum(_footprint(b, alignment) for b in program.buffer_bytes)
