"""Fixtures for building and running platform-layer probe programs (the tool fixtures
bare, host, mupen64plus and cen64 are in tests/conftest.py)."""

from __future__ import annotations

import pytest

from dnn64build.toolchains import BareToolchain


@pytest.fixture(scope="session")
def boot_stub(bare: BareToolchain, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return bare.build_boot_stub(tmp_path_factory.mktemp("boot") / "boot.bin")
