"""Run a ROM headless in mupen64plus and collect what it prints on IS-Viewer.

mupen64plus never exits by itself: we read its stdout (line buffered through
stdbuf, or the output is lost when it is killed) until the program's
DNN64-DONE line, then kill its process group. N64-NOTES.md, "Booting in
mupen64plus".
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from dnn64build.emulator.output import DONE_LINE, FAIL_PREFIX, RunResult
from dnn64build.emulator.process import Capture, run_until
from dnn64build.errors import UserError
from dnn64build.toolchains.tools import find_tool

IS64_PREFIX = "Core: IS64: "
# The low-level RSP plugin runs the project's own microcode (dummy and HLE do not).
RSP_PLUGIN = "mupen64plus-rsp-z64"
# Emulation modes: 0 pure interpreter, 1 cached interpreter, 2 dynamic recompiler.
EMUMODES = (0, 1, 2)


def emulator_argv(emulator: str, rom: Path, configdir: Path, emumode: int = 2) -> list[str]:
    """The headless mupen64plus command line (without the stdbuf wrapper)."""
    if emumode not in EMUMODES:
        raise ValueError(f"emumode must be one of {EMUMODES}")
    return [
        emulator, "--noosd", "--nosaveoptions", "--gfx", "dummy", "--audio", "dummy",
        "--input", "dummy", "--rsp", RSP_PLUGIN, "--emumode", str(emumode),
        "--configdir", str(configdir), str(rom),
    ]  # fmt: skip


def _program_line(line: str) -> str | None:
    return line[len(IS64_PREFIX) :] if line.startswith(IS64_PREFIX) else None


def _tail(capture: Capture, count: int = 15) -> str:
    return "\n".join("    " + line for line in capture.lines[-count:])


def run_rom(
    rom: Path,
    *,
    timeout: float = 60.0,
    emumode: int = 2,
    env: Mapping[str, str] | None = None,
) -> RunResult:
    """Boot ``rom`` and return the lines it printed before DNN64-DONE.

    UserError when the emulator is missing, the time limit is hit, the program
    reports DNN64-FAIL (e.g. a CPU exception), or the emulator exits first.
    """
    rom = Path(rom)
    if not rom.is_file():
        raise UserError("ROM file not found", where=str(rom))
    emulator = find_tool("mupen64plus", env=env, check_version=False)["emulator"]
    stdbuf = shutil.which("stdbuf")
    with tempfile.TemporaryDirectory(prefix="dnn64-mupen-") as configdir:
        argv = emulator_argv(emulator, rom.resolve(), Path(configdir), emumode)
        if stdbuf:
            argv = [stdbuf, "-oL", *argv]

        def stop(line: str) -> bool:
            text = _program_line(line)
            return text is not None and (text == DONE_LINE or text.startswith(FAIL_PREFIX))

        capture = run_until(argv, stop=stop, timeout=timeout, env=env, cwd=configdir)
    program = [t for t in map(_program_line, capture.lines) if t is not None]
    log = tuple(line for line in capture.lines if _program_line(line) is None)
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
            f"mupen64plus exited (status {capture.returncode}) before {DONE_LINE}",
            where=str(rom),
            hint="last output:\n" + _tail(capture),
        )
    if program[-1].startswith(FAIL_PREFIX):
        raise UserError(f"the program failed: {program[-1]}", where=str(rom))
    return RunResult(tuple(program[:-1]), capture.seconds, log)
