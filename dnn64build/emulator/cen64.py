"""Run a ROM in cen64, the cycle-accurate emulator, and collect its IS-Viewer lines.

cen64 models the VR4300's caches and latencies, so CP0 Count (46.875 MHz, half the
CPU clock) measures real cycles there: cycles = Count x 2. This Debian build quits
at once without a window, so it runs under ``xvfb-run -a`` with ``-noaudio``; it
prints IS-Viewer text unprefixed on stdout (``-is-viewer``) among its own messages,
and never exits by itself: rom_session stops it at the sentinel line. It needs a
PIF ROM (ours: emulator/pif.py) and a ROM whose IPL3-area CRC it knows (the default
boot stub's, rom/pack.py). N64-NOTES.md, "cen64".
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping
from pathlib import Path

from dnn64build.emulator.pif import pif_rom
from dnn64build.emulator.process import RunResult
from dnn64build.emulator.rom_session import check_rom, line_buffered, run_rom_session
from dnn64build.toolchains.tools import find_tool

CPU_HZ = 93.75e6
CYCLES_PER_COUNT = 2  # CP0 Count advances once every 2 CPU cycles
# cen64's own stdout lines; everything else is the program's IS-Viewer text.
_LOG_LINE = re.compile(
    r"(Warning: cen64 |cen64 |cen64 compiled with|Your CPU supports|Unknown or corrupted "
    r"PIFROM|Unimplemented instruction:|Unknown CIC type|Failed to initialize)"
)
# Seconds between SIGTERM and SIGKILL: Xvfb removes its lock files on SIGTERM.
_GRACE = 2.0


def cen64_argv(xvfb_run: str, emulator: str, pif: Path, rom: Path, authfile: Path) -> list[str]:
    """The cen64 command line under xvfb-run (its X authority file in our temp dir, so
    that nothing is left behind when the group is stopped)."""
    return [xvfb_run, "-a", "-f", str(authfile),
            *line_buffered([emulator, "-noaudio", "-is-viewer", str(pif), str(rom)])]


def _program_line(line: str) -> str | None:
    return None if not line.strip() or _LOG_LINE.match(line) else line


def run_rom_cen64(
    rom: Path,
    *,
    timeout: float = 300.0,
    env: Mapping[str, str] | None = None,
) -> RunResult:
    """Boot ``rom`` in cen64 and return the lines it printed before DNN64-DONE.

    UserError when cen64 or xvfb-run is missing, the time limit is hit, the program
    reports DNN64-FAIL, or cen64 exits first (e.g. on an IPL3 area it does not know).
    """
    rom = check_rom(rom)
    tool = find_tool("cen64", env=env, check_version=False)
    with tempfile.TemporaryDirectory(prefix="dnn64-cen64-") as tmp:
        pif = Path(tmp) / "pif.bin"
        pif.write_bytes(pif_rom())
        argv = cen64_argv(tool["xvfb_run"], tool["emulator"], pif, rom.resolve(),
                          Path(tmp) / "Xauthority")
        return run_rom_session("cen64", argv, rom, _program_line, timeout=timeout, env=env,
                               cwd=tmp, grace=_GRACE)


def cycles(count_ticks: float) -> float:
    """CPU cycles from CP0 Count ticks measured in cen64."""
    return count_ticks * CYCLES_PER_COUNT
