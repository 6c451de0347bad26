"""Fixtures for building and running platform-layer probe programs."""

from __future__ import annotations

from pathlib import Path

import pytest

from dnn64build.errors import UserError
from dnn64build.toolchains import BareToolchain, HostToolchain
from dnn64build.toolchains.tools import find_tool
from tests.tool_required import missing_tool

PROGRAMS = Path(__file__).parent / "programs"


@pytest.fixture(scope="session")
def bare() -> BareToolchain:
    try:
        return BareToolchain()
    except UserError as exc:
        missing_tool(exc)


@pytest.fixture(scope="session")
def host() -> HostToolchain:
    try:
        return HostToolchain()
    except UserError as exc:
        missing_tool(exc)


@pytest.fixture(scope="session")
def mupen64plus() -> None:
    try:
        find_tool("mupen64plus", check_version=False)
    except UserError as exc:
        missing_tool(exc)


@pytest.fixture(scope="session")
def boot_stub(bare: BareToolchain, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return bare.build_boot_stub(tmp_path_factory.mktemp("boot") / "boot.bin")


@pytest.fixture(scope="session")
def cen64() -> None:
    try:
        find_tool("cen64", check_version=False)
    except UserError as exc:
        missing_tool(exc)
