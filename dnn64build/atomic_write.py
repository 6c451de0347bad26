"""Write files atomically and only when their content changes.

Every output goes to a temporary file beside it and is renamed into place, so
an interrupted build never leaves a half-written file under a real name. An
output whose bytes are already on disk is left untouched, so ninja's
``restat = 1`` can stop a rebuild at a stage whose result did not change.
"""

from __future__ import annotations

import os
from pathlib import Path

from dnn64build.worker.client import SUPERSEDED, superseded


def write_if_changed(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` unless it already holds exactly that; True if written."""
    path = Path(path)
    try:
        if path.stat().st_size == len(data) and path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    write_atomic(path, data)
    return True


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename; an action of a
    build that a newer one has superseded exits instead (worker/client.py ``superseded``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        if superseded():
            raise SystemExit(SUPERSEDED)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_text_if_changed(path: Path, text: str) -> bool:
    return write_if_changed(path, text.encode("utf-8"))
