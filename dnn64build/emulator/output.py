"""What a dnn64 program prints: sentinel lines and exact hex dumps.

Mirrors kernels/platform/dnn64_platform.h (DNN64_DONE_LINE, DNN64_FAIL_PREFIX,
dnn64_print_i8_hex, dnn64_print_f32_hex).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

DONE_LINE = "DNN64-DONE"
FAIL_PREFIX = "DNN64-FAIL"


@dataclass(frozen=True)
class RunResult:
    """Lines the program printed (sentinel excluded), wall time, runner log."""

    lines: tuple[str, ...]
    seconds: float
    log: tuple[str, ...] = ()

    def value(self, prefix: str) -> str:
        """The rest of the first line starting with ``prefix + ' '``."""
        for line in self.lines:
            if line.startswith(prefix + " "):
                return line[len(prefix) + 1 :]
        raise KeyError(prefix)


def parse_hex_dump(
    lines: Sequence[str], prefix: str, dtype: str, count: int | None = None
) -> np.ndarray:
    """Decode the lines ``dnn64_print_i8_hex``/``dnn64_print_f32_hex`` wrote.

    ``dtype``: "int8" or "float32"; ``count`` drops the int8 padding of a
    partial last word. Raises ValueError on gaps, bad lines or a short dump.
    """
    chunks: list[np.ndarray] = []
    expected = 0
    for line in lines:
        fields = line.split(" ")
        if fields[0] != prefix:
            continue
        start = int(fields[1])
        if start != expected:
            raise ValueError(f"{prefix}: expected index {expected}, got {start}")
        words = bytes.fromhex("".join(fields[2:]))
        if dtype == "int8":
            chunk = np.frombuffer(words, dtype=np.int8)
        elif dtype == "float32":
            chunk = np.frombuffer(words, dtype=">u4").astype(np.uint32).view(np.float32)
        else:
            raise ValueError(f"unsupported dtype {dtype}")
        chunks.append(chunk)
        expected += len(chunk)
    if not chunks:
        raise ValueError(f"no lines with prefix {prefix!r}")
    values = np.concatenate(chunks)
    if count is not None:
        if len(values) < count:
            raise ValueError(f"{prefix}: {len(values)} values, expected {count}")
        values = values[:count]
    return values
