"""The RuleContext implementation: turns a rule's declarations into Actions.

It owns the output layout: ``bin/<package>/<name>/`` per target,
``shared/<key>/`` for actions shared by the whole workspace, and one config
file per action holding exactly the attributes its stage uses.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from dnn64build import TOOL_ROOT
from dnn64build.errors import UserError
from dnn64build.graph.actions import Action, BuildGraph
from dnn64build.graph.ninja_escape import unwritable
from dnn64build.graph.toolchain_actions import ToolchainActions
from dnn64build.rules_api import Target
from dnn64build.stages.registry import STAGES
from dnn64build.toolchains import toolchain_variables
from dnn64build.workspace.labels import Label, parse_label
from dnn64build.workspace.root import OUTPUT_BASE

_SOURCE_SUFFIXES = {".py", ".c", ".h", ".S", ".ld", ".yaml", ".json"}


@cache
def stage_sources(stage: str) -> tuple[str, ...]:
    """Absolute paths of the files a stage's code lives in (its implicit inputs)."""
    files: set[Path] = set()
    for rel in STAGES[stage].sources:
        path = TOOL_ROOT / rel
        if path.is_dir():
            files.update(
                p for p in path.rglob("*")
                if p.suffix in _SOURCE_SUFFIXES and "__pycache__" not in p.parts
            )
        elif path.exists():
            files.add(path)
    return tuple(sorted(str(p) for p in files))


def config_bytes(config: Mapping[str, Any]) -> bytes:
    return (json.dumps(config, indent=1, sort_keys=True) + "\n").encode()


class ActionContext:
    def __init__(
        self, target: Target, root: Path, graph: BuildGraph, providers: Mapping[Label, Any]
    ) -> None:
        self.label = target.label
        self.attrs = target.attrs
        self.where = target.where
        self._root = root
        self._output_base = root / OUTPUT_BASE
        self._graph = graph
        self._providers = providers
        self._dir = f"bin/{target.label.path}"
        self._tools = ToolchainActions(graph, self._output_base)

    def source(self, path: str, *, attr: str) -> str:
        self._check_writable(path, attr)
        package_dir = self._root / self.label.package
        full = (package_dir / path).resolve()
        if not full.is_relative_to(self._root.resolve()):
            raise UserError(
                f"target {self.label}: attribute {attr!r}: path {path!r} escapes the workspace",
                where=self.where,
                hint="sources and data must live inside the workspace (copy or link them in)",
            )
        if not full.is_file():
            raise UserError(
                f"target {self.label}: attribute {attr!r}: file not found: "
                f"{full.relative_to(self._root.resolve())}",
                where=self.where,
                hint="paths are relative to the package directory (the one holding BUILD.yaml)",
            )
        ninja_path = os.path.relpath(full, self._output_base)
        self._check_writable(ninja_path, attr)  # a link may lead to a name ninja cannot take
        return ninja_path

    def _check_writable(self, path: str, attr: str) -> None:
        if reason := unwritable(path):
            raise UserError(f"target {self.label}: attribute {attr!r}: path {path!r} cannot "
                            f"be used: {reason}", where=self.where, hint="rename the file")

    def deps(self, attr: str) -> list[Any]:
        return [
            self._providers[parse_label(text, package=self.label.package)]
            for text in self.attrs.get(attr, [])
        ]

    def action(
        self,
        stage: str,
        *,
        inputs: Mapping[str, str | list[str]],
        outputs: Mapping[str, str],
        config: Mapping[str, Any],
        progress: str,
        key: str | None = None,
    ) -> dict[str, str]:
        suffix = f"-{key}" if key else ""
        return self._add(
            stage, self.label, key or "", inputs,
            {n: f"{self._dir}/{p}" for n, p in outputs.items()},
            f"{self._dir}/config/{stage}{suffix}.json", config, progress,
        )

    def shared_action(
        self,
        stage: str,
        *,
        key: str,
        inputs: Mapping[str, str | list[str]],
        outputs: Mapping[str, str],
        config: Mapping[str, Any],
        progress: str,
    ) -> dict[str, str]:
        directory = f"shared/{key}"
        return self._add(
            stage, None, key, inputs, {n: f"{directory}/{p}" for n, p in outputs.items()},
            f"{directory}/config.json", config, progress,
        )

    def compile(
        self, toolchain: str, source: str, output: str, *, include_dirs: list[str],
        headers: list[str], progress: str,
    ) -> str:
        self._track_toolchain(toolchain)
        return self._tools.compile(
            toolchain, source, f"{self._dir}/{output}", include_dirs=include_dirs,
            headers=headers, progress=progress,
        )

    def link(self, toolchain: str, objects: list[str], output: str, *, memory: int,
             progress: str) -> tuple[str, str]:
        """(the linked file, the program): see ToolchainActions.link."""
        self._track_toolchain(toolchain)
        return self._tools.link(toolchain, objects, f"{self._dir}/{output}", memory=memory,
                                progress=progress)

    def runtime(self, toolchain: str) -> tuple[str, list[str]]:
        self._track_toolchain(toolchain)
        return self._tools.runtime(toolchain)

    def boot_stub(self) -> str:
        self._track_toolchain("bare")
        return self._tools.boot_stub()

    def _track_toolchain(self, toolchain: str) -> None:
        """Read the variables that decide which executables ``toolchain`` runs through
        ``env``, so that changing one regenerates the graph (and its identity file)."""
        for name in toolchain_variables(toolchain):
            self.env(name)

    def env(self, name: str) -> str | None:
        value = os.environ.get(name)
        self._graph.env[name] = value
        return value

    def set_info(self, key: str, value: Any) -> None:
        self._graph.info.setdefault(self.label, {})[key] = value

    def add_group(self, group: str | None, outputs: list[str]) -> None:
        """Name the outputs ``dnn64build build`` (group None) or a command like ``run`` builds."""
        self._graph.add_group(group_name(self.label, group), outputs)

    def _add(
        self,
        stage: str,
        label: Label | None,
        key: str,
        inputs: Mapping[str, str | list[str]],
        outputs: dict[str, str],
        config_path: str,
        config: Mapping[str, Any],
        progress: str,
    ) -> dict[str, str]:
        self._graph.add(
            Action(
                stage=stage,
                label=label,
                key=key,
                inputs={n: (v,) if isinstance(v, str) else tuple(v) for n, v in inputs.items()},
                outputs=outputs,
                config_path=config_path,
                config=dict(config),
                progress=progress,
                implicit=stage_sources(stage),
                depfile=config_path.removesuffix(".json") + ".d" if STAGES[stage].depfile
                else None,
            )
        )
        return outputs


def group_name(label: Label, group: str | None = None) -> str:
    """The ninja phony target building a label's outputs (or one named group of them)."""
    name = f"target/{label.package}:{label.name}"
    return f"{name}@{group}" if group else name
