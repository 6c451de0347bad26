"""An independent plan checker: validates a plan.json dict on its own.

It shares no code with the allocators (O(n^2), written for obviousness) and
reports a specific reason: malformed entry, bad alias, misaligned offset, bad
lifetime, buffer past the arena, two live buffers overlapping, or a wrong
lower bound. Lifetimes here are plan.json's inclusive ``first``/``last``.

Members of one alias group (a root buffer and the buffers whose ``alias_of``
names it) share memory on purpose and are not checked against each other; the
group must fit inside its root, in space and in time.

A graph input listed in ``streamed_inputs`` has no buffer of its own: exactly one
dag group reads it, through an input stage (``streams``: a stage without inputs)
whose firings bring its rows into a row buffer, which the row replay checks like
any other. A graph output listed in ``streamed_outputs`` has no buffer of its own
either: its producer writes its rows into a row buffer, and an output stage of exactly
one dag group (``emits``: a stage writing no tensor) hands out each row of it once, in
order, while the buffer still holds it (the replay checks that too).

A pair of ``quantize_stem`` (a QuantizeLinear run inside the stem Conv's call) needs its
float input alive through the Conv's step and sharing no byte with the Conv's output.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Violation:
    kind: str  # malformed | alias | misaligned | lifetime | arena | overlap | bound | rows
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


def check_plan(plan: Mapping[str, Any]) -> Violation | None:
    """The first thing wrong with ``plan``, or None when it is valid."""
    found = find_violations(plan)
    return found[0] if found else None


def check_intervals(
    rows: Iterable[tuple[str, int, int, int, int, int]], arena: int | None = None
) -> Violation | None:
    """Check a placement of the abstract problem: rows of
    ``(id, lower, upper, size, alignment, offset)`` with half-open lifetimes."""
    buffers = [
        {"name": str(n), "first": lo, "last": up - 1, "size": s, "alignment": a, "offset": o}
        for n, lo, up, s, a, o in rows
    ]
    if arena is None:
        arena = max((b["offset"] + b["size"] for b in buffers), default=0)
    return check_plan({"arena_bytes": arena, "buffers": buffers})


def find_violations(plan: Mapping[str, Any]) -> list[Violation]:
    buffers = plan.get("buffers")
    arena = plan.get("arena_bytes")
    if not isinstance(buffers, list) or not _is_count(arena):
        return [Violation("malformed", "plan needs 'buffers' (a list) and 'arena_bytes' (>= 0)")]
    out = _malformed(buffers)
    if out:
        return out
    by_name = {b["name"]: b for b in buffers}
    out += _aliases(buffers, by_name)
    for b in buffers:
        if b["offset"] % b["alignment"]:
            out.append(Violation(
                "misaligned",
                f"{b['name']}: offset {b['offset']} is not a multiple of {b['alignment']}",
            ))
        if b["first"] > b["last"]:
            out.append(Violation("lifetime", f"{b['name']}: first {b['first']} > last {b['last']}"))
        if b["offset"] + b["size"] > arena:
            out.append(Violation(
                "arena",
                f"{b['name']}: ends at {b['offset'] + b['size']}, past the arena ({arena} bytes)",
            ))
    schedule = plan.get("schedule")
    if isinstance(schedule, list):
        for b in buffers:
            if b["last"] >= len(schedule):
                out.append(Violation(
                    "lifetime", f"{b['name']}: last step {b['last']} is past the schedule"
                ))
    out += _overlaps(buffers, by_name)
    groups = (plan.get("fusion") or {}).get("groups", [])
    for group in groups:
        if isinstance(group, Mapping) and "program" in group:
            out += _row_program(str(group.get("name")), group["program"], by_name)
    for side in (_INPUTS, _OUTPUTS):
        out += _streamed(side, plan.get(side.key, []), groups, by_name)
    out += _quantize_stem(plan.get("quantize_stem", {}), schedule, by_name)
    if "lower_bound_bytes" in plan:
        out += _bound(plan["lower_bound_bytes"], buffers, arena)
    return out


def _quantize_stem(record: object, schedule: object, by_name: Mapping[str, Mapping]
                   ) -> list[Violation]:
    """Each pair of ``quantize_stem``: a QuantizeLinear whose float input the Conv's call
    quantizes while the RSP writes the Conv's output. The float input must live from its
    first step through the Conv's, and never share a byte with that output."""
    try:
        pairs = record.get("pairs", []) if isinstance(record, Mapping) else record
        out: list[Violation] = []
        for pair in pairs:
            x, y = by_name[pair["float_input"]], by_name[pair["output"]]
            q_step, conv_step = schedule.index(pair["quantize"]), schedule.index(pair["conv"])
            where = f"quantize_stem {pair['quantize']} + {pair['conv']}"
            if not q_step < conv_step <= x["last"]:
                out.append(Violation("lifetime", f"{where}: {x['name']} (last step {x['last']}) "
                                                 f"must live through the Conv (step {conv_step})"))
            if x["offset"] < y["offset"] + y["size"] and y["offset"] < x["offset"] + x["size"]:
                out.append(Violation("overlap", f"{where}: {x['name']} and {y['name']} share "
                                                "bytes, which the Conv writes while it reads"))
        return out
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return [Violation("malformed", f"unreadable quantize_stem ({exc!r})")]


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _malformed(buffers: Sequence[Any]) -> list[Violation]:
    out: list[Violation] = []
    names: set[str] = set()
    for k, b in enumerate(buffers):
        if not isinstance(b, Mapping):
            out.append(Violation("malformed", f"buffers[{k}] is not an object"))
            continue
        for key in ("size", "offset", "alignment", "first", "last"):
            if not _is_count(b.get(key)):
                out.append(Violation("malformed", f"buffers[{k}]: {key!r} must be an int >= 0"))
        name = b.get("name")
        if not isinstance(name, str):
            out.append(Violation("malformed", f"buffers[{k}]: 'name' must be a string"))
        elif name in names:
            out.append(Violation("malformed", f"buffers[{k}]: duplicate name {name!r}"))
        else:
            names.add(name)
        alignment = b.get("alignment")
        if _is_count(alignment) and (alignment == 0 or alignment & (alignment - 1)):
            out.append(Violation("malformed", f"buffers[{k}]: alignment {alignment} not 2^k"))
    return out


