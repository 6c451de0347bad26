"""Find the rule kinds: every ``*.py`` in the tool's ``rules/`` and in the workspace's.

Each module defines ``RULE``; modules whose name starts with ``_`` are helpers its
neighbours import (see dnn64build/rule_modules.py). A workspace may add its own kinds in its own
``rules/`` directory without touching the tool, or replace a built-in kind there.
"""

from __future__ import annotations

from pathlib import Path

from dnn64build import DATA_ROOT
from dnn64build.errors import UserError
from dnn64build.rule_modules import import_rule_module
from dnn64build.rules_api import Rule


def rule_files(workspace_root: Path) -> list[Path]:
    dirs = [DATA_ROOT / "rules"]
    if (workspace_root / "rules").resolve() != dirs[0].resolve():
        dirs.append(workspace_root / "rules")
    # Helpers (``_*.py``) too: build.ninja regenerates when one changes.
    files = [f for d in dirs if d.is_dir() for f in sorted(d.glob("*.py"))]
    for f in files:
        if not f.stem.isidentifier():  # it names a module, and build.ninja names the file
            raise UserError(f"rule module {f.name!r} is not named like a Python module",
                            where=repr(str(f)), hint="rename it: letters, digits and _")
    return files


def load_rules(workspace_root: Path) -> dict[str, Rule]:
    """Every rule kind by name. The tool's modules load first; a workspace module defining
    the same kind replaces the built-in one (two definitions in one directory are an error)."""
    rules: dict[str, Rule] = {}
    origin: dict[str, Path] = {}
    for path in rule_files(workspace_root):
        if path.name.startswith("_"):
            continue
        rule = getattr(import_rule_module(path), "RULE", None)
        if not isinstance(rule, Rule):
            raise UserError("rule module defines no RULE = Rule(...)", where=str(path))
        if rule.kind in rules and origin[rule.kind].parent == path.parent:
            raise UserError(f"rule kind {rule.kind!r} is defined twice (also in "
                            f"{origin[rule.kind].name})", where=str(path))
        rules[rule.kind] = rule
        origin[rule.kind] = path
    return rules
