"""ninja's output as the user sees it: its progress lines, and what the actions print, as
plain text.

ninja passes an action's output on as the action wrote it (a remote cache hit replays a
run's stderr): text without a final newline runs into the next progress line, terminal
escape sequences reach the terminal, and a line may read like the build's summary. So
each progress line carries a token of this build (NINJA_STATUS) that no earlier output can
know, and the counts come from those lines alone; action output is shown with escape
sequences removed, other control characters spelled out, and a line that starts like the
summary indented.
"""

from __future__ import annotations

import os
import re

SUMMARY = ("Build succeeded", "Build FAILED")  # how commands/build.py's summary starts
_STATUS = re.compile(r"\[(\d+)/(\d+)\] ")
# CSI (colours, cursor, clear screen), OSC (window title) and two-byte escape sequences.
_ESCAPE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # what is left but tab and newline
# ninja's own lines that say nothing the summary does not.
_QUIET = ("ninja: no work to do", "ninja: build stopped")


class NinjaProgress:
    """Reads ninja's output line by line: what to show, and how many actions ran."""

    def __init__(self, *, verbose: bool) -> None:
        self._token = os.urandom(6).hex()
        self._verbose = verbose
        self._skip_command = False
        self.ran = 0
        self.needed = 0

    @property
    def status_format(self) -> str:
        """NINJA_STATUS for the ninja whose output this reads."""
        return f"{self._token}[%f/%t] "

    def show(self, line: str) -> str:
        """What to print for one line of ninja's output (possibly nothing)."""
        output, token, status = line.partition(self._token)
        shown = self._action_output(output) if output else ""
        if token and (m := _STATUS.match(status)):
            self.ran, self.needed = int(m[1]), int(m[2])
            shown += status
        return shown

    def _action_output(self, text: str) -> str:
        if self._skip_command:  # ninja echoes a failed action's full command line: noise
            self._skip_command = False
            return ""
        self._skip_command = text.startswith("FAILED: ") and not self._verbose
        if text.startswith(_QUIET):
            return ""
        return "".join(_plain(line) for line in text.splitlines(keepends=True))


def _plain(line: str) -> str:
    """One line of an action's output as plain text, ending with a newline."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}",
                        _ESCAPE.sub("", line.removesuffix("\n")))
    return f"  {text}\n" if text.startswith(SUMMARY) else f"{text}\n"
