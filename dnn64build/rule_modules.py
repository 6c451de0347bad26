"""Import a rule module (``rules/<kind>.py``) from its file, once per process.

Each ``rules/`` folder becomes a package, so the modules of one folder can share
helpers relatively (``from ._rom import declare_rom``; files starting with ``_`` are
helpers, not rule kinds). The tool's own folder is ``dnn64build_rules.builtin``, the
name a workspace rule imports a built-in record from
(``from dnn64build_rules.builtin._model import ModelInfo``); a workspace's folder is
named for its real path, so two folders sharing a basename stay apart. Used by the
rule loader and by the ``step`` stage that runs a rule's own Python step.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
import types
from pathlib import Path

from dnn64build import DATA_ROOT

_TOP = "dnn64build_rules"
BUILTIN_PACKAGE = f"{_TOP}.builtin"  # the tool's own rules/ folder


def rules_package(directory: Path) -> str:
    """The package name of the rule folder ``directory``, created on first use (with the
    built-in one, which any rule module may import from)."""
    directory = directory.resolve()
    builtin = (DATA_ROOT / "rules").resolve()
    name = (BUILTIN_PACKAGE if directory == builtin
            else f"{_TOP}.r{hashlib.sha256(os.fsencode(directory)).hexdigest()[:16]}")
    for package, path in ((_TOP, None), (BUILTIN_PACKAGE, builtin), (name, directory)):
        if package not in sys.modules:
            module = types.ModuleType(package)
            module.__path__ = [str(path)] if path else []
            sys.modules[package] = module
    return name


def import_rule_module(path: Path) -> types.ModuleType:
    """The module of the rule file ``path`` (imported at most once per process)."""
    return importlib.import_module(f"{rules_package(path.parent)}.{path.stem}")
