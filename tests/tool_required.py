"""What a test does when a tool it needs (cross gcc, mupen64plus) is not installed."""

import os

import pytest

from dnn64build.errors import UserError


def missing_tool(exc: UserError) -> None:
    """Skip the test, except in CI, which installs every tool (tools/setup.sh): there a
    missing tool is a failure, not a skip."""
    if os.environ.get("CI"):
        pytest.fail(f"CI lacks a tool that tools/setup.sh should install: {exc}")
    pytest.skip(str(exc))
