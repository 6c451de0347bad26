"""What a dnn64 program prints: its sentinel lines and its exact hex words.

Mirrors kernels/platform/dnn64_platform.h (DNN64_DONE_LINE, DNN64_FAIL_PREFIX,
dnn64_print_i8_hex, dnn64_print_f32_hex).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

DONE_LINE = "DNN64-DONE"
FAIL_PREFIX = "DNN64-FAIL"


def ends_program(line: str) -> bool:
    """True for the last line a program prints: DNN64-DONE, or DNN64-FAIL and why."""
    return line == DONE_LINE or line.startswith(FAIL_PREFIX)


def decode_hex_words(words: Sequence[str], dtype: str) -> np.ndarray:
    """The values in 8-digit hex words as ``dnn64_print_i8_hex``/``dnn64_print_f32_hex``
    write them: int8, four to a word in array order; float32, one IEEE-754 bit pattern
    a word. ValueError for a bad word or another dtype."""
    data = bytes.fromhex("".join(words))
    if dtype == "int8":
        return np.frombuffer(data, dtype=np.int8)
    if dtype == "float32":
        return np.frombuffer(data, dtype=">u4").astype(np.uint32).view(np.float32)
    raise ValueError(f"unsupported dtype {dtype}")


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
