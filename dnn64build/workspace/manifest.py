"""Load a workspace: find its root, read every package's BUILD.yaml, validate each target.

The root is the nearest directory upwards whose BUILD.yaml has a top-level
``workspace:`` block. Every directory below it with a BUILD.yaml is a package.
Each target is checked with jsonschema against the schema its rule declares,
after the workspace defaults are applied.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

from dnn64build.errors import UserError
from dnn64build.rules_api import Rule, Target
from dnn64build.workspace.labels import Label, parse_label
from dnn64build.workspace.root import MANIFEST, OUTPUT_BASE
from dnn64build.workspace.yaml_source import SourceMap, load_yaml

_SKIP_DIRS = {OUTPUT_BASE, "__pycache__", "node_modules"}

_ROOT_SCHEMA = {
    "type": "object",
    "properties": {
        "workspace": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "defaults": {"type": "object"},
                "remote_cache": {  # docs/ci.md
                    "type": "object",
                    "properties": {
                        "url": {"type": "string", "pattern": "^https?://"},
                        "read_only": {"type": "boolean"},
                        "timeout": {"type": "number", "exclusiveMinimum": 0},
                    },
                    "required": ["url"],
                    "additionalProperties": False,
                },
            },
            "additionalProperties": False,
        },
        "targets": {"type": "array", "items": {"type": "object"}},
    },
    "additionalProperties": False,
}
_PACKAGE_SCHEMA = {
    "type": "object",
    "properties": {"targets": _ROOT_SCHEMA["properties"]["targets"]},
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Workspace:
    root: Path
    name: str
    targets: Mapping[Label, Target]
    manifests: tuple[Path, ...]  # every BUILD.yaml read
    directories: tuple[Path, ...]  # every directory searched for packages
    remote_cache: Mapping[str, Any] = field(default_factory=dict)  # workspace.remote_cache

    @property
    def output_base(self) -> Path:
        return self.root / OUTPUT_BASE


def walk_packages(root: Path) -> Iterator[tuple[Path, bool]]:
    """Every directory under ``root`` (skipping outputs and hidden ones) and whether it is a
    package, in sorted order."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
        yield Path(dirpath), MANIFEST in filenames


def load_workspace(root: Path, rules: Mapping[str, Rule]) -> Workspace:
    targets: dict[Label, Target] = {}
    manifests: list[Path] = []
    directories: list[Path] = []
    name, defaults, remote_cache = root.name, {}, {}
    for directory, is_package in walk_packages(root):
        directories.append(directory)
        if not is_package:
            continue
        manifest = directory / MANIFEST
        manifests.append(manifest)
        package = directory.relative_to(root).as_posix()
        package = "" if package == "." else package
        display = manifest.relative_to(root).as_posix()
        data = load_yaml(manifest, display)
        if data is None:
            continue
        _validate(data, _ROOT_SCHEMA if not package else _PACKAGE_SCHEMA, display, "manifest")
        if not package:
            workspace = data.get("workspace", {})
            name = workspace.get("name", name)
            defaults = workspace.get("defaults", {})
            remote_cache = dict(workspace.get("remote_cache", {}))
            _check_defaults(defaults, rules, display)
        for entry in data.get("targets", []):
            target = _load_target(entry, package, display, rules, defaults)
            if target.label in targets:
                raise UserError(
                    f"duplicate target name {target.label.name!r} "
                    f"(first defined at {targets[target.label].where})",
                    where=target.where,
                    hint="target names must be unique within a package",
                )
            targets[target.label] = target
    return Workspace(root, name, targets, tuple(manifests), tuple(directories), remote_cache)


def _check_defaults(defaults: Mapping[str, Any], rules: Mapping[str, Rule], display: str) -> None:
    settable = {n for r in rules.values() for n, a in r.attrs.items() if a.workspace_default}
    for key in defaults:
        if key not in settable:
            raise UserError(
                f"workspace.defaults: {key!r} is not an attribute that can have a workspace "
                f"default{_did_you_mean(key, settable)}",
                where=getattr(defaults, "where", display),
                hint=f"allowed: {', '.join(sorted(settable))}",
            )


def _load_target(
    entry: Any, package: str, display: str, rules: Mapping[str, Rule], defaults: Mapping[str, Any]
) -> Target:
    where = entry.where if isinstance(entry, SourceMap) else display
    kind = entry.get("rule")
    if kind not in rules:
        raise UserError(
            f"unknown rule kind {kind!r}{_did_you_mean(str(kind), rules)}",
            where=where,
            hint=f"rule kinds: {', '.join(sorted(rules))} (add one as a module in rules/)",
        )
    rule = rules[kind]
    attrs = dict(entry)
    for attr_name, attr in rule.attrs.items():
        if attr.workspace_default and attr_name in defaults:
            attrs[attr_name] = _merge(defaults[attr_name], attrs.get(attr_name))
        elif attr_name not in attrs and attr.default is not None:
            attrs[attr_name] = attr.default
    name = attrs.get("name", "?")
    _validate(attrs, rule.schema(), where, f"target {name!r} ({kind})", entry)
    label = Label(package, name)
    deps = tuple(
        parse_label(text, package=package, where=where)
        for attr_name, attr in rule.attrs.items()
        if attr.labels
        for text in attrs.get(attr_name, [])
    )
    return Target(label, rule, attrs, where, deps)


def _merge(default: Any, value: Any) -> Any:
    """A target's value over the workspace default; mappings merge one level deep."""
    if value is None:
        return default
    if isinstance(default, Mapping) and isinstance(value, Mapping):
        return {**default, **value}
    return value


def _validate(
    data: Any, schema: dict, where: str, what: str, source: Any | None = None
) -> None:
    validator = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is None:
        return
    path = ".".join(str(p) for p in error.absolute_path)
    where = _innermost_where(source if source is not None else data, error.absolute_path, where)
    subject = f"{what}: attribute {path!r}" if path else what
    raise UserError(f"{subject}: {_explain(error)}", where=where, hint=_allowed(error))


def _innermost_where(data: Any, path: Any, default: str) -> str:
    where = data.where if isinstance(data, SourceMap) else default
    for key in path:
        try:
            data = data[key]
        except (KeyError, IndexError, TypeError):
            break
        if isinstance(data, SourceMap):
            where = data.where
    return where


def _explain(error: jsonschema.ValidationError) -> str:
    if error.validator == "additionalProperties":
        allowed = error.schema.get("properties", {})
        extra = sorted(set(error.instance) - set(allowed))
        return "; ".join(f"unknown key {k!r}{_did_you_mean(k, allowed)}" for k in extra)
    if error.validator == "required":
        return error.message.replace("is a required property", "is required")
    return error.message


def _allowed(error: jsonschema.ValidationError | None) -> str | None:
    schema = error.schema
    if error.validator == "additionalProperties":
        return f"allowed keys: {', '.join(schema.get('properties', {}))}"
    if "enum" in schema:
        return f"allowed values: {', '.join(map(str, schema['enum']))}"
    while error is not None:  # a oneOf branch's error: the description sits on the parent
        if "description" in error.schema:
            return error.schema["description"]
        error = error.parent
    return None


def _did_you_mean(word: str, choices: Any) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
