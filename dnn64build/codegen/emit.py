"""The one way generated C is written: a line writer.

Every generator goes through it, so indentation (4 spaces a level), braces, comments and
wrapped statements look the same everywhere. Literals (numbers, strings, comment text)
come from cfmt; this module arranges them into lines.

``CWriter`` keeps lines at an indentation level: ``block`` opens a brace (or any pair of
lines) around what is written inside it; ``line`` adds text laid out already; ``code``
adds C statements rendered elsewhere, wrapped to the writer's ``width`` if it has one;
``comment`` is never wrapped; ``define`` writes a macro.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from dnn64build.codegen.cfmt import c_comment, wrap

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
