"""C text helpers: exact literals and safe comments for generated code."""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

FLT_MAX = float(np.finfo(np.float32).max)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def is_identifier(text: str) -> bool:
    return bool(_IDENT.match(text))


def c_float(value: float) -> str:
    """A C float literal that reads back as exactly float32(value).

    9 significant digits round-trip every float32; infinities become +-FLT_MAX
    (callers only pass them as clamp bounds, where the two agree on finite data).
    """
    v = float(np.float32(value))
    if np.isnan(v):
        raise ValueError("NaN has no C float literal")
    if np.isinf(v):
        v = FLT_MAX if v > 0 else -FLT_MAX
    text = f"{v:.9g}"
    if not any(ch in text for ch in ".en"):
        text += ".0"
    return text + "f"


def c_int(value: int) -> str:
    """An int32_t literal (INT32_MIN has no literal of its own in C)."""
    value = int(value)
    if not -(2**31) <= value < 2**31:
        raise ValueError(f"{value} does not fit int32_t")
    return "(-2147483647 - 1)" if value == -(2**31) else str(value)


def c_ints(values: Iterable[int]) -> str:
    return "{" + ", ".join(c_int(v) for v in values) + "}"


def c_call(fn: str, *args: object) -> str:
    """The C statement ``fn(arg, ...);``."""
    return f"{fn}({', '.join(str(a) for a in args)});"


def c_comment(text: str) -> str:
    """Text safe inside /* */ (ONNX names may contain anything)."""
    cleaned = "".join(ch if " " <= ch <= "~" else "?" for ch in text)
    return cleaned.replace("*/", "*_/").replace("/*", "/_*")


def c_string(text: str) -> str:
    """A C string literal for printable ASCII ``text``."""
    if not all(" " <= ch <= "~" for ch in text):
        raise ValueError(f"{text!r} is not printable ASCII")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def wrap(line: str, width: int = 100) -> str:
    """Break a long C statement after commas; continuation lines get 4 more spaces."""
    if len(line) <= width:
        return line
    indent = line[:len(line) - len(line.lstrip())] + "    "
    pieces = line.split(", ")
    lines, current = [], pieces[0]
    for piece in pieces[1:]:
        if len(current) + 2 + len(piece) > width:
            lines.append(current + ",")
            current = indent + piece
        else:
            current += ", " + piece
    lines.append(current)
    return "\n".join(lines)
