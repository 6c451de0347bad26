"""The build graph as objects: actions with named inputs and outputs, validated before
anything is written.

Paths are ninja paths: relative to the output base (where ninja runs) for
generated files, ``../``-relative for workspace sources, absolute for the
tool's own files.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from graphlib import CycleError, TopologicalSorter
from typing import Any

from dnn64build.workspace.labels import Label


class GraphBug(Exception):
    """An inconsistent graph produced by a rule: a bug in that rule, not a user error."""


@dataclass(frozen=True)
class Action:
    """One run of one stage: ``python -m dnn64build.stages STAGE --config ... --in/--out``."""

    stage: str
    label: Label
    key: str  # tells apart several actions of one stage in one target
    inputs: Mapping[str, tuple[str, ...]]
    outputs: Mapping[str, str]
    config_path: str
    config: Mapping[str, Any]
    progress: str
    mnemonic: str  # the word progress lines show (the stage's, or a rule step's own)
    implicit: tuple[str, ...] = field(default=())  # the stage's own source files
    depfile: str | None = None  # where the stage lists the files it read (see StageSpec)

    @property
    def id(self) -> str:
        return f"{self.label}#{self.stage}:{self.key}"

    def all_inputs(self) -> list[str]:
        return sorted({p for paths in self.inputs.values() for p in paths})


@dataclass(frozen=True)
class CommandAction:
    """One toolchain command (compile, archive, link, objcopy) that ninja runs directly.

    ``argv`` writes each output ``OUT`` as ``OUT.tmp`` (see dnn64build/worker/client.py);
    ``depfile``: the command writes gcc's dependency list to ``OUT.d`` (``deps = gcc``), so
    ninja tracks exactly the headers it included. ``key_inputs`` are files a remote cache
    key must also hash (every header the command could include); ``tool`` is the
    toolchain's identity file (compiler path and version), an input of every command of a
    toolchain (None for a rule's own command, kind ``command``).
    """

    kind: str  # compile, archive, link, objcopy, command
    name: str  # unique: the first output's path
    inputs: tuple[str, ...]
    outputs: Mapping[str, str]
    argv: tuple[str, ...]
    progress: str
    tool: str | None
    mnemonic: str  # the word progress lines show
    depfile: bool = False
    key_inputs: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.name}"

    def all_inputs(self) -> list[str]:
        return sorted(set(self.inputs))


AnyAction = Action | CommandAction


class BuildGraph:
    def __init__(self) -> None:
        self.actions: dict[str, AnyAction] = {}
        self._producer: dict[str, str] = {}  # output path -> action id
        self.groups: dict[str, list[str]] = {}  # phony name -> outputs it builds
        self.info: dict[Label, dict[str, Any]] = {}  # rule-provided data for commands
        self.env: dict[str, str | None] = {}  # environment variables the rules read
        self.unresolved = False  # a toolchain was not found: regenerate on every build
        # Generated files beside the configs (path -> text): the toolchains' identities.
        self.files: dict[str, str] = {}

    def add(self, action: AnyAction) -> None:
        if action.id in self.actions:
            if self.actions[action.id] == action:  # a shared action asked for again
                return
            raise GraphBug(f"two different actions named {action.id}")
        for out in action.outputs.values():
            if out in self._producer:
                raise GraphBug(f"{out} is produced by both {self._producer[out]} and {action.id}")
            self._producer[out] = action.id
        self.actions[action.id] = action

    def add_group(self, name: str, outputs: Iterable[str]) -> None:
        """Name ``outputs`` (kept in the given order: commands read them in that order)."""
        self.groups[name] = list(dict.fromkeys(outputs))

    def producers(self, outputs: Iterable[str]) -> set[str]:
        """Ids of every action needed to build ``outputs`` (transitively)."""
        needed: set[str] = set()
        stack = [self._producer[o] for o in outputs if o in self._producer]
        while stack:
            action_id = stack.pop()
            if action_id in needed:
                continue
            needed.add(action_id)
            for path in self.actions[action_id].all_inputs():
                if path in self._producer:
                    stack.append(self._producer[path])
        return needed

    def validate(self) -> None:
        """Reject cycles between actions (a rule bug: target cycles are caught earlier)."""
        order = TopologicalSorter(
            {
                a.id: {self._producer[p] for p in a.all_inputs() if p in self._producer}
                for a in self.actions.values()
            }
        )
        try:
            tuple(order.static_order())
        except CycleError as e:
            raise GraphBug(f"actions form a cycle: {' -> '.join(e.args[1])}") from None
