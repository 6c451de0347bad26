"""Find the rule kinds: every ``*.py`` in the tool's ``rules/`` and in the workspace's.

Each module defines ``RULE``. A workspace may add its own kinds in its own
``rules/`` directory without touching the tool, or replace a built-in kind there.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from pathlib import Path

from dnn64build import TOOL_ROOT
from dnn64build.errors import UserError
from dnn64build.rules_api import Rule


def rule_files(workspace_root: Path) -> list[Path]:
    dirs = [TOOL_ROOT / "rules"]
    if (workspace_root / "rules").resolve() != dirs[0].resolve():
        dirs.append(workspace_root / "rules")
    files = [
        f for d in dirs if d.is_dir() for f in sorted(d.glob("*.py"))
        if not f.name.startswith("_")
    ]
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
        # Keyed by the file's real path: two folders may share a basename (a workspace named
        # like the tool's checkout), and each must load its own module.
        digest = hashlib.sha256(os.fsencode(path.resolve())).hexdigest()[:16]
        name = f"dnn64build_rules.r{digest}.{path.stem}"
        module = sys.modules.get(name)
        if module is None:
            spec = importlib.util.spec_from_file_location(name, path)
            assert spec and spec.loader
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module  # dataclasses look their module up while being created
            spec.loader.exec_module(module)
        rule = getattr(module, "RULE", None)
        if not isinstance(rule, Rule):
            raise UserError("rule module defines no RULE = Rule(...)", where=str(path))
        if rule.kind in rules and origin[rule.kind].parent == path.parent:
            raise UserError(f"rule kind {rule.kind!r} is defined twice (also in "
                            f"{origin[rule.kind].name})", where=str(path))
        rules[rule.kind] = rule
        origin[rule.kind] = path
    return rules
