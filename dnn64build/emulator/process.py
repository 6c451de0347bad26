"""Run a process until a sentinel line, a deadline, or its exit; then kill it. RunResult:
what a run of a dnn64 program gave."""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class RunResult:
    """Lines the program printed (sentinel excluded), wall time, runner log."""

    lines: tuple[str, ...]
    seconds: float
    log: tuple[str, ...] = ()

    def value(self, prefix: str) -> str:
        """The rest of the first line starting with ``prefix + ' '``."""
        for line in self.lines:
            if line.startswith(prefix + " "):
                return line[len(prefix) + 1 :]
        raise KeyError(prefix)


@dataclass(frozen=True)
class Capture:
    lines: tuple[str, ...]  # every stdout/stderr line, in order
    seconds: float
    stopped: bool  # the stop predicate matched
    timed_out: bool
    returncode: int | None  # None when we killed it


def run_until(
    argv: Sequence[str],
    *,
    stop: Callable[[str], bool],
    timeout: float,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    grace: float = 0.0,
) -> Capture:
    """Run ``argv`` in its own process group, reading merged output line by line.

    Stops at the first line for which ``stop`` is true, at ``timeout`` seconds,
    or when the process exits; always leaves no process behind. With ``grace`` > 0
    the group gets SIGTERM first (so that, e.g., an X server removes its lock
    files) and SIGKILL only if it is still there ``grace`` seconds later.
    """
    start = time.monotonic()
    proc = subprocess.Popen(
        list(argv),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=dict(env) if env is not None else None,
        cwd=cwd,
        start_new_session=True,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    pending = b""
    stopped = timed_out = False
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    try:
        while not stopped:
            remaining = timeout - (time.monotonic() - start)
            if remaining <= 0:
                timed_out = True
                break
            if not selector.select(remaining):
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            pending += chunk
            *complete, pending = pending.split(b"\n")
            for raw in complete:
                line = raw.decode("utf-8", "replace").rstrip("\r")
                lines.append(line)
                if stop(line):
                    stopped = True
                    break
        if pending and not stopped:
            lines.append(pending.decode("utf-8", "replace"))
    finally:
        selector.close()
        if not stopped and not timed_out:
            # Output ended: the process is exiting; collect its status.
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
        returncode = proc.poll()
        if returncode is None:
            _stop_group(proc, grace)
        proc.wait()
        proc.stdout.close()
    return Capture(tuple(lines), time.monotonic() - start, stopped, timed_out, returncode)


def _stop_group(proc: subprocess.Popen[bytes], grace: float) -> None:
    """End every process of ``proc``'s group: SIGTERM and ``grace`` seconds, then SIGKILL."""
    if grace > 0:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            try:
                os.killpg(proc.pid, 0)  # is any member left?
            except ProcessLookupError:
                return
            proc.poll()  # reap the leader, or it keeps the group alive as a zombie
            time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
