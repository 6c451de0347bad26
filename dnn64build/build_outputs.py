"""Reading files an earlier action wrote: one that does not parse (truncated by a crash or
a full disk, edited by hand) is a UserError naming the file to delete, not a traceback.

ninja cannot see such damage when the file keeps an old modification time, so the
action that made it is not rerun; deleting the file makes ninja rebuild it.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import Any

# What numpy and json raise for a file that is cut short or not what it should be.
DAMAGE = (ValueError, EOFError, zipfile.BadZipFile)


def damaged(path: str | os.PathLike, exc: BaseException) -> Exception:
    """The UserError for a build output at ``path`` that cannot be read."""
    from dnn64build.errors import UserError

    full = Path(path).resolve()
    return UserError(f"build output {full} is damaged and cannot be read ({exc})",
                     hint=f"delete it and build again: rm {full} (or run dnn64build clean)")


def load_json(path: str | os.PathLike) -> Any:
    """The JSON document a build action wrote at ``path``."""
    try:
        return json.loads(Path(path).read_text())
    except DAMAGE as exc:
        raise damaged(path, exc) from exc
