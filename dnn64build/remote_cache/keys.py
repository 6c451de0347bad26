"""Action keys: a sha256 over everything an action reads and nothing machine-specific.

A stage action's key covers its stage name, its config file's content, each named
input's content, its outputs' names and paths, the content of the tool's own source
files the stage runs (stages/registry.py), the versions of Python, numpy and onnx, and,
when it uses a toolchain, that toolchain's identity without its directory. A command's
key covers its command line (the tool's directory and the compiler's directory replaced
by placeholders), the content of every file it may read and the compiler's version.
Paths are ninja paths (relative to dnn64-out/); tool files are named relative to the
tool's root, so two checkouts at different places, or two machines, get the same keys.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import platform
from functools import cache
from pathlib import Path
from typing import Any

from dnn64build import TOOL_ROOT
from dnn64build.toolchains.base import TOOL_HEADERS
from dnn64build.toolchains.identity import portable_identity

KEY_VERSION = 2  # 2: stage keys cover the files a stage's inputs name
TOOL_TOKEN = "@dnn64build@"  # stands for TOOL_ROOT in keys and cached depfiles


@cache
def file_digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def portable_path(path: str) -> str:
    return path.replace(str(TOOL_ROOT), TOOL_TOKEN)


def prepare() -> None:
    """Do once, before the worker forks, what every key would otherwise redo in its child:
    hash the tool's stage sources and look up the library versions."""
    from dnn64build.stages.registry import STAGES
    from dnn64build.stages.sources import stage_sources

    for stage in STAGES:
        for path in stage_sources(stage):
            file_digest(path)
    for path in TOOL_HEADERS:  # only the tool's files: the workspace's change as it builds
        file_digest(path)
    _python_runtime()


def stage_reads(stage: str, inputs: list[tuple[str, str]]) -> list[str]:
    """The files ``stage`` will read besides its inputs, which its inputs name (ONNX
    external data: StageSpec.reads); UserError when an input cannot be read."""
    from dnn64build.stages.registry import STAGES

    if STAGES[stage].reads is None:
        return []
    module, _, function = STAGES[stage].reads.partition(":")
    named: dict[str, list[str]] = {}
    for name, path in inputs:
        named.setdefault(name, []).append(path)
    return [str(p) for p in getattr(importlib.import_module(module), function)(named)]


def stage_key(stage: str, config: str, inputs: list[tuple[str, str]],
              outputs: list[tuple[str, str]], reads: list[str]) -> tuple[str, dict[str, Any]]:
    """(key, what it was computed from) for ``stage`` run with these files; ``reads``: the
    files it reads besides its inputs (``stage_reads``)."""
    from dnn64build.stages.sources import stage_sources

    parts: dict[str, Any] = {
        "stage": stage,
        "config": file_digest(config),
        "inputs": sorted([n, portable_path(p), file_digest(p)] for n, p in inputs),
        "reads": sorted([portable_path(p), file_digest(p)] for p in reads),
        "outputs": sorted([n, p] for n, p in outputs),
        "sources": [[portable_path(p), file_digest(p)] for p in stage_sources(stage)],
    }
    parts["python"] = _python_runtime()
    toolchain = json.loads(Path(config).read_text()).get("toolchain")
    if toolchain:
        parts["toolchain"] = _identity(toolchain)
    return _digest(parts), parts


def command_key(argv: list[str], reads: list[str], outputs: list[str],
                toolchain_id: str | None) -> tuple[str, dict[str, Any]]:
    """``toolchain_id``: the identity file of the command's toolchain; None for a rule's own
    command, whose program is named by its basename only (like a compiler's)."""
    parts: dict[str, Any] = {
        "argv": [os.path.basename(argv[0]), *(portable_path(a) for a in argv[1:])],
        "reads": sorted([portable_path(p), file_digest(p)] for p in reads),
        "outputs": sorted(outputs),
        "toolchain": (portable_identity(Path(toolchain_id).read_text()) if toolchain_id
                      else None),
    }
    return _digest(parts), parts


@cache
def _python_runtime() -> str:
    """The interpreter and the libraries whose behaviour stage outputs depend on."""
    import numpy
    import onnx

    return f"python {platform.python_version()} numpy {numpy.__version__} onnx {onnx.__version__}"


def _identity(toolchain: str) -> str:
    path = Path("toolchains") / f"{toolchain}.id"  # written by the generator, beside build.ninja
    return portable_identity(path.read_text()) if path.exists() else f"toolchain {toolchain}"


def _digest(parts: dict[str, Any]) -> str:
    text = json.dumps({"v": KEY_VERSION, **parts}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()
