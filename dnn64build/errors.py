"""The one exception type for errors a user can cause.

A ``UserError`` is printed as one clear message (no traceback) and makes the
command exit non-zero. Anything else that escapes is a bug in dnn64build and is
reported as such.
"""

from __future__ import annotations

import errno
from collections.abc import Iterable


class UserError(Exception):
    """An error in the user's input: manifest, label, model, data or environment.

    ``where`` names the file (with ``:line:col`` when known) or target; ``hint``
    says what to do about it.
    """

    def __init__(self, message: str, *, where: str | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.where = where
        self.hint = hint

    def __str__(self) -> str:
        text = f"{self.where}: {self.message}" if self.where else self.message
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


# OSErrors the machine causes, not dnn64build: a full disk or quota, a read-only file
# system, a file bigger than the file system takes, a failing device.
_MACHINE_ERRNOS = {errno.ENOSPC: "free space on that file system, then build again",
                   errno.EDQUOT: "free space within your quota, then build again",
                   errno.EROFS: "the file system is mounted read-only",
                   errno.EFBIG: "the file system takes no file this big",
                   errno.EIO: "the storage device failed a read or write"}


def machine_error(exc: BaseException) -> UserError | None:
    """The UserError an OSError the machine caused stands for (no space left while a stage
    writes, ...), or None for any other exception (a bug: the caller says so)."""
    if not isinstance(exc, OSError) or exc.errno not in _MACHINE_ERRNOS:
        return None
    what = f"{exc.filename}: " if exc.filename else ""
    return UserError(f"{what}{exc.strerror}", hint=_MACHINE_ERRNOS[exc.errno])


def short_repr(value: object, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters: for messages that quote what a user
    wrote, which may be a string or structure of any size."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit - 5]}...{text[-2:]}"


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices``, or nothing."""
    import difflib  # only on an error's way: every command imports this module

    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
