"""Run a ROM in ares, the accurate emulator libdragon recommends, and collect its
IS-Viewer lines.

ares checks the IPL3 as a console's PIF does ("invalid IPL2 checksum" for dnn64's own
boot stub), so it boots only ROMs with a CIC-signed IPL3 (``ipl3:``, docs/rom-format.md).
It needs a window: it runs under ``xvfb-run -a`` with audio and input drivers off, prints
IS-Viewer text unprefixed on stdout among its own messages, needs no PIF file and never
exits by itself: rom_session stops it at the sentinel line. Build it with
tools/setup-ares.sh (Debian's ares has no N64 core).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping
from pathlib import Path

from dnn64build.emulator.process import RunResult
from dnn64build.emulator.rom_session import check_rom, line_buffered, run_rom_session
from dnn64build.run_protocol import FAIL_PREFIX
from dnn64build.toolchains.tools import find_tool

# ares's own stdout lines (bracketed component messages, which it colours with ANSI
# escapes); the rest is the program's.
_LOG_LINE = re.compile(r"\[[A-Za-z0-9:_ ]+\] ")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# What ares prints when its PIF refuses the IPL3 (dnn64build's unsigned boot stub). Nothing
# runs after it, so it ends the run as a failure rather than at the time limit.
_PIF = "[PIF::main] "
_REFUSED = _PIF + "invalid IPL2 checksum"
# Seconds between SIGTERM and SIGKILL: Xvfb removes its lock files on SIGTERM.
_GRACE = 2.0


def ares_argv(xvfb_run: str, emulator: str, rom: Path, authfile: Path) -> list[str]:
    """The headless ares command line under xvfb-run (its X authority file in our temp
    dir, so that nothing is left behind when the group is stopped)."""
    return [xvfb_run, "-a", "-f", str(authfile), *line_buffered([
        emulator, "--system", "Nintendo 64", "--no-file-prompt",
        "--setting", "Audio/Driver=None", "--setting", "Input/Driver=None", str(rom),
    ])]  # fmt: skip


def _program_line(line: str) -> str | None:
    plain = _ANSI.sub("", line)
    if _REFUSED in plain:
        return (f"{FAIL_PREFIX} ares refused the ROM's IPL3 ({plain.split(_PIF, 1)[1]}); "
                "build it with a signed ipl3: such as libdragon's ipl3_compat.z64 "
                "(docs/platforms.md, 'Boots')")
    return None if not plain.strip() or _LOG_LINE.match(plain) else line


def run_rom_ares(
    rom: Path,
    *,
    timeout: float = 300.0,
    env: Mapping[str, str] | None = None,
) -> RunResult:
    """Boot ``rom`` in ares and return the lines it printed before DNN64-DONE.

    UserError when ares or xvfb-run is missing, ares refuses the IPL3 (an unsigned one),
    the time limit is hit, the program reports DNN64-FAIL, or ares exits first.
    """
    rom = check_rom(rom)
    tool = find_tool("ares", env=env, check_version=False)
    with tempfile.TemporaryDirectory(prefix="dnn64-ares-") as tmp:
        argv = ares_argv(tool["xvfb_run"], tool["emulator"], rom.resolve(),
                         Path(tmp) / "Xauthority")
        return run_rom_session("ares", argv, rom, _program_line, timeout=timeout, env=env,
                               cwd=tmp, grace=_GRACE)