def _aliases(buffers: Sequence[Mapping], by_name: Mapping[str, Mapping]) -> list[Violation]:
    out: list[Violation] = []
    for b in buffers:
        if "alias_of" not in b:
            continue
        name, root = b["name"], by_name.get(b["alias_of"])
        shift = b.get("alias_offset")
        if root is None:
            out.append(Violation("alias", f"{name}: alias_of {b['alias_of']!r} is not a buffer"))
        elif "alias_of" in root:
            out.append(Violation("alias", f"{name}: aliases {root['name']}, itself an alias"))
        elif not _is_count(shift):
            out.append(Violation("alias", f"{name}: alias_offset must be an int >= 0"))
        elif b["offset"] != root["offset"] + shift:
            out.append(Violation(
                "alias",
                f"{name}: offset {b['offset']} != {root['name']}'s {root['offset']} + {shift}",
            ))
        elif shift + b["size"] > root["size"]:
            out.append(Violation("alias", f"{name}: runs past the end of {root['name']}"))
        elif b["first"] < root["first"] or b["last"] > root["last"]:
            out.append(Violation("alias", f"{name}: outlives {root['name']}, which it aliases"))
    return out


def _group(b: Mapping, by_name: Mapping[str, Mapping]) -> str:
    return b["alias_of"] if b.get("alias_of") in by_name else b["name"]


def _overlaps(buffers: Sequence[Mapping], by_name: Mapping[str, Mapping]) -> list[Violation]:
    out: list[Violation] = []
    for k, a in enumerate(buffers):
        for b in buffers[k + 1:]:
            if _group(a, by_name) == _group(b, by_name) or not a["size"] or not b["size"]:
                continue
            live_together = a["first"] <= b["last"] and b["first"] <= a["last"]
            share_bytes = (
                a["offset"] < b["offset"] + b["size"] and b["offset"] < a["offset"] + a["size"]
            )
            if live_together and share_bytes:
                out.append(Violation(
                    "overlap",
                    f"{a['name']} [{a['offset']}, {a['offset'] + a['size']}) and {b['name']} "
                    f"[{b['offset']}, {b['offset'] + b['size']}) at step "
                    f"{max(a['first'], b['first'])}",
                ))
    return out


