"""Does a planned model fit the target memory? And if not, what would help.

The budget is the whole RDRAM: the arena (activations + weight staging) plus
the program (code, data, stack). The program's size is known only after
linking, so the plan stage checks against an estimate and the pack stage
checks again with the real size.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dnn64build.errors import UserError

# RDRAM the program needs besides the arena, before it is linked: the low 1 KiB
# (exception vectors), code and data of the kernels and runtime, and the stack.
LOW_MEMORY_BYTES = 0x400
PROGRAM_ESTIMATE_BYTES = 192 * 1024
STACK_BYTES = 64 * 1024


def live_at(plan: Mapping[str, Any], step: int) -> list[Mapping[str, Any]]:
    """The buffers holding memory at ``step`` (aliases share their target's bytes)."""
    return [
        b for b in plan["buffers"]
        if b["first"] <= step <= b["last"] and not b.get("alias_of")
    ]


def peak_step(plan: Mapping[str, Any]) -> int:
    steps = range(max(len(plan["schedule"]), 1))
    return max(steps, key=lambda s: sum(b["size"] for b in live_at(plan, s)))


def check_fit(
    plan: Mapping[str, Any], *, memory: int, program_bytes: int, label: str,
    staging_bytes: int,
) -> None:
    """Raise a UserError explaining the overflow when the model cannot fit ``memory``."""
    needed = LOW_MEMORY_BYTES + plan["arena_bytes"] + staging_bytes + program_bytes + STACK_BYTES
    if needed <= memory:
        return
    step = peak_step(plan)
    node = plan["schedule"][step] if plan["schedule"] else "?"
    live = sorted(live_at(plan, step), key=lambda b: -b["size"])
    lines = [f"    {b['name']}: {_kib(b['size'])}" for b in live[:8]]
    if len(live) > 8:
        lines.append(f"    ... and {len(live) - 8} more")
    raise UserError(
        f"model {label} does not fit in {_kib(memory)}: it needs {_kib(needed)} "
        f"(arena {_kib(plan['arena_bytes'])}, weight staging {_kib(staging_bytes)}, "
        f"program ~{_kib(program_bytes)}, stack {_kib(STACK_BYTES)}).\n"
        f"  Peak at step {step} (node {node!r}), lower bound {_kib(plan['lower_bound_bytes'])}; "
        f"live there:\n" + "\n".join(lines),
        hint="quantize: {mode: int8} makes activations 4x smaller; planner: {algorithm: exact} "
        "or {scheduler: auto} may pack tighter; memory: 8MiB targets the Expansion Pak",
    )


def _kib(n: int) -> str:
    return f"{n / 1024:.1f} KiB" if n < 1024 * 1024 else f"{n / (1024 * 1024):.2f} MiB"
