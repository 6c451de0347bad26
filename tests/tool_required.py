"""What a test that needs a tool (host cc, cross gcc, qemu, mupen64plus, cen64, ares, nginx) does
when the tool is missing, and how the unit tier hides every tool.

A test says what it needs with a marker of TOOL_MARKERS, or by using a fixture of
TOOL_FIXTURES (tests/conftest.py adds the marker); with HEAVY_MARKERS, that it costs
seconds of CPU; every other test is in the `unit` tier, which runs with the tools hidden
(``hidden_tools_env``): a unit test that calls one fails.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NoReturn, TypeVar

import pytest

from dnn64build.errors import UserError
from dnn64build.toolchains.tools import DESCRIPTOR_DIR, load_descriptor

T = TypeVar("T")
# marker -> what a test with it needs (pyproject.toml registers the same names)
TOOL_MARKERS = {
    "host_cc": "compiles or links with the host C compiler (cc)",
    "cross": "needs the MIPS cross compiler and binutils (or qemu-mips)",
    "emulator": "needs mupen64plus and the MIPS cross compiler",
    "cen64": "needs cen64, xvfb-run and the MIPS cross compiler",
    "nginx": "runs a real nginx",
    "libdragon": "opt-in, not in CI: needs ares (tools/setup-ares.sh), a signed IPL3 file "
                 "($DNN64_TEST_IPL3) or libdragon's toolchain ($N64_INST, "
                 "tools/setup-libdragon.sh)",
}
# Not tools, but not unit either: a second or more of CPU per test.
HEAVY_MARKERS = {
    "cli": "runs the dnn64build command line in child processes (every test in tests/build)",
    "zoo": "runs whole zoo models through a stage (by hand, on the module)",
}
# fixture -> the marker a test using it gets (fixtures requested indirectly count too)
TOOL_FIXTURES = {
    "host": "host_cc",
    "kernels": "host_cc",
    "runtime_cache": "host_cc",
    "host_cc": "host_cc",
    "bare": "cross",
    "cross_gcc": "cross",
    "qemu_mips": "cross",
    "mupen64plus": "emulator",
    "cen64": "cen64",
    "ares": "libdragon",
    "signed_ipl3": "libdragon",
    "libdragon": "libdragon",
    "nginx_url": "nginx",
}
# Set while a unit-tier test runs: a missing tool is then the test's bug, not the machine's.
UNIT_TIER_ENV = "DNN64_TEST_UNIT_TIER"
# Executables the unit tier hides besides those the descriptors in third_party/ name:
# compilers, binutils and emulators that tests run by name.
HIDDEN_PATTERNS = ("cc", "c89", "c99", "gcc", "gcc-*", "clang*", "*-linux-gnu-*", "mips*",
                   "qemu-*", "ar", "as", "ld", "ld.*", "nm", "objcopy", "objdump",
                   "mupen64plus*", "Xvfb")


def missing_tool(exc: UserError) -> NoReturn:
    """Skip the test, except in CI, which installs every tool (tools/setup.sh): there a
    missing tool is a failure, not a skip. In the unit tier it is a missing marker."""
    if os.environ.get(UNIT_TIER_ENV):
        pytest.fail(f"a unit-tier test needs a tool ({exc}); give it a tool fixture or "
                    f"marker (tests/tool_required.py: {', '.join(TOOL_MARKERS)})")
    if os.environ.get("CI"):
        pytest.fail(f"CI lacks a tool that tools/setup.sh should install: {exc}")
    pytest.skip(str(exc))


def require(find: Callable[[], T]) -> T:
    """``find()`` (a toolchain, a found tool), or missing_tool if it raises UserError."""
    try:
        return find()
    except UserError as exc:
        missing_tool(exc)


def require_executable(name: str, package: str) -> str:
    """The path of ``name`` on PATH; missing_tool (Debian ``package`` installs it) if none."""
    path = shutil.which(name)
    if path is None:
        missing_tool(UserError(f"{name} not found on PATH", hint=f"apt-get install {package}"))
    return path


def _descriptors() -> list:
    return [load_descriptor(p.stem) for p in sorted(DESCRIPTOR_DIR.glob("*.yaml"))]


def _is_tool(name: str, descriptor_names: Iterable[str]) -> bool:
    return name in descriptor_names or any(fnmatch.fnmatchcase(name, p)
                                           for p in HIDDEN_PATTERNS)


def hidden_tools_env(root: Path) -> dict[str, str | None]:
    """Environment changes (None: unset) under which no tool can be found: PATH becomes
    ``root``/bin, filled with links to every other executable on PATH, and each
    descriptor's own directory variable names an empty directory (which also hides the
    extra_dirs such as /usr/games)."""
    descriptors = _descriptors()
    names = {exe for d in descriptors for exe in d.executables.values()}
    bindir, empty = root / "bin", root / "empty"
    bindir.mkdir(parents=True)
    empty.mkdir()
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not directory or not os.path.isdir(directory):
            continue
        for entry in os.scandir(directory):
            link = bindir / entry.name
            if (_is_tool(entry.name, names) or os.path.lexists(link)
                    or not os.access(entry.path, os.X_OK) or entry.is_dir()):
                continue
            link.symlink_to(entry.path)
    changes: dict[str, str | None] = {"PATH": str(bindir), UNIT_TIER_ENV: "1"}
    for d in descriptors:
        if d.override_env:
            changes[d.override_env] = str(empty)
        if d.root_env:
            changes[d.root_env] = None
    return changes
