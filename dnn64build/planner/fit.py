"""Does a planned model fit the target memory? And if not, what would help.

The budget is the whole RDRAM: the arena (activations + weight staging), the
weights kept resident (plan.json ``weights``, a static buffer of the model's own) and
the program (code, data, stack). The program's size is known only after
linking, so the plan stage checks against an estimate and the pack stage
checks again with the real sizes read from the linked ELF (``check_linked_fit``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dnn64build.errors import UserError
from dnn64build.toolchains.elf import ProgramSize

# RDRAM the program needs besides the arena: the low 1 KiB (exception vectors), the
# program (before linking, the estimate of dnn64build.codegen.program_size; the pack
# stage checks again with the linked sizes) and the stack.
LOW_MEMORY_BYTES = 0x400
STACK_BYTES = 64 * 1024  # as n64.ld's default __dnn64_stack_size
# Memory `staging_bytes: auto` never grows the weight staging into: beside the stack,
# room for what the fit check does not count (a platform's heap, the program growing
# past its estimate after a kernel change), so a grown staging never turns a model that
# fits with the minimum into one that fails the pack stage's linked check.
STAGING_RESERVE_BYTES = 128 * 1024


def live_at(plan: Mapping[str, Any], step: int) -> list[Mapping[str, Any]]:
    """The buffers holding memory at ``step`` (aliases share their target's bytes)."""
    return [
        b for b in plan["buffers"]
        if b["first"] <= step <= b["last"] and not b.get("alias_of")
    ]


def peak_step(plan: Mapping[str, Any]) -> int:
    steps = range(max(len(plan["schedule"]), 1))
    return max(steps, key=lambda s: sum(b["size"] for b in live_at(plan, s)))


def resident_bytes(plan: Mapping[str, Any]) -> int:
    """Bytes of the weights ``plan`` keeps resident (0 in a plan without a weights record)."""
    return int(plan.get("weights", {}).get("resident_bytes", 0))


def all_resident(plan: Mapping[str, Any]) -> bool:
    """Whether ``plan`` keeps every weight tile resident: the code then has no staging."""
    record = plan.get("weights")
    return bool(record) and len(record["resident_tiles"]) == len(record["tiles"])


def needed_bytes(plan: Mapping[str, Any], *, program_bytes: int, staging_bytes: int) -> int:
    """RDRAM a model needs: low memory, arena, weight staging, program and stack, and for
    ``weights: resident`` the resident weights in place of the staging. What ``weights:
    auto`` keeps resident is not needed: it takes only memory left free (check_fit counts
    it with used_bytes)."""
    if plan.get("weights", {}).get("mode") == "resident":
        return _base(plan, program_bytes) + resident_bytes(plan) + \
            (0 if all_resident(plan) else staging_bytes)
    return _base(plan, program_bytes) + staging_bytes


def used_bytes(plan: Mapping[str, Any], *, program_bytes: int, staging_bytes: int) -> int:
    """RDRAM a model uses: low memory, arena, weight staging unless every tile is resident,
    the resident weights, program and stack."""
    return _base(plan, program_bytes) + resident_bytes(plan) + \
        (0 if all_resident(plan) else staging_bytes)


def _base(plan: Mapping[str, Any], program_bytes: int) -> int:
    return LOW_MEMORY_BYTES + plan["arena_bytes"] + program_bytes + STACK_BYTES


def check_fit(
    plan: Mapping[str, Any], *, memory: int, program_bytes: int, label: str,
    staging_bytes: int, searched: Sequence[str] = (),
) -> None:
    """Raise a UserError explaining the overflow when the model cannot fit ``memory``;
    ``searched`` (one line per option planned, planner/fusion/search.py) says that ``plan`` is
    the smallest of them."""
    needed = used_bytes(plan, program_bytes=program_bytes, staging_bytes=staging_bytes)
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
        f"(arena {_kib(plan['arena_bytes'])}, weight staging "
        f"{_kib(0 if all_resident(plan) else staging_bytes)}, "
        + (f"resident weights {_kib(resident_bytes(plan))}, " if resident_bytes(plan) else "")
        + f"program {_kib(program_bytes)} estimated before linking, stack {_kib(STACK_BYTES)}).\n"
        f"  Peak at step {step} (node {node!r}), lower bound {_kib(plan['lower_bound_bytes'])}; "
        f"live there:\n" + "\n".join(lines) + _searched(searched),
        hint="quantize: {mode: int8} makes activations 4x smaller; planner: {algorithm: exact} "
        "or {scheduler: auto} may pack tighter; memory: 8MiB targets the Expansion Pak"
        + ("; planner: {weights: auto} keeps resident only the weights that fit"
           if resident_bytes(plan) else ""),
    )


def _searched(lines: Sequence[str]) -> str:
    if not lines:
        return ""
    return ("\n  The smallest of the options planned (fastest first):\n"
            + "\n".join(f"    {line}" for line in lines))


def check_linked_fit(
    size: ProgramSize, *, memory: int, arena_bytes: int, stack_bytes: int, label: str,
    ram_start: int,
) -> None:
    """Raise a UserError naming the real figures when the linked program (its sections
    spanning up to ``size.end``; the static arena of ``arena_bytes`` is in its .bss) and
    the stack do not fit ``memory`` bytes of RDRAM starting at ``ram_start``."""
    needed = size.end - ram_start + stack_bytes
    if needed <= memory:
        return
    program = size.text + size.rodata + size.data + size.bss - arena_bytes
    raise UserError(
        f"{label} does not fit in {_kib(memory)}: the linked program needs {_kib(needed)}: "
        f"arena {_kib(arena_bytes)} (activations + weight staging), program "
        f"{_kib(program)} (.text {_kib(size.text)}, .rodata {_kib(size.rodata)}, "
        f".data {_kib(size.data)}, other .bss {_kib(size.bss - arena_bytes)}), "
        f"stack {_kib(stack_bytes)}, low memory {_kib(size.start - ram_start)}",
        hint="quantize: {mode: int8} makes activations 4x smaller; memory: 8MiB targets the "
        "Expansion Pak",
    )


def _kib(n: int) -> str:
    return f"{n / 1024:.1f} KiB" if n < 1024 * 1024 else f"{n / (1024 * 1024):.2f} MiB"
