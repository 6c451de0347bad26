"""The one way generated C is written: a line writer and file-scope declarations.

Every generator goes through them, so indentation (4 spaces a level), braces, comments,
wrapped statements and tables of numbers look the same everywhere. Literals (numbers,
strings, comment text) come from cfmt; this module arranges them into lines.

``CWriter`` keeps lines at an indentation level: ``block`` opens a brace (or any pair of
lines) around what is written inside it; ``line`` adds text laid out already; ``code``
adds C statements rendered elsewhere, wrapped to the writer's ``width`` if it has one;
``comment`` is never wrapped; ``define`` writes a macro.

``const_decl``, ``struct_decl``, ``array_decl`` and ``table_decl`` write ``static const``
data, a table one row a line, so that it reads as what it holds; ``hex_bytes`` a blob's
bytes, 16 a line.

``CTemplate`` is a fixed skeleton with ``@{key}`` holes (rules/_library/*.in).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from string import Template

from dnn64build.codegen.cfmt import c_comment, c_int, wrap

INDENT = "    "


class CWriter:
    """C source built line by line; ``source()`` is the text."""

    def __init__(self, width: int | None = None) -> None:
        self.width = width  # wrap ``code`` lines longer than this (cfmt.wrap)
        self._lines: list[str] = []
        self._depth = 0

    def line(self, *texts: str) -> None:
        """Each argument's lines at the current indentation, as they are ("" a blank line,
        never wrapped)."""
        for text in texts:
            for piece in text.split("\n"):
                self._lines.append(INDENT * self._depth + piece if piece else "")

    def code(self, text: str) -> None:
        """C text rendered elsewhere (statements, a loop), each of its lines indented,
        and wrapped after commas when longer than the writer's width."""
        for text_line in text.splitlines():
            indented = INDENT * self._depth + text_line if text_line else ""
            self._lines.append(wrap(indented, self.width) if self.width else indented)

    def comment(self, text: str) -> None:
        """``/* text */`` made safe (cfmt.c_comment), never wrapped."""
        self.line(f"/* {c_comment(text)} */")

    def define(self, name: str, value: object, comment: str = "") -> None:
        """``#define name value``, with ``  /* comment */`` after it if given."""
        self.line(f"#define {name} {value}" + (f"  /* {c_comment(comment)} */" if comment
                                               else ""))

    @contextmanager
    def indented(self) -> Iterator[None]:
        """One level deeper inside the ``with`` (the statement of an ``if`` or ``for``)."""
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1

    @contextmanager
    def block(self, *head: str, close: str = "}") -> Iterator[None]:
        """The ``head`` lines, what is written inside the ``with`` one level deeper, then
        ``close``: ``block("for (...) {")``, ``block("void f(void)", "{")``,
        ``block("static const T x[] = {", close="};")``."""
        self.line(*head)
        with self.indented():
            yield
        self.line(close)

    def source(self, end: str = "\n") -> str:
        """The lines written so far, then ``end``."""
        return "\n".join(self._lines) + end


def braced(items: Iterable[object]) -> str:
    """``{a, b, c}``: an initializer of values already in C."""
    return "{" + ", ".join(str(item) for item in items) + "}"


def const_decl(ctype: str, sym: str, init: str, comment: str = "") -> str:
    """``static const ctype sym = init;`` (``  /* comment */`` after it if given)."""
    return f"static const {ctype} {sym} = {init};" + (f"  /* {c_comment(comment)} */"
                                                      if comment else "")


def struct_decl(ctype: str, sym: str, fields: dict[str, int]) -> str:
    """``static const ctype sym = {.field = value, ...};``, the fields wrapped to lines of
    at most 92 characters."""
    items = [f".{name} = {c_int(value)}" for name, value in fields.items()]
    lines, current = [], ""
    for item in items:
        if current and len(current) + len(item) + 2 > 92:
            lines.append(current + ",")
            current = ""
        current = f"{current}, {item}" if current else item
    lines.append(current)
    w = CWriter()
    with w.block(f"static const {ctype} {sym} = {{", close="};"):
        w.line(*lines)
    return w.source(end="")


def array_decl(ctype: str, sym: str, items: Sequence[str], per_line: int | None = None) -> str:
    """``static const ctype sym[n] = {...};`` of values already in C, ``per_line`` of them
    a line (default: all on one)."""
    step = per_line or max(len(items), 1)
    rows = [", ".join(items[i:i + step]) for i in range(0, len(items), step)]
    return f"static const {ctype} {sym}[{len(items)}] = " + "{" + f",\n{INDENT}".join(rows) + "};"


def table_decl(ctype: str, sym: str, dims: Sequence[int], rows: Sequence[Sequence[str]],
               labels: Sequence[str] | None = None) -> str:
    """A multi-dimensional ``static const`` table, one row (its first index) a line, each
    row's items already in C; with ``labels``, every row ends in ``, /* label */``."""
    w = CWriter()
    with w.block(f"static const {ctype} {sym}{''.join(f'[{d}]' for d in dims)} = {{",
                 close="};"):
        if labels is None:
            w.code(",\n".join(braced(row) for row in rows))
        else:
            w.line(*(f"{braced(row)}, /* {c_comment(label)} */"
                     for row, label in zip(rows, labels, strict=True)))
    return w.source(end="")


def hex_bytes(data: bytes, per_line: int = 16) -> str:
    """``data`` as the items of a C byte array, ``per_line`` a line: ``    0x00, 0x01,...``."""
    return "\n".join(INDENT + " ".join(f"0x{b:02x}," for b in data[i:i + per_line])
                     for i in range(0, len(data), per_line))


class CTemplate(Template):
    """A fixed skeleton of C (or make) text whose holes are ``@{key}``; any other ``@``
    (make's ``$@``, ``@echo``) is text."""

    # string.Template wants all four groups; only ``braced`` can match (``(?!)`` never does)
    pattern = r"@\{(?P<braced>\w+)\}(?P<escaped>(?!))?(?P<named>(?!))?(?P<invalid>(?!))?"

    def fill(self, values: dict[str, str], **more: str) -> str:
        """The text with every hole filled from ``values`` and ``more`` (a hole without a
        value is a KeyError: a bug)."""
        return self.substitute({**values, **more})
