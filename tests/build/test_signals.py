"""SIGTERM and SIGHUP to ``dnn64build run`` stop the emulator and remove temporary
directories, as Ctrl-C does (a terminated run used to leave mupen64plus running)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dnn64build.errors import UserError
from dnn64build.toolchains.tools import find_tool
from tests.build.conftest import Workspace
from tests.tool_required import missing_tool

MODEL = "targets:\n  - {rule: n64_model, name: a, src: a.onnx, toolchain: bare}\n"


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for a parent that will reap it counts as gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


@pytest.mark.emulator
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_run_stops_the_emulator(workspace: Workspace, tmp_path: Path,
                                           sig: signal.Signals) -> None:
    try:
        emulator = find_tool("mupen64plus", check_version=False)["emulator"]
        find_tool("mips-linux-gnu-gcc")
    except UserError as e:
        missing_tool(e)
    workspace.add_model("a", seed=1)
    workspace.write("models/BUILD.yaml", MODEL)
    workspace.build("//models:a")
    # The real emulator, behind a wrapper that notes its pid before becoming it.
    bindir, pidfile, tmp = tmp_path / "emulator", tmp_path / "emulator.pid", tmp_path / "tmp"
    bindir.mkdir()
    tmp.mkdir()
    wrapper = bindir / "mupen64plus"
    wrapper.write_text(f'#!/bin/sh\necho $$ > "{pidfile}"\nexec "{emulator}" "$@"\n')
    wrapper.chmod(0o755)
    proc = subprocess.Popen(
        [sys.executable, "-m", "dnn64build", "run", "//models:a"], cwd=workspace.root,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "DNN64_MUPEN64PLUS_BINDIR": str(bindir), "TMPDIR": str(tmp)},
    )
    deadline = time.monotonic() + 120
    while not pidfile.exists() or not pidfile.read_text().strip():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the emulator never started"
        time.sleep(0.02)
    emulator_pid = int(pidfile.read_text())
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, stderr
    assert f"stopped by {sig.name}" in stderr and "Traceback" not in stderr
    time.sleep(0.2)
    alive = _alive(emulator_pid)
    if alive:
        os.kill(emulator_pid, signal.SIGKILL)
    assert not alive, "mupen64plus outlived dnn64build run"
    assert list(tmp.iterdir()) == [], "temporary directories left behind"
