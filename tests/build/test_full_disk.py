"""A full disk (ENOSPC) or quota (EDQUOT) while a stage writes is one clean message, not
"internal error ... this is a bug" (issue 25, case 15). The fault is injected into the real
build: a ``sitecustomize`` module on PYTHONPATH, which the stage worker imports, makes
writing pack's output image fail as a full file system would."""

from __future__ import annotations

import errno
import os
import textwrap
from pathlib import Path

import pytest

from dnn64build.errors import machine_error
from tests.build.conftest import Workspace

_INJECT = """\
import builtins, errno, os

_open = builtins.open


def _full(file, mode="r", *args, **kwargs):
    if "w" in mode and ".img.tmp" in os.fspath(file):  # pack's output, being written
        raise OSError(errno.{name}, os.strerror(errno.{name}), os.fspath(file))
    return _open(file, mode, *args, **kwargs)


builtins.open = _full
"""


def test_a_full_disk_while_pack_writes_is_one_clean_error(ws_a: Workspace,
                                                          tmp_path: Path) -> None:
    name = "ENOSPC"
    inject = tmp_path / "inject"
    inject.mkdir()
    (inject / "sitecustomize.py").write_text(textwrap.dedent(_INJECT.format(name=name)))
    path = os.pathsep.join([str(inject), *filter(None, [os.environ.get("PYTHONPATH")])])
    proc = ws_a.run("build", "//models:a", check=False, env={"PYTHONPATH": path})
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    assert "Traceback" not in output and "internal error" not in output, output
    strerror = os.strerror(getattr(errno, name))
    assert "ERROR: bin/models/a/host/.a.img.tmp" in output
    assert f": {strerror}\n  hint: free space" in output
    assert not (ws_a.root / "dnn64-out" / "bin" / "models" / "a" / "host" / "a.img").exists()
    # With space again, the build finishes.
    assert ("Pack", "//models:a (host)") in ws_a.build("//models:a")


@pytest.mark.parametrize("number", [errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG])
def test_the_machine_s_write_errors_are_user_errors(number: int) -> None:
    """What the three top-level handlers (the CLI, a stage, build.ninja's regeneration)
    print instead of "internal error"; other OSErrors stay bugs."""
    error = machine_error(OSError(number, os.strerror(number), "out/x.z64"))
    assert error is not None and error.message == f"out/x.z64: {os.strerror(number)}"
    assert error.hint
    assert machine_error(OSError(errno.ENOENT, "No such file or directory", "x")) is None
    assert machine_error(ValueError("x")) is None
