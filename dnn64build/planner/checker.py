"""An independent plan checker: validates a plan.json dict on its own.

It shares no code with the allocators (O(n^2), written for obviousness) and
reports a specific reason: malformed entry, bad alias, misaligned offset, bad
lifetime, buffer past the arena, two live buffers overlapping, or a wrong
lower bound. Lifetimes here are plan.json's inclusive ``first``/``last``.

Members of one alias group (a root buffer and the buffers whose ``alias_of``
names it) share memory on purpose and are not checked against each other; the
group must fit inside its root, in space and in time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Violation:
    kind: str  # malformed | alias | misaligned | lifetime | arena | overlap | bound
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
    if "lower_bound_bytes" in plan:
        out += _bound(plan["lower_bound_bytes"], buffers, arena)
    return out


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