def _window(window: Sequence | None, lo: int, hi: int, rows_in: int) -> range:
    """Input rows that output rows [lo, hi) of a window [kernel, stride, pad, dilation]
    touch inside the tensor, listed tap by tap (element-wise: the same rows); of a
    bilinear half-pixel Resize ["resize", scale]: row floor(v) of each output row o, and
    the next one where v has a fraction, v = (o + 0.5) / scale - 0.5 in float32 clamped
    to the rows (the ONNX coordinate, as the kernel computes it)."""
    if window is None:
        return range(lo, hi)
    if window[0] == "resize":
        f32 = np.float32
        read: set[int] = set()
        for o in range(lo, hi):
            v = min(max((f32(o) + f32(0.5)) / f32(window[1]) - f32(0.5), f32(0)),
                    f32(rows_in - 1))
            read |= {math.floor(v), math.ceil(v)}
        return range(min(read), max(read) + 1) if read else range(0)
    kernel, stride, pad, dil = window
    taps = [o * stride - pad + k * dil for o in range(lo, hi) for k in range(kernel)]
    inside = [t for t in taps if 0 <= t < rows_in]
    return range(min(inside), max(inside) + 1) if inside else range(0)


def _row_program(name: str, program: Mapping, by_name: Mapping[str, Mapping]
                 ) -> list[Violation]:
    """Replay a dag group's firings (planner/dagstream.py records them). Each buffer holds
    a contiguous run of rows; each row slot remembers which tensor wrote it last
    (element-wise stages may write over their input in the same buffer). A firing first
    drops rows at the start of its output buffer, then reads, then writes: every row it
    reads must be held and written by that tensor (not yet overwritten), every row is
    computed once and in order, and no buffer holds more rows than its size allows. An
    output stage (``output`` null, ``emits`` Y) writes nothing: its firings hand out the
    next rows of Y, which it reads like any input."""
    try:
        tensors, stages, firings = program["tensors"], program["stages"], program["firings"]
        made = {s["output"]: k for k, s in enumerate(stages) if s["output"] is not None}
        done = dict.fromkeys(made, 0)
        handed = {s["emits"]: 0 for s in stages if s["output"] is None}
        held: dict[str, tuple[int, int]] = {}
        owner: dict[str, dict[int, str]] = {}
        for t in made:
            if tensors[t]["buffer"] is not None:
                held[tensors[t]["buffer"]] = (0, 0)
                owner[tensors[t]["buffer"]] = {}
        for f in firings:
            stage, lo, hi, b_lo, b_hi, a_lo, a_hi = f
            s = stages[stage]
            where = f"group {name}: firing {f} of {s['node']}"
            if s["output"] is None:  # an output stage
                y = s["emits"]
                if s["inputs"] != [y] or s["window"] is not None or \
                        (b_lo, b_hi, a_lo, a_hi) != (-1, -1, -1, -1):
                    return [Violation("rows", f"{where}: an output stage reads {y!r} row "
                                              "for row and writes nothing")]
                if lo != handed[y] or hi <= lo or hi > tensors[y]["rows"]:
                    return [Violation("rows", f"{where}: rows [{lo}, {hi}) are not the next "
                                              f"ones of {y!r} to hand out ({handed[y]} "
                                              "handed out)")]
                out, buf = y, None
            else:
                out = s["output"]
                buf = tensors[out]["buffer"]
                if lo != done[out] or hi <= lo or hi > tensors[out]["rows"]:
                    return [Violation("rows", f"{where}: rows [{lo}, {hi}) are not the next "
                                              f"ones of {out!r} ({done[out]} done)")]
            if buf is not None:
                if (b_lo, b_hi) != held[buf] or not b_lo <= a_lo <= lo or \
                        a_hi != max(b_hi, hi):
                    return [Violation("rows", f"{where}: buffer {buf} holds {held[buf]}, the "
                                              f"firing claims {(b_lo, b_hi)} -> {(a_lo, a_hi)}")]
                need_bytes = (a_hi - a_lo) * tensors[out]["row_bytes"]
                if buf not in by_name or by_name[buf]["size"] < need_bytes:
                    return [Violation("rows", f"{where}: holds {a_hi - a_lo} rows of {out!r} "
                                              f"({need_bytes} bytes) in a smaller buffer")]
                held[buf] = (a_lo, a_hi)
                owner[buf] = {r: t for r, t in owner[buf].items() if r >= a_lo}
            for t in s["inputs"]:
                rows = _window(s["window"], lo, hi, tensors[t]["rows"])
                src = tensors[t]["buffer"] if t in made else None
                if t in made and rows and rows[-1] >= done[t]:
                    return [Violation("rows", f"{where}: reads row {rows[-1]} of {t!r}, "
                                              "not computed yet")]
                lost = [r for r in rows if src is not None and owner[src].get(r) != t]
                if lost:
                    return [Violation("rows", f"{where}: reads row {lost[0]} of {t!r}, which "
                                              f"buffer {src} no longer holds")]
            if buf is not None:
                owner[buf].update(dict.fromkeys(range(lo, hi), out))
            if s["output"] is None:
                handed[out] = hi
            else:
                done[out] = hi
        short = [t for t in made if done[t] != tensors[t]["rows"]]
        if short:
            return [Violation("rows", f"group {name}: {short[0]!r} has {done[short[0]]} of "
                                      f"{tensors[short[0]]['rows']} rows computed")]
        short = [t for t in handed if handed[t] != tensors[t]["rows"]]
        if short:
            return [Violation("rows", f"group {name}: {short[0]!r} has {handed[short[0]]} of "
                                      f"{tensors[short[0]]['rows']} rows handed out")]
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        return [Violation("malformed", f"group {name}: unreadable row program ({exc!r})")]
    return []


