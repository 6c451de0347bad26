"""Run an emulator on a ROM until the program's sentinel line, shared by every emulator.

An emulator never exits by itself: its stdout (line buffered through stdbuf, or the
output is lost when it is killed) is read until DNN64-DONE or DNN64-FAIL, then its
process group is killed (process.run_until). Each emulator says how to tell the
program's IS-Viewer lines from its own log lines.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from dnn64build.emulator.process import Capture, RunResult, run_until
from dnn64build.errors import UserError
from dnn64build.run_protocol import DONE_LINE, FAIL_PREFIX, ends_program

# A stdout line -> the program's text, or None for the emulator's own log lines.
ProgramLine = Callable[[str], str | None]


def line_buffered(argv: Sequence[str]) -> list[str]:
    """``argv`` under ``stdbuf -oL`` when it exists."""
    stdbuf = shutil.which("stdbuf")
    return [stdbuf, "-oL", *argv] if stdbuf else list(argv)


def _tail(capture: Capture, count: int = 15) -> str:
    return "\n".join("    " + line for line in capture.lines[-count:])


def run_rom_session(
    emulator: str,
    argv: Sequence[str],
    rom: Path,
    program_line: ProgramLine,
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    grace: float = 0.0,
) -> RunResult:
    """Run ``argv`` (which boots ``rom`` in ``emulator``) and return the program's lines
    before DNN64-DONE, the emulator's own lines as the log.

    UserError when the time limit is hit, the program reports DNN64-FAIL (e.g. a CPU
    exception), or the emulator exits first. ``grace``: as in process.run_until.
    """

    def stop(line: str) -> bool:
        text = program_line(line)
        return text is not None and ends_program(text)

    capture = run_until(argv, stop=stop, timeout=timeout, env=env, cwd=cwd,
                        grace=grace)
    program = [t for t in map(program_line, capture.lines) if t is not None]
    log = tuple(line for line in capture.lines if program_line(line) is None)
    if capture.timed_out:
        raise UserError(
            f"no {DONE_LINE} line within the {timeout:g} s time limit "
            f"({len(program)} program lines so far)",
            where=str(rom),
            hint="raise the emulator time limit, or check that the program ends with "
            "dnn64_done()\n  last output:\n" + _tail(capture),
        )
    if not capture.stopped:
        raise UserError(
            f"{emulator} exited (status {capture.returncode}) before {DONE_LINE}",
            where=str(rom),
            hint="last output:\n" + _tail(capture),
        )
    if program[-1].startswith(FAIL_PREFIX):
        raise UserError(f"the program failed: {program[-1]}", where=str(rom))
    return RunResult(tuple(program[:-1]), capture.seconds, log)


def check_rom(rom: Path) -> Path:
    """``rom`` if it is a file, else the UserError for a missing ROM."""
    rom = Path(rom)
    if not rom.is_file():
        raise UserError("ROM file not found", where=str(rom))
    return rom
