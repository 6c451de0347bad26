"""``dnn64build build``: build targets, then say what happened in one line."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from dnn64build.errors import UserError
from dnn64build.graph.progress import SUMMARY
from dnn64build.graph.runner import NinjaResult, refresh_graph, run_ninja, workspace_lock
from dnn64build.worker.launch import WorkerOptions, build_worker
from dnn64build.workspace.query import select
from dnn64build.workspace.root import OUTPUT_BASE, find_root


class BuildOutcome(NamedTuple):
    root: Path
    index: dict[str, Any]
    labels: list[str]
    result: NinjaResult


def build(
    patterns: list[str],
    *,
    group: str = "",
    cwd: Path | None = None,
    jobs: int | None = None,
    verbose: bool = False,
    quiet_summary: bool = False,
    one_for: str | None = None,
    cache: CacheFlags | None = None,
    missing_hint: str | None = None,
) -> BuildOutcome:
    """Build the targets matching ``patterns`` (their ``group`` outputs); raise on failure.
    ``one_for`` names a command that takes exactly one target: checked before building;
    ``missing_hint``: what to do when none of them has ``group`` outputs."""
    root = find_root(cwd or Path.cwd())
    with workspace_lock(root):
        index = refresh_graph(root)
        targets = index["targets"]
        labels = select(patterns, targets)
        if one_for and len(labels) != 1:
            raise UserError(f"{' '.join(patterns)!r} names {len(labels)} targets "
                            f"({', '.join(labels)}); {one_for} takes one",
                            hint="name one target: a label, not a pattern")
        phony = [targets[t]["groups"][group] for t in labels if group in targets[t]["groups"]]
        if not phony:
            kinds = ", ".join(f"{t} ({targets[t]['rule']})" for t in labels)
            raise UserError(f"nothing to build: {kinds}: no {group or 'default'} outputs",
                            hint=missing_hint or (f"this command works on targets that have "
                                                  f"{group} outputs" if group else None))
        needed = set().union(*(targets[t]["actions"][group] for t in labels
                               if group in targets[t]["groups"]))
        worker = worker_options(cache or CacheFlags(), index.get("remote_cache") or {})
        with build_worker(worker, root / OUTPUT_BASE) as actions:
            result = run_ninja(root, phony, actions, jobs=jobs, verbose=verbose,
                               explain=worker.explain, index=index)
    if not quiet_summary or not result.ok:
        _summary(len(phony), len(needed), result)
    if not result.ok:
        raise UserError("build failed (see the error above)")
    return BuildOutcome(root, index, labels, result)


class CacheFlags(NamedTuple):
    """The command line's remote cache flags; None where not given."""

    remote_cache: str | None = None
    read_only: bool | None = None
    timeout: float | None = None
    explain: bool = False
    headers: list[str] | None = None  # --remote-header NAME=VALUE, as given


def worker_options(flags: CacheFlags, workspace: Mapping[str, Any]) -> WorkerOptions:
    """Each setting from the flags, else the environment ($DNN64_REMOTE_CACHE,
    $DNN64_REMOTE_CACHE_READ_ONLY, $DNN64_REMOTE_CACHE_TIMEOUT, $DNN64_REMOTE_HEADER: how a
    CI job switches every build), else the workspace's ``remote_cache:`` block."""
    from dnn64build.remote_cache.settings import endpoint

    env_read_only = os.environ.get("DNN64_REMOTE_CACHE_READ_ONLY")
    url = flags.remote_cache or os.environ.get("DNN64_REMOTE_CACHE") or workspace.get("url")
    if not url:
        _no_cache_for(flags)
        return WorkerOptions(explain=flags.explain)
    cache = endpoint(url, flags.headers)
    return WorkerOptions(
        remote_cache=cache.url,
        read_only=next(v for v in (
            flags.read_only,
            None if env_read_only in (None, "") else env_read_only != "0",
            workspace.get("read_only"),
            False,
        ) if v is not None),
        timeout=flags.timeout or _timeout(workspace),
        explain=flags.explain,
        headers=cache.headers,
    )


def _no_cache_for(flags: CacheFlags) -> None:
    """A cache flag given when no cache is: a mistake (a typo in $DNN64_REMOTE_CACHE, a
    missing --remote-cache) that would otherwise go unnoticed, credentials and all."""
    given = [flag for flag, value in (("--remote-header", flags.headers),
                                      ("--remote-cache-read-only", flags.read_only),
                                      ("--remote-cache-timeout", flags.timeout)) if value]
    if given:
        raise UserError(f"{', '.join(given)} given, but no remote cache is set",
                        hint="add --remote-cache URL, set $DNN64_REMOTE_CACHE, or set "
                        "remote_cache.url in the workspace's BUILD.yaml")


def _timeout(workspace: Mapping[str, Any]) -> float:
    """$DNN64_REMOTE_CACHE_TIMEOUT, else the workspace's ``timeout:``, else 10 s."""
    from dnn64build.remote_cache.settings import seconds

    for where, value in (("$DNN64_REMOTE_CACHE_TIMEOUT",
                          os.environ.get("DNN64_REMOTE_CACHE_TIMEOUT")),
                         ("BUILD.yaml: workspace.remote_cache.timeout",
                          workspace.get("timeout"))):
        if value not in (None, ""):
            try:
                return seconds(value)
            except ValueError as e:
                raise UserError(f"{where}: {e}") from None
    return 10.0


def _summary(n_targets: int, n_actions: int, result: NinjaResult) -> None:
    status = SUMMARY[0] if result.ok else SUMMARY[1]
    print(
        f"{status}: {n_targets} target{'s' if n_targets != 1 else ''}, "
        f"{result.ran} action{'s' if result.ran != 1 else ''} run, "
        f"{n_actions - result.ran} up to date, {result.seconds:.2f}s",
        file=sys.stderr, flush=True,
    )