@dataclass(frozen=True)
class _Boundary:
    """One side of the graph a dag group can stream: how its stages are told apart and
    named, and the words of its messages."""

    key: str  # the plan's list of the streamed tensors
    noun: str  # "streamed input"
    field: str  # the stage's field naming the tensor
    is_stage: Callable[[Mapping], bool]
    undeclared: str  # what a stage naming an undeclared tensor does
    counted: str  # what {n} stages do with the tensor
    row_buffer: bool  # the stage hands rows out of the tensor's row buffer, so it needs one


_INPUTS = _Boundary("streamed_inputs", "streamed input", "streams",
                    lambda stage: not stage.get("inputs"),
                    "reads no tensor and streams no declared input", "is read by {n} input stages",
                    row_buffer=False)
_OUTPUTS = _Boundary("streamed_outputs", "streamed output", "emits",
                     lambda stage: stage.get("output", "") is None,
                     "writes no tensor and emits no declared output",
                     "is handed out by {n} output stages", row_buffer=True)


def _streamed(side: _Boundary, declared: object, groups: Sequence[Any],
              by_name: Mapping[str, Mapping]) -> list[Violation]:
    """Each streamed tensor of ``side``: no whole buffer, streamed by exactly one stage of
    that side in one dag group; and every such stage streams a declared tensor."""
    if not isinstance(declared, list):
        return [Violation("malformed", f"{side.key!r} must be a list")]
    stages_of: dict[str, int] = {}
    for group in groups:
        program = group.get("program") if isinstance(group, Mapping) else None
        for stage in (program or {}).get("stages", []):
            if not side.is_stage(stage):
                continue
            name = stage.get(side.field)
            if name not in declared:
                return [Violation("rows", f"group {group.get('name')}: stage "
                                          f"{stage.get('node')!r} {side.undeclared} ({name!r})")]
            if side.row_buffer and program["tensors"][name]["buffer"] is None:
                return [Violation("rows", f"group {group.get('name')}: output {name!r} "
                                          "is handed out but has no row buffer")]
            stages_of[name] = stages_of.get(name, 0) + 1
    for name in declared:
        if name in by_name:
            return [Violation("rows", f"{side.noun} {name!r} also has a whole buffer")]
        if stages_of.get(name, 0) != 1:
            counted = side.counted.format(n=stages_of.get(name, 0))
            return [Violation("rows", f"{side.noun} {name!r} {counted}, not one")]
    return []


def _bound(claimed: object, buffers: Sequence[Mapping], arena: int) -> list[Violation]:
    roots = [b for b in buffers if "alias_of" not in b]
    steps = {b["first"] for b in roots}
    live = 0
    for t in steps:  # the maximum is reached at some buffer's first step
        here = sum(
            -(-b["size"] // b["alignment"]) * b["alignment"]
            for b in roots
            if b["first"] <= t <= b["last"]
        )
        live = max(live, here)
    if claimed != live:
        return [Violation("bound", f"lower_bound_bytes is {claimed}, live bytes peak at {live}")]
    if arena < live:
        return [Violation("bound", f"arena {arena} is below the live-bytes bound {live}")]
    return []
