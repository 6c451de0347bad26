"""Run one action request (what the client sends) in this process."""

from __future__ import annotations

from dnn64build.remote_cache.cached import CacheSession, run_cached
from dnn64build.stages.__main__ import main as run_stage
from dnn64build.worker.client import command_outputs, run_command


def execute(argv: list[str], cache: CacheSession | None = None) -> int:
    """``stage STAGE ARGS...`` or ``command --out PATH... -- ARGV...``; the exit status.
    With ``cache``, through the remote cache."""
    return run_cached(argv, cache, _run) if cache else _run(argv)


def _run(argv: list[str]) -> int:
    if argv[0] == "command":
        return run_command(*command_outputs(argv[1:]))
    return run_stage(argv[1:])
