"""Start the stage worker for one build and stop it when the build ends."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from dnn64build.worker.client import WORKER_ENV


@dataclass(frozen=True)
class WorkerOptions:
    remote_cache: str | None = None  # URL of a Bazel-protocol HTTP cache
    read_only: bool = False  # use hits, upload nothing (untrusted jobs)
    timeout: float = 10.0  # seconds per cache request
    explain: bool = False  # each action says whether the cache had it

    def argv(self, state_dir: str) -> list[str]:
        if not self.remote_cache:
            return ["--explain"] if self.explain else []
        return [
            "--remote-cache", self.remote_cache, "--timeout", str(self.timeout),
            "--state-dir", state_dir,
            *(["--read-only"] if self.read_only else []),
            *(["--explain"] if self.explain else []),
        ]


@contextmanager
def stage_worker(options: WorkerOptions = WorkerOptions()) -> Iterator[dict[str, str]]:
    """A running worker; yields the environment that points ninja's actions at it.

    Its socket lives in a fresh short temporary directory (socket paths are limited to
    about 100 bytes). The worker holds the read end of a pipe whose write end only this
    process has: if the build dies, even by SIGKILL, the worker sees end of file and exits.
    """
    directory = tempfile.mkdtemp(prefix="dnn64w-")
    socket_path = os.path.join(directory, "socket")
    lifeline_read, lifeline_write = os.pipe()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "dnn64build.worker", socket_path, str(lifeline_read),
             *options.argv(directory)],
            pass_fds=[lifeline_read],
        )
    finally:
        os.close(lifeline_read)
    try:
        yield {WORKER_ENV: socket_path}
    finally:
        os.close(lifeline_write)
        proc.terminate()  # ninja has ended: no request is in flight
        proc.wait()
        shutil.rmtree(directory, ignore_errors=True)
