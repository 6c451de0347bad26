"""What the per-action client and the no-op build import: their time is mostly Python's
start-up and imports, paid once per action and on every build (docs/benchmarks.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from dnn64build.graph.generate import CLIENT
from tests.build.conftest import Workspace

# Each costs more than the client's own work (enum, re, threading come with them).
CLIENT_MUST_NOT_IMPORT = {"subprocess", "socket", "signal", "enum", "re", "threading",
                          "selectors", "typing", "dataclasses"}
# What the no-op build used to import for nothing: dataclasses brings inspect (ast, dis,
# tokenize); the ninja package asks sysconfig where its binary is.
NO_OP_MUST_NOT_IMPORT = {"dataclasses", "inspect", "ninja", "traceback", "difflib", "yaml",
                         "numpy", "onnx", "dnn64build.graph.generate"}


def _imported(stderr: str) -> set[str]:
    """The modules ``python -X importtime`` reports as imported."""
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines()
            if line.startswith("import time:") and "|" in line} - {"package"}


def test_a_command_action_imports_only_builtin_modules(tmp_path: Path) -> None:
    write = [sys.executable, "-c", "open('out.tmp', 'w').write('x')"]
    proc = subprocess.run([sys.executable, "-S", "-E", "-X", "importtime", str(CLIENT),
                           "command", "--out", "out", "--", *write],
                          cwd=tmp_path, capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if k != "DNN64_WORKER"})
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out").read_text() == "x"  # the command ran and its output moved
    imported = _imported(proc.stderr)
    assert "client" in imported  # as a module (bytecode cached), not compiled as a script
    assert not imported & CLIENT_MUST_NOT_IMPORT, imported & CLIENT_MUST_NOT_IMPORT


def test_a_no_op_build_imports_little_beyond_the_interpreter(ws_a: Workspace) -> None:
    ws_a.run("build", "//...")
    # Modules already loaded before the CLI starts (by site, .pth files) do not count.
    script = ("import sys\n"
              "before = set(sys.modules)\n"
              "from dnn64build.cli import main\n"
              "status = main(['build', '//...'])\n"
              "print(' '.join(sorted(set(sys.modules) - before)))\n"
              "sys.exit(status)\n")
    proc = subprocess.run([sys.executable, "-c", script], cwd=ws_a.root, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    assert "0 actions run" in proc.stderr
    imported = set(proc.stdout.split())
    assert "dnn64build.graph.runner" in imported
    assert not imported & NO_OP_MUST_NOT_IMPORT, imported & NO_OP_MUST_NOT_IMPORT
