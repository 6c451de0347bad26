"""Read the test programs' hex dumps: ``<prefix> <first index> <words>`` lines."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dnn64build.run_protocol import decode_hex_words


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
        chunk = decode_hex_words(fields[2:], dtype)
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
