"""Find external tools as described by third_party/<name>.yaml.

A missing or too old tool is a UserError that names the Debian package or the
environment variable to set.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from dnn64build import DATA_ROOT
from dnn64build.errors import UserError

DESCRIPTOR_DIR = DATA_ROOT / "third_party"


@dataclass(frozen=True)
class ToolDescriptor:
    """One third_party/*.yaml file (fields documented in third_party/README.md)."""

    name: str
    description: str
    executables: Mapping[str, str]
    override_env: str | None = None
    root_env: str | None = None
    root_subdir: str = ""
    extra_dirs: tuple[str, ...] = ()
    version_command: tuple[str, ...] = ()
    version_pattern: str = ""
    version_minimum: str = ""
    debian_packages: tuple[str, ...] = ()
    install_hint: str = ""
    path: Path = field(default=Path(), compare=False)


@dataclass(frozen=True)
class FoundTool:
    """A tool's executables (role -> absolute path) and its version, if checked."""

    paths: Mapping[str, Path]
    version: str | None

    def __getitem__(self, role: str) -> str:
        return str(self.paths[role])


@functools.cache  # part of the tool's own code: parsed once per process, not per action
def load_descriptor(name: str) -> ToolDescriptor:
    path = DESCRIPTOR_DIR / f"{name}.yaml"
    try:
        raw = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise AssertionError(f"bug: no tool descriptor {path}") from exc
    version = raw.get("version") or {}
    install = raw.get("install") or {}
    return ToolDescriptor(
        name=raw["name"],
        description=raw.get("description", ""),
        executables=dict(raw["executables"]),
        override_env=raw.get("override_env"),
        root_env=raw.get("root_env"),
        root_subdir=raw.get("root_subdir", ""),
        extra_dirs=tuple(raw.get("extra_dirs") or ()),
        version_command=tuple(version.get("command") or ()),
        version_pattern=version.get("pattern", ""),
        version_minimum=str(version.get("minimum", "")),
        debian_packages=tuple(install.get("debian") or ()),
        install_hint=install.get("hint", ""),
        path=path,
    )


def _missing_hint(desc: ToolDescriptor) -> str:
    parts = [desc.install_hint] if desc.install_hint else []
    if desc.debian_packages and not desc.install_hint:
        parts.append("apt-get install " + " ".join(desc.debian_packages))
    if desc.override_env:
        parts.append(f"or set {desc.override_env} to the directory holding it")
    return "; ".join(parts)


def _search_dirs(desc: ToolDescriptor, env: Mapping[str, str]) -> tuple[list[str], str]:
    """Directories to search and a phrase saying where that was."""
    if desc.root_env:
        root = env.get(desc.root_env, "")
        if not root:
            raise UserError(
                f"{desc.name}: ${desc.root_env} is not set",
                hint=desc.install_hint or f"set {desc.root_env}",
            )
        directory = str(Path(root) / desc.root_subdir)
        return [directory], f"${desc.root_env}/{desc.root_subdir}"
    if desc.override_env and env.get(desc.override_env):
        directory = env[desc.override_env]
        return [directory], f"${desc.override_env} ({directory})"
    dirs = [d for d in env.get("PATH", "").split(os.pathsep) if d] + list(desc.extra_dirs)
    where = "PATH" + (" and " + ", ".join(desc.extra_dirs) if desc.extra_dirs else "")
    return dirs, where


def selecting_variables(name: str) -> tuple[str, ...]:
    """The environment variables that decide which executables ``find_tool(name)`` finds."""
    desc = load_descriptor(name)
    if desc.root_env:
        return (desc.root_env,)
    return (desc.override_env, "PATH") if desc.override_env else ("PATH",)


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def _check_version(desc: ToolDescriptor, paths: Mapping[str, Path]) -> str | None:
    if not desc.version_command:
        return None
    argv = [part.format(**{k: str(v) for k, v in paths.items()}) for part in desc.version_command]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"{desc.name}: cannot run {argv[0]}: {exc}") from exc
    match = re.search(desc.version_pattern, proc.stdout + proc.stderr, re.MULTILINE)
    if not match:
        raise UserError(
            f"{desc.name}: cannot tell the version of {argv[0]}", hint=_missing_hint(desc)
        )
    version = match.group(1)
    if desc.version_minimum and _version_tuple(version) < _version_tuple(desc.version_minimum):
        raise UserError(
            f"{desc.name}: version {version} is older than the required {desc.version_minimum}",
            hint=_missing_hint(desc),
        )
    return version


def find_tool(
    name: str, *, env: Mapping[str, str] | None = None, check_version: bool = True
) -> FoundTool:
    """Locate every executable of descriptor ``name``; UserError if one is missing."""
    desc = load_descriptor(name)
    env = os.environ if env is None else env
    dirs, where = _search_dirs(desc, env)
    paths: dict[str, Path] = {}
    for role, exe in desc.executables.items():
        found = shutil.which(exe, path=os.pathsep.join(dirs)) if dirs else None
        if found is None:
            raise UserError(
                f"{exe} not found in {where} (needed: {desc.description})",
                where=f"third_party/{name}.yaml",
                hint=_missing_hint(desc),
            )
        paths[role] = Path(os.path.abspath(found))
    version = _check_version(desc, paths) if check_version else None
    return FoundTool(paths, version)
