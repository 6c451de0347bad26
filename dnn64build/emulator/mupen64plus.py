"""Run a ROM headless in mupen64plus and collect what it prints on IS-Viewer.

mupen64plus never exits by itself: rom_session reads its stdout until the
program's DNN64-DONE line, then stops it. N64-NOTES.md, "Booting in mupen64plus".
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path

from dnn64build.emulator.process import RunResult
from dnn64build.emulator.rom_session import check_rom, line_buffered, run_rom_session
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
    rom = check_rom(rom)
    emulator = find_tool("mupen64plus", env=env, check_version=False)["emulator"]
    with tempfile.TemporaryDirectory(prefix="dnn64-mupen-") as configdir:
        argv = line_buffered(emulator_argv(emulator, rom.resolve(), Path(configdir), emumode))
        return run_rom_session("mupen64plus", argv, rom, _program_line, timeout=timeout,
                               env=env, cwd=configdir)
