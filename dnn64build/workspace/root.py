"""Find the workspace root: the nearest directory upwards whose BUILD.yaml has a
top-level ``workspace:`` block. Kept free of heavy imports: every command starts here."""

from __future__ import annotations

import os
import re
from pathlib import Path

from dnn64build.errors import UserError

MANIFEST = "BUILD.yaml"
OUTPUT_BASE = "dnn64-out"
TARGET_INDEX = "targets.json"  # in OUTPUT_BASE: labels -> ninja targets, for the CLI
_WORKSPACE_LINE = re.compile(r"^workspace\s*:", re.MULTILINE)


def find_root(start: Path) -> Path:
    """The workspace root containing ``start``."""
    start = start.resolve()
    for directory in (start, *start.parents):
        manifest = directory / MANIFEST
        if manifest.is_file() and _WORKSPACE_LINE.search(manifest.read_text(encoding="utf-8")):
            return directory
    raise UserError(
        f"not inside a dnn64build workspace (no {MANIFEST} with a 'workspace:' block "
        f"in {start} or above)",
        hint="create a BUILD.yaml with 'workspace: {name: ...}' at the top of your project",
    )


def output_base_problem(root: Path) -> str | None:
    """Why the build outputs cannot be written under ``root`` (None when they can)."""
    out = root / OUTPUT_BASE
    if out.is_symlink() and not out.exists():
        return f"{out} is a symbolic link to {os.readlink(out)}, which does not exist"
    if out.exists() and not out.is_dir():
        return f"{out} exists and is not a directory"
    if not os.access(out if out.exists() else root, os.W_OK):
        return f"{out if out.exists() else root} is not writable"
    return None
