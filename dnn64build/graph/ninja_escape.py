"""Text that reaches build.ninja: what ninja can represent, and escaping it fully.

ninja escapes ``$``, space and ``:`` with a ``$``, but has no way to write a newline, a
carriage return, a NUL or a ``|`` inside a path, and reads the file as UTF-8. Such names
are refused before anything is written (``unwritable``). ``ninja_syntax``'s ``escape_path``
escapes ``$`` only before a space, so ``NinjaWriter`` doubles the other ``$`` of every path
first, and escapes the values of build variables (``ninja_syntax`` writes those raw).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ninja.ninja_syntax import Writer, as_list, escape

_UNWRITABLE_TEXT = re.compile(r"[\n\r\x00]")  # anywhere in build.ninja
_UNWRITABLE_PATH = re.compile(r"[\n\r\x00|]")  # a | in a path would split its list
_LONE_DOLLAR = re.compile(r"\$(?! )")  # escape_path turns "$ " into "$$$ " itself


def unwritable(text: str, *, path: bool = True) -> str | None:
    """Why ``text`` (a path, or with ``path=False`` a command's text) cannot appear in
    build.ninja, or None when it can."""
    if m := (_UNWRITABLE_PATH if path else _UNWRITABLE_TEXT).search(text):
        return f"it contains {m[0]!r}, which ninja cannot represent"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "it is not valid UTF-8"
    return None


def _path(path: str) -> str:
    if reason := unwritable(path):  # the callers validate user-named paths: this is a bug
        raise ValueError(f"path {path!r} cannot be written to build.ninja: {reason}")
    return _LONE_DOLLAR.sub("$$", path)


def _paths(paths: str | list[str] | None) -> list[str]:
    return [_path(p) for p in as_list(paths)]


class NinjaWriter(Writer):
    """``ninja_syntax.Writer`` whose build statements escape every path and variable."""

    def build(  # type: ignore[override]
        self,
        outputs: str | list[str],
        rule: str,
        inputs: str | list[str] | None = None,
        implicit: str | list[str] | None = None,
        variables: Mapping[str, str] | None = None,
    ) -> list[str]:
        super().build(
            _paths(outputs), rule, _paths(inputs), implicit=_paths(implicit),
            variables={k: escape(v) for k, v in (variables or {}).items()},
        )
        return as_list(outputs)
