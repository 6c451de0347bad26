"""Load a workspace: find its root, read every package's BUILD.yaml, validate each target.

The root is the nearest directory upwards whose BUILD.yaml has a top-level
``workspace:`` block. Every directory below it with a BUILD.yaml is a package.
Each target is checked with jsonschema against the schema its rule declares,
after the workspace defaults are applied.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

from dnn64build.errors import UserError, short_repr
from dnn64build.errors import did_you_mean as _did_you_mean
from dnn64build.rules_api import Rule, Target
from dnn64build.workspace.labels import Label, is_package_path, parse_label
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
    kinds: tuple[str, ...] = ()  # every rule kind, used or not
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
        package = directory.relative_to(root).as_posix()
        package = "" if package == "." else package
        # Only a directory whose path is a package name can become a package: watch those
        # (they are also the only ones build.ninja can always name).
        if is_package_path(package):
            directories.append(directory)
        if not is_package:
            continue
        manifest = directory / MANIFEST
        display = manifest.relative_to(root).as_posix()
        if not is_package_path(package):
            raise UserError(
                f"package directory {package!r} is not a valid package name",
                where=repr(display),
                hint="each directory of a package's path must be letters, digits and _ . + - "
                "(not starting with . + -): rename it, or move its BUILD.yaml elsewhere",
            )
        manifests.append(manifest)
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
    return Workspace(root, name, targets, tuple(manifests), tuple(directories),
                     tuple(sorted(rules)), remote_cache)


def _check_defaults(defaults: Mapping[str, Any], rules: Mapping[str, Rule], display: str) -> None:
    settable = {n for r in rules.values() for n, a in r.attrs.items() if a.workspace_default}
    for key in defaults:
        if key not in settable:
            raise UserError(
                f"workspace.defaults: {short_repr(key)} is not an attribute that can have a "
                f"workspace default{_did_you_mean(str(key), settable)}",
                where=getattr(defaults, "where", display),
                hint=f"allowed: {', '.join(sorted(settable))}",
            )


def _load_target(
    entry: Any, package: str, display: str, rules: Mapping[str, Rule], defaults: Mapping[str, Any]
) -> Target:
    where = entry.where if isinstance(entry, SourceMap) else display
    kind = entry.get("rule")
    if not isinstance(kind, str) or kind not in rules:
        raise UserError(
            f"unknown rule kind {short_repr(kind)}{_did_you_mean(str(kind), rules)}",
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
    deps: list[Label] = []
    for attr_name, attr in rule.attrs.items():
        if attr.labels:
            deps += _label_list(attrs.get(attr_name, []), attr_name, label, where)
    attr_where = ({name: entry.where_of(name) for name in entry}
                  if isinstance(entry, SourceMap) else {})
    return Target(label, rule, attrs, where, tuple(deps), attr_where)


def _label_list(texts: list[str], attr: str, owner: Label, where: str) -> list[Label]:
    """The labels one attribute names; the same target twice (perhaps spelt differently,
    ``:a`` and ``//pkg:a``) is an error."""
    seen: dict[Label, str] = {}
    for text in texts:
        dep = parse_label(text, package=owner.package, where=where)
        if dep in seen:
            raise UserError(
                f"target {owner}: attribute {attr!r} names {dep} twice "
                f"(as {seen[dep]!r} and {text!r})",
                where=where, hint="list each target once",
            )
        seen[dep] = text
    return list(seen)


def _merge(default: Any, value: Any) -> Any:
    """A target's value over the workspace default; mappings merge one level deep."""
    if value is None:
        return default
    if isinstance(default, Mapping) and isinstance(value, Mapping):
        return {**default, **value}
    return value


def _is_integer(_checker: Any, value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# An attribute declared integer takes an int, not a whole float such as 16.0 (YAML keeps
# them apart; JSON Schema's default "integer" would admit 16.0 and pass a float on).
_Validator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer),
)


def _validate(
    data: Any, schema: dict, where: str, what: str, source: Any | None = None
) -> None:
    validator = _Validator(schema)
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
        extra = sorted(set(error.instance) - set(allowed), key=str)  # keys may be numbers
        return "; ".join(f"unknown key {short_repr(k)}{_did_you_mean(str(k), allowed)}"
                         for k in extra)
    if error.validator == "required":
        return error.message.replace("is a required property", "is required")
    if _whole_float_for_integer(error):
        return f"{error.instance!r} is a float; write the integer {int(error.instance)}"
    # jsonschema quotes the value whole: a long string or a big structure would flood
    return error.message.replace(repr(error.instance), short_repr(error.instance))


def _whole_float_for_integer(error: jsonschema.ValidationError) -> bool:
    """A float such as 16.0 where the schema (or one of its oneOf branches) wants an int."""
    wanted = [error.validator_value] if error.validator == "type" else [
        branch.get("type") for branch in error.schema.get("oneOf", [])]
    return (isinstance(error.instance, float) and error.instance.is_integer()
            and "integer" in wanted)


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
