"""A build killed mid-stage leaves no corrupt output, and the next build completes."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from tests.build.conftest import Workspace


def _start(ws: Workspace) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "dnn64build", "build", "-j", "1", "//..."], cwd=ws.root,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )


def _wait_for_progress(proc: subprocess.Popen[str], marker: str) -> None:
    assert proc.stdout
    for line in proc.stdout:
        if marker in line:
            return
    raise AssertionError(f"the build ended before {marker!r}")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_interrupted_build_recovers(two_models: Workspace, tmp_path, sig: signal.Signals) -> None:
    reference = Workspace(tmp_path / "reference")
    shutil.copytree(two_models.root, reference.root)
    reference.build("//...")

    proc = _start(two_models)
    _wait_for_progress(proc, "] Import")
    time.sleep(0.3)  # somewhere inside a stage
    os.killpg(proc.pid, sig)
    proc.wait(timeout=60)
    if sig == signal.SIGINT:  # the stage had the chance to remove its temporary file
        assert list((two_models.root / "dnn64-out").rglob(".*.tmp*")) == []

    two_models.build("//...")
    assert two_models.build("//...") == []
    assert two_models.outputs() == reference.outputs()
