"""The files a stage's code lives in: the implicit inputs of its actions, and part of its
remote cache key."""

from __future__ import annotations

from functools import cache

from dnn64build import PACKAGE_DIR, tool_path
from dnn64build.stages.import_graph import SOURCE_SUFFIXES, code_files
from dnn64build.stages.registry import STAGES

TOOL_PACKAGES = {PACKAGE_DIR.name: PACKAGE_DIR}


@cache
def stage_sources(stage: str) -> tuple[str, ...]:
    """Absolute paths of the files a stage's code lives in (its implicit inputs): what its
    modules import (stages/import_graph.py) and the files the registry names."""
    spec = STAGES[stage]
    files = code_files(spec.modules, TOOL_PACKAGES)
    for rel in spec.data:
        path = tool_path(rel)
        if path.is_dir():
            files.update(
                p for p in path.rglob("*")
                if p.suffix in SOURCE_SUFFIXES and "__pycache__" not in p.parts
            )
        elif path.exists():
            files.add(path)
    return tuple(sorted(str(p) for p in files))
