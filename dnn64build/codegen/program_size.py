"""The plan stage's estimate of the linked program (everything but the arena), before linking.

A bare program links the platform layer whole and, from the kernel archive (libdnn64.a),
only the kernel objects the model's code calls and what those call in turn. So:

    estimate = PROGRAM_MARGIN * (platform + referenced kernel objects + fixed + model code)

- platform and kernel objects: kernel_sizes.json, measured by tools/kernel_sizes.py with
  the bare toolchain (tests/codegen/test_program_size.py fails when it is stale);
- model code, from the shape of the generated C (codegen/shape.py):
  bytes per kernel call, per call that reads a weight tile (the ROM read and wait around
  it) and per line of parameter structs, plus a fixed part, fitted on the zoo by
  tools/bench/bench_program_size.py --calibrate and rounded up;
- PROGRAM_MARGIN: the safety margin (compiler drift, section alignment gaps).

The pack stage's post-link check (fit.check_linked_fit) stays the authority; libdragon
links its own library besides, which this estimate does not count.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

KERNEL_SIZES_PATH = Path(__file__).with_name("kernel_sizes.json")
# Fitted on the zoo (42.4 B/call, 27.5 B/staged call, 50.6 B/line, 1,936 B), rounded up.
CALL_BYTES = 48
STAGED_CALL_BYTES = 32
DECL_LINE_BYTES = 56
FIXED_BYTES = 4096  # main.c (under 1 KiB for one model) and the run function's frame
PROGRAM_MARGIN = 1.10


@cache
def kernel_table() -> dict[str, Any]:
    return json.loads(KERNEL_SIZES_PATH.read_text())


def kernel_objects(functions: Iterable[str]) -> set[str]:
    """The kernel objects the linker pulls from the archive for code calling
    ``functions``: their owners and, transitively, what those call."""
    objects = kernel_table()["kernels"]
    owner = {fn: name for name, entry in objects.items() for fn in entry["defines"]}
    todo = [owner[fn] for fn in functions if fn in owner]
    linked: set[str] = set()
    while todo:
        name = todo.pop()
        if name not in linked:
            linked.add(name)
            todo += objects[name]["needs"]
    return linked


def program_estimate(functions: Iterable[str], calls: int, staged_calls: int,
                     decl_lines: int) -> int:
    """Bytes the linked bare program takes besides the arena (code, data, other .bss) when
    the model's code names ``functions`` and holds ``calls`` kernel calls (``staged_calls``
    of them reading a weight tile) and ``decl_lines`` lines of declarations
    (CodeShape.program_bytes)."""
    table = kernel_table()
    kernels = sum(table["kernels"][name]["bytes"] for name in kernel_objects(functions))
    model = CALL_BYTES * calls + STAGED_CALL_BYTES * staged_calls + DECL_LINE_BYTES * decl_lines
    return int(PROGRAM_MARGIN * (table["platform_bytes"] + kernels + FIXED_BYTES + model))
