"""The one-build-at-a-time lock, exercised by real concurrent processes."""

from __future__ import annotations

import itertools
import subprocess
import sys
import time
from pathlib import Path

from tests.build.conftest import Workspace

# Holds the workspace lock for a while, printing when it got in and when it left.
_HOLDER = """\
import sys, time
from pathlib import Path
from dnn64build.graph.runner import workspace_lock
with workspace_lock(Path(sys.argv[1])):
    print("enter", time.monotonic(), flush=True)
    time.sleep(float(sys.argv[2]))
    print("exit", time.monotonic(), flush=True)
"""


def _holder(root: Path, seconds: float) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", _HOLDER, str(root), str(seconds)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_line(stream, prefix: str) -> str:
    for line in stream:
        if line.startswith(prefix):
            return line
    raise AssertionError(f"no line starting with {prefix!r}")


def _interval(proc: subprocess.Popen[str], seen: str = "") -> tuple[float, float]:
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    times = dict(line.split() for line in (seen + stdout).splitlines())
    return float(times["enter"]), float(times["exit"])


def test_clean_expunge_keeps_builds_one_at_a_time(two_models: Workspace) -> None:
    """An expunge among waiting builds: whichever order they get the lock in, no two ever
    hold it together (a build waiting on a deleted lock file while a newcomer locks a new
    one was the failure)."""
    root = two_models.root
    two_models.run("query", "//...")  # dnn64-out/ exists, with its lock note
    first = _holder(root, 1.0)
    assert first.stdout
    entered = _wait_for_line(first.stdout, "enter")
    expunge = subprocess.Popen([sys.executable, "-m", "dnn64build", "clean", "--expunge"],
                               cwd=root, stderr=subprocess.PIPE, text=True)
    holders = []
    # Newcomers keep arriving while the lock changes hands: after the expunge, any build
    # still waiting on the old lock would overlap the next newcomer.
    for _ in range(6):
        time.sleep(0.4)
        holders.append(_holder(root, 0.5))
    assert expunge.wait(timeout=120) == 0, expunge.stderr.read() if expunge.stderr else ""
    intervals = sorted([_interval(first, entered), *map(_interval, holders)])
    for (_, left), (entered, _) in itertools.pairwise(intervals):
        assert entered >= left, f"two holders of the lock at once: {intervals}"
