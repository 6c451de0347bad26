"""A workspace or dnn64-out/ that cannot be written: query still answers, the commands that
must write say what they cannot write, and nothing prints a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.build.conftest import MODEL, Workspace


def _run_read_only(ws: Workspace, path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI with ``path`` read-only: a read-only bind mount in a private mount namespace
    for root (which ignores permissions), the write bits removed for anyone else."""
    cli = [sys.executable, "-m", "dnn64build", *args]
    if os.geteuid() == 0:
        argv = ["unshare", "-m", "sh", "-c", 'mount --bind -o ro "$0" "$0" && exec "$@"',
                str(path), *cli]
        return subprocess.run(argv, cwd=ws.root, capture_output=True, text=True)
    modes = {p: p.stat().st_mode for p in [path, *path.rglob("*")] if not p.is_symlink()}
    try:
        for p, mode in modes.items():
            p.chmod(mode & ~0o222)
        return subprocess.run(cli, cwd=ws.root, capture_output=True, text=True)
    finally:
        for p, mode in modes.items():
            p.chmod(mode)


def _clean_failure(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    return proc.stderr


def test_a_read_only_workspace_can_be_queried(ws_a: Workspace) -> None:
    proc = _run_read_only(ws_a, ws_a.root, "query", "//...")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["//models:a"]
    err = _clean_failure(_run_read_only(ws_a, ws_a.root, "build", "//..."))
    assert f"cannot write the build outputs: {ws_a.root} is not writable" in err


def test_a_read_only_output_base_can_be_queried_even_when_stale(ws_a: Workspace) -> None:
    out = ws_a.root / "dnn64-out"
    ws_a.run("query", "//...")
    proc = _run_read_only(ws_a, out, "query", "//...")
    assert proc.returncode == 0 and proc.stdout.split() == ["//models:a"], proc.stderr
    ws_a.write("models/BUILD.yaml", MODEL + MODEL.removeprefix("targets:\n").replace(
        "name: a", "name: b"))
    proc = _run_read_only(ws_a, out, "query", "//...")
    assert proc.returncode == 0 and proc.stdout.split() == ["//models:a", "//models:b"]
    err = _clean_failure(_run_read_only(ws_a, out, "build", "//..."))
    assert f"cannot write the build outputs: {out} is not writable" in err
    err = _clean_failure(_run_read_only(ws_a, out, "clean"))
    assert f"cannot clean: {out} is not writable" in err


@pytest.mark.parametrize("kind", ["file", "dangling link"])
def test_an_output_base_that_is_no_directory(ws_a: Workspace, kind: str) -> None:
    out = ws_a.root / "dnn64-out"
    if kind == "file":
        out.write_text("not a directory")
        problem = f"{out} exists and is not a directory"
    else:
        out.symlink_to(ws_a.root / "gone")
        problem = f"{out} is a symbolic link to {ws_a.root / 'gone'}, which does not exist"
    assert ws_a.run("query", "//...").stdout.split() == ["//models:a"]
    err = _clean_failure(ws_a.run("build", "//...", check=False))
    assert f"cannot write the build outputs: {problem}" in err
    ws_a.run("clean", "--expunge")  # the way out
    assert not out.exists() and not out.is_symlink()
    ws_a.run("query", "//...")
    assert (out / "build.ninja").is_file()
