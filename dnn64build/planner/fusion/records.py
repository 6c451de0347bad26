"""A fused group as plan.json records it, and the names it gives the group's node and
buffers: what the plan stage writes and code generation reads back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FUSION_MODES = ("none", "stream", "patch", "dag", "auto")
INPUT_MODES = ("whole", "stream", "auto")
OUTPUT_MODES = ("whole", "stream", "auto")
GROUP_OP = "FusedGroup"


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


def group_name(group: Group) -> str:
    return f"fused[{group.nodes[0]}..{group.nodes[-1]}]"


def buffer_names(group: Group, count: int) -> list[str]:
    return [f"{group_name(group)}.buf{k}" for k in range(count)]


def streamed_inputs(groups: list[Group]) -> list[str]:
    """The graph inputs ``groups`` read row by row (never whole in the arena)."""
    return [g.streams for g in groups if g.streams]


def streamed_outputs(groups: list[Group]) -> list[str]:
    """The graph outputs ``groups`` hand out row by row (never whole in the arena)."""
    return [g.emits for g in groups if g.emits]


def groups_from_plan(plan: dict[str, Any]) -> list[Group]:
    return [Group.from_record(rec) for rec in plan.get("fusion", {}).get("groups", [])]
