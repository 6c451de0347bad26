"""Settings for every test suite: hypothesis profiles and the test tiers.

Under CI=true, hypothesis draws the same examples on every run (``derandomize``), so a
CI result can be reproduced; a developer's run explores new random examples each time
(and keeps the failures it finds in .hypothesis/ for the next run).

Tiers (README.md, docs/testing.md): a test that needs a tool says so with a marker of
tests/tool_required.py's TOOL_MARKERS or by using one of its TOOL_FIXTURES; a test that
costs seconds of CPU without a tool has one of HEAVY_MARKERS; every other test that is
not ``slow`` is marked ``unit`` here and runs with the tools hidden, so ``pytest -m unit``
needs no compiler and no emulator, and a unit test that calls one fails.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from dnn64build.errors import UserError
from dnn64build.toolchains import BareToolchain, HostToolchain, LibdragonToolchain
from dnn64build.toolchains.tools import FoundTool, find_tool
from tests.tool_required import (
    HEAVY_MARKERS,
    TOOL_FIXTURES,
    TOOL_MARKERS,
    hidden_tools_env,
    missing_tool,
    require,
    require_executable,
)

settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

UNIT = "unit"
SIGNED_IPL3_ENV = "DNN64_TEST_IPL3"
BUILD_TESTS = Path(__file__).parent / "build"


def pytest_configure(config: pytest.Config) -> None:
    for marker, meaning in {**TOOL_MARKERS, **HEAVY_MARKERS}.items():
        config.addinivalue_line("markers", f"{marker}: {meaning}")
    config.addinivalue_line(
        "markers", f"{UNIT}: none of those markers and not slow (tests/conftest.py adds it)")


@pytest.hookimpl(tryfirst=True)  # before -m deselects by these markers
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for fixture in sorted(TOOL_FIXTURES.keys() & set(getattr(item, "fixturenames", ()))):
            item.add_marker(TOOL_FIXTURES[fixture])
        if item.path.is_relative_to(BUILD_TESTS):
            item.add_marker("cli")
        if not any(item.get_closest_marker(m) for m in (*TOOL_MARKERS, *HEAVY_MARKERS, "slow")):
            item.add_marker(UNIT)


_hidden: dict[str, str | None] = {}
_hidden_root = tempfile.TemporaryDirectory(prefix="dnn64-no-tools-")


def _hidden_env() -> dict[str, str | None]:
    """The environment without tools, made once per session."""
    if not _hidden:
        _hidden.update(hidden_tools_env(Path(_hidden_root.name)))
    return _hidden


def _apply(changes: dict[str, str | None]) -> None:
    for name, value in changes.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def pytest_collection_finish(session: pytest.Session) -> None:
    """A run of unit tests only hides the tools for the whole session, so that fixtures of
    any scope see no tool either."""
    if session.items and all(item.get_closest_marker(UNIT) for item in session.items):
        _apply(_hidden_env())


@pytest.fixture(autouse=True)
def _unit_tests_see_no_tools(request: pytest.FixtureRequest) -> Iterator[None]:
    """In a mixed run, hide the tools around each unit test."""
    if request.node.get_closest_marker(UNIT) is None:
        yield
        return
    changes = _hidden_env()
    saved = {name: os.environ.get(name) for name in changes}
    _apply(changes)
    try:
        yield
    finally:
        _apply(saved)


# The tool fixtures (TOOL_FIXTURES gives each one's marker).


@pytest.fixture(scope="session")
def bare() -> BareToolchain:
    return require(BareToolchain)


@pytest.fixture(scope="session")
def host() -> HostToolchain:
    return require(HostToolchain)


@pytest.fixture(scope="session")
def mupen64plus() -> FoundTool:
    return require(lambda: find_tool("mupen64plus", check_version=False))


@pytest.fixture(scope="session")
def cen64() -> FoundTool:
    return require(lambda: find_tool("cen64", check_version=False))


@pytest.fixture(scope="session")
def ares() -> FoundTool:
    return require(lambda: find_tool("ares", check_version=False))


@pytest.fixture(scope="session")
def libdragon() -> LibdragonToolchain:
    """libdragon's toolchain under $N64_INST (tools/setup-libdragon.sh builds one)."""
    return require(LibdragonToolchain)


@pytest.fixture(scope="session")
def signed_ipl3() -> Path:
    """A CIC-6102-signed IPL3 file that loads a flat program, named by $DNN64_TEST_IPL3
    (libdragon's boot/bin/ipl3_compat.z64): the libdragon tier commits none."""
    path = os.environ.get(SIGNED_IPL3_ENV)
    if not path or not Path(path).is_file():
        missing_tool(UserError(f"${SIGNED_IPL3_ENV} names no file ({path or 'unset'})",
                               hint="set it to libdragon's boot/bin/ipl3_compat.z64"))
    return Path(path).resolve()


@pytest.fixture(scope="session")
def host_cc() -> str:
    """The host C compiler's path, for tests that run it themselves."""
    return require_executable("cc", "gcc")


@pytest.fixture(scope="session")
def cross_gcc() -> str:
    """Debian's MIPS cross gcc, for tests that run it themselves."""
    return require_executable("mips-linux-gnu-gcc", "gcc-mips-linux-gnu")


@pytest.fixture(scope="session")
def qemu_mips() -> str:
    """qemu's big-endian MIPS user-mode emulator."""
    return require_executable("qemu-mips", "qemu-user")
