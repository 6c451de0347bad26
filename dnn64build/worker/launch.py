"""Provide a stage worker to one build; it ends when the build ends. And the build's
generation, which tells its actions whether a newer build has started since.

The worker is started by the first action that asks for it (see client.py), not by the
build: a build with nothing to do never pays for one.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from dnn64build.atomic_write import write_atomic
from dnn64build.worker.client import (
    CACHE_ENV,
    GENERATION_ENV,
    SOCKET_NAME,
    SPAWN_ENV,
    WORKER_ENV,
)

GENERATION_FILE = ".generation"  # in the output base


class WorkerOptions(NamedTuple):
    remote_cache: str | None = None  # URL of a Bazel-protocol HTTP cache, no credentials
    read_only: bool = False  # use hits, upload nothing (untrusted jobs)
    timeout: float = 10.0  # seconds per cache request
    explain: bool = False  # each action says whether the cache had it
    headers: tuple[tuple[str, str], ...] = ()  # sent to the cache: credentials

    def argv(self, state_dir: str) -> list[str]:
        """The worker's options; the cache's settings go in a file only we can read
        (``write_cache_config``), never on a command line others can see."""
        explain = ["--explain"] if self.explain else []
        if not self.remote_cache:
            return explain
        return ["--cache-config", _cache_config(state_dir), "--state-dir", state_dir, *explain]

    def write_cache_config(self, state_dir: str) -> None:
        config = {"url": self.remote_cache, "read_only": self.read_only,
                  "timeout": self.timeout, "headers": self.headers}
        fd = os.open(_cache_config(state_dir), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        with open(fd, "w") as f:
            json.dump(config, f)


def _cache_config(state_dir: str) -> str:
    return os.path.join(state_dir, "cache.json")


class WorkerHandle(NamedTuple):
    env: dict[str, str]  # what points ninja's actions at the worker
    pass_fds: tuple[int, ...]  # what ninja must inherit (the lifeline's read end)
    log: str  # where the worker's own messages go (not into an action's output)


@contextmanager
def stage_worker(options: WorkerOptions | None = None) -> Iterator[WorkerHandle]:
    """Everything an action needs to find, or start, this build's worker.

    Its socket lives in a fresh temporary directory with a path short enough for a socket
    (``worker_directory``). The worker holds the read end of a pipe whose write end only
    this process has: when the build ends, even by SIGKILL, the worker sees end of file and
    exits.
    """
    options = options or WorkerOptions()
    directory = worker_directory()
    lifeline_read, lifeline_write = os.pipe()
    log = os.path.join(directory, "worker.log")
    spawn = "\n".join([str(lifeline_read), log, *options.argv(directory)])
    env = {WORKER_ENV: os.path.join(directory, SOCKET_NAME), SPAWN_ENV: spawn}
    if options.remote_cache:
        env[CACHE_ENV] = "1"
        options.write_cache_config(directory)
    try:
        yield WorkerHandle(env, (lifeline_read,), log)
    finally:
        os.close(lifeline_write)
        os.close(lifeline_read)
        shutil.rmtree(directory, ignore_errors=True)


@contextmanager
def build_worker(options: WorkerOptions, out: Path) -> Iterator[WorkerHandle]:
    """``stage_worker`` for a build in output base ``out``, its environment also naming
    the build's generation (``new_generation``): what graph/runner.py ``run_ninja`` runs
    ninja's actions with."""
    generation = new_generation(out)
    with stage_worker(options) as handle:
        yield handle._replace(env={**handle.env, **generation})


def new_generation(out: Path) -> dict[str, str]:
    """Make ``out`` this build's: an action of an earlier build that still runs (the build
    was killed) finds another token in the generation file and writes nothing
    (worker/client.py ``superseded``). The environment that tells the actions."""
    token = os.urandom(8).hex()
    write_atomic(out / GENERATION_FILE, token.encode())
    return {GENERATION_ENV: f"{token}:{(out / GENERATION_FILE).resolve()}"}


def worker_directory() -> str:
    """A fresh private directory whose socket path fits in a sockaddr_un (108 bytes with
    its NUL): under $TMPDIR when that is short enough, else under /tmp."""
    parent = tempfile.gettempdir()
    # mkdtemp names it "dnn64w-" and 8 characters
    if len(os.fsencode(os.path.join(parent, "dnn64w-12345678", SOCKET_NAME))) >= 108:
        parent = "/tmp"
    return tempfile.mkdtemp(prefix="dnn64w-", dir=parent)
