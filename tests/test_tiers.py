"""The test tiers themselves (docs/testing.md): a unit test finds no tool, a missing tool
fails it instead of skipping, and a tool fixture keeps its test out of the unit tier."""

from __future__ import annotations

import os
import shutil

import pytest

from dnn64build.errors import UserError
from dnn64build.toolchains import HostToolchain
from dnn64build.toolchains.tools import DESCRIPTOR_DIR, find_tool
from tests.tool_required import missing_tool


def test_a_unit_test_finds_no_tool(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("unit") is not None
    for exe in ("cc", "gcc", "ar", "mips-linux-gnu-gcc", "mips-linux-gnu-as", "qemu-mips",
                "mupen64plus", "cen64", "xvfb-run", "nginx"):
        assert shutil.which(exe) is None, exe
    for descriptor in sorted(DESCRIPTOR_DIR.glob("*.yaml")):
        with pytest.raises(UserError):
            find_tool(descriptor.stem, check_version=False)
    with pytest.raises(UserError):
        HostToolchain()
    assert shutil.which("sh") is not None  # the other executables stay


def test_a_unit_test_that_needs_a_tool_fails_instead_of_skipping() -> None:
    with pytest.raises(pytest.fail.Exception, match="unit-tier test needs a tool"):
        missing_tool(UserError("cc not found"))


def test_a_tool_fixture_marks_its_test_and_keeps_it_out_of_the_unit_tier(
        host_cc: str, request: pytest.FixtureRequest) -> None:
    markers = {marker.name for marker in request.node.iter_markers()}
    assert "host_cc" in markers and "unit" not in markers
    assert os.access(host_cc, os.X_OK)
