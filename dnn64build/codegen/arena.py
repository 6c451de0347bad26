"""Where every activation lives: the plan's offsets, with aliases resolved.

The arena the generated code uses is laid out as::

    [0, plan arena)                      activations at the plan's offsets
    [staging_offset, + staging_bytes)    weight staging: two halves of half_bytes

``staging_offset`` is the plan's arena rounded up to 16 bytes, so the generated
``<SYMBOL>_ARENA_BYTES`` = align16(plan arena_bytes) + staging_bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ARENA_ALIGN = 16


def align_up(value: int, alignment: int = ARENA_ALIGN) -> int:
    return -(-value // alignment) * alignment


class PlanMismatch(ValueError):
    """The plan does not describe the graph it is used with (a bug upstream)."""


@dataclass(frozen=True)
class ArenaMap:
    """Resolved byte offsets of the planned buffers."""

    plan_bytes: int
    offsets: dict[str, int]
    sizes: dict[str, int]
    schedule: tuple[str, ...]

    @classmethod
    def from_plan(cls, plan: dict[str, Any]) -> ArenaMap:
        entries = {b["name"]: b for b in plan["buffers"]}
        offsets: dict[str, int] = {}

        def resolve(name: str, depth: int = 0) -> int:
            if name in offsets:
                return offsets[name]
            if name not in entries or depth > len(entries):
                raise PlanMismatch(f"plan: buffer {name!r} is missing or aliases in a cycle")
            entry = entries[name]
            if "alias_of" in entry:
                offset = resolve(entry["alias_of"], depth + 1) + int(entry["alias_offset"])
                if offset != int(entry["offset"]):
                    raise PlanMismatch(f"plan: alias {name!r} offset disagrees with its root")
            else:
                offset = int(entry["offset"])
            offsets[name] = offset
            return offset

        plan_bytes = int(plan["arena_bytes"])
        sizes = {name: int(entry["size"]) for name, entry in entries.items()}
        for name in entries:
            offset = resolve(name)
            if offset < 0 or offset + sizes[name] > plan_bytes:
                raise PlanMismatch(f"plan: buffer {name!r} lies outside the arena")
        return cls(plan_bytes, offsets, sizes, tuple(plan["schedule"]))

    def offset(self, name: str) -> int:
        if name not in self.offsets:
            raise PlanMismatch(f"plan has no buffer for tensor {name!r}")
        return self.offsets[name]

    def overlaps(self, a: str, b: str) -> bool:
        oa, ob = self.offset(a), self.offset(b)
        return oa < ob + self.sizes[b] and ob < oa + self.sizes[a]

    @property
    def staging_offset(self) -> int:
        return align_up(self.plan_bytes)
