"""Run ninja for a workspace: one build at a time, regenerating the graph first,
streaming progress and ending with a one-line summary."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from dnn64build.errors import UserError
from dnn64build.graph.ninja_package import package_ninja
from dnn64build.graph.progress import NinjaProgress
from dnn64build.workspace.root import OUTPUT_BASE, TARGET_INDEX, find_root, output_base_problem

_LOCK = ".lock"


def ninja_binary(recorded: str | None = None) -> str:
    """$DNN64_NINJA, else the ninja from the PyPI package. ``recorded`` is where the target
    index noted the package's ninja: used while it is still there, since finding it again
    (importing the package, which asks sysconfig) costs more than a no-op build's ninja."""
    override = os.environ.get("DNN64_NINJA")
    if override is not None:
        if not shutil.which(override):
            raise UserError(f"ninja not found: $DNN64_NINJA is {override!r}",
                            hint="unset DNN64_NINJA to use the ninja Python package")
        return override
    if recorded and os.access(recorded, os.X_OK):
        return recorded
    if found := package_ninja():
        return found
    raise UserError("ninja not found", hint="install it with: pip install ninja")


@contextmanager
def workspace_lock(root: Path) -> Iterator[None]:
    """Hold the workspace's build lock; a second build waits for the first.

    The lock is an flock on the workspace root directory itself, not on a file in
    dnn64-out/: ``clean --expunge`` deletes dnn64-out/, and a build waiting on a lock file
    there would end up holding a lock on a deleted file while a third build locks a new
    one. The root outlives every command, and locking it needs no write access. The
    holder's pid is noted in dnn64-out/.lock (when writable) for the waiting message."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"dnn64build: another build is running in this workspace (pid "
                  f"{_holder(root)}); waiting for it to finish...", file=sys.stderr, flush=True)
            fcntl.flock(fd, fcntl.LOCK_EX)
        with suppress(OSError):  # informational only: a read-only workspace has no note
            (root / OUTPUT_BASE / _LOCK).write_text(str(os.getpid()))
        yield
    finally:
        os.close(fd)  # releases the lock


def _holder(root: Path) -> str:
    try:
        return (root / OUTPUT_BASE / _LOCK).read_text().strip() or "?"
    except OSError:
        return "?"


def refresh_graph(root: Path) -> dict[str, Any]:
    """Make build.ninja current (ninja's generator rule does the work when it exists) and
    return the target index. Call with the lock held."""
    out = root / OUTPUT_BASE
    if problem := output_base_problem(root):
        raise OutputNotWritable(f"cannot write the build outputs: {problem}",
                                hint=f"make it a writable directory (or remove it: "
                                f"dnn64build creates {OUTPUT_BASE}/); query works without writing")
    fresh = (out / "build.ninja").exists() and (out / TARGET_INDEX).exists()
    index = _read_index(out) if fresh else None
    if index is not None and not _inputs_older(out, index):
        proc = subprocess.run(
            [ninja_binary(index.get("ninja")), "build.ninja"], cwd=out, capture_output=True,
            text=True,
        )
        # A deleted package directory or BUILD.yaml is an input ninja can no longer stat:
        # regenerate from scratch instead.
        fresh = "missing and no known rule to make it" not in proc.stderr
        if fresh and proc.returncode != 0:
            # The regeneration failed: its own error message is the one worth showing, not
            # ninja's report around it.
            output = (proc.stdout + proc.stderr).splitlines()
            ours = [line.removeprefix("ERROR: ") for line in output
                    if line.startswith(("ERROR: ", "  hint: "))]
            if any("internal error" in line for line in ours):
                ours = output  # a bug: its traceback is the point
            raise UserError("\n".join(ours or output))
        index = _read_index(out) if fresh else None
    if (index is None or index.get("unresolved") or not _written_present(out, index)
            or any(os.environ.get(k) != v for k, v in index["env"].items())):
        from dnn64build.graph.generate import generate  # heavy imports: only when needed

        generate(root)
        index = json.loads((out / TARGET_INDEX).read_text())
    return index


class OutputNotWritable(UserError):
    """dnn64-out/ cannot be written: read-only, a file, or a dangling link."""


def _inputs_older(out: Path, index: dict[str, Any]) -> bool:
    """Whether every file build.ninja was generated from is older than it: then asking
    ninja (one more process start on every build) would find nothing to regenerate."""
    inputs = index.get("regen_inputs")
    if inputs is None:
        return False
    try:
        generated = (out / "build.ninja").stat().st_mtime_ns
        return all((out / path).stat().st_mtime_ns <= generated for path in inputs)
    except OSError:  # a deleted input: let ninja (and then the generator) deal with it
        return False


def _written_present(out: Path, index: dict[str, Any]) -> bool:
    """Whether every file the generator wrote beside build.ninja is still there (ninja has
    no rule to make one again: a target's folder deleted by hand)."""
    return all((out / path).exists() for path in index.get("written", ()))


def current_index(start: Path) -> tuple[Path, dict[str, Any]]:
    """The workspace root above ``start`` and its up-to-date target index (computed without
    writing anything when the outputs cannot be written)."""
    root = find_root(start)
    with workspace_lock(root):
        try:
            return root, refresh_graph(root)
        except OutputNotWritable:
            from dnn64build.graph.generate import describe  # heavy imports: only when needed

            return root, describe(root)


class ActionHost(Protocol):
    """What ninja's actions need from the build's launcher (worker/launch.py
    ``build_worker``): it starts before ninja and ends after it."""

    @property
    def env(self) -> Mapping[str, str]: ...  # added to ninja's environment
    @property
    def pass_fds(self) -> tuple[int, ...]: ...  # what ninja must inherit
    @property
    def log(self) -> str: ...  # the launcher's own failure, if it had one, is written here


class NinjaResult(NamedTuple):
    ran: int
    needed: int
    seconds: float
    ok: bool


def run_ninja(
    root: Path, phony: Sequence[str], actions: ActionHost, *, jobs: int | None = None,
    verbose: bool = False, explain: bool = False, index: dict[str, Any] | None = None,
) -> NinjaResult:
    """Build ``phony`` targets, streaming ninja's progress lines. Call with the lock held
    and ``actions`` open; ``index`` is the target index (it knows where ninja is);
    ``explain``: ninja says why it runs each action."""
    argv = [ninja_binary((index or {}).get("ninja"))]
    if jobs:
        argv += ["-j", str(jobs)]
    if verbose:
        argv.append("-v")
    if explain:
        argv += ["-d", "explain"]
    start = time.monotonic()
    progress = NinjaProgress(verbose=verbose)
    with subprocess.Popen(
        [*argv, *phony], cwd=root / OUTPUT_BASE, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, errors="replace", bufsize=1,
        pass_fds=actions.pass_fds,
        env={**os.environ, **actions.env, "NINJA_STATUS": progress.status_format},
    ) as proc:
        assert proc.stdout
        try:
            for line in proc.stdout:
                # progress: stdout is for results (plan --json, query)
                sys.stderr.write(progress.show(line))
                sys.stderr.flush()
        except BaseException:  # interrupted or terminated: ninja stops its actions too
            proc.terminate()
            raise
        if os.path.exists(actions.log):  # the worker's own failure, if it had one
            sys.stderr.write(Path(actions.log).read_text())
    return NinjaResult(progress.ran, progress.needed, time.monotonic() - start,
                       proc.returncode == 0)


def _read_index(out: Path) -> dict[str, Any] | None:
    """The target index, or None when it is damaged (then it is written again)."""
    try:
        return json.loads((out / TARGET_INDEX).read_text())
    except ValueError:  # not JSON, or not UTF-8
        return None
