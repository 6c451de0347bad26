"""What a rule module in ``rules/`` is made of: attributes, an implementation, a context.

A rule module defines ``RULE = Rule(kind=..., attrs={...}, implementation=fn)``.
The core validates a target's attributes against the schema its ``Attr``s
declare, resolves the labels it depends on, and calls ``implementation(ctx)``
after those dependencies; the implementation declares actions through the
context and returns an immutable record (a frozen dataclass carrying its label)
that dependent targets receive from ``ctx.dep(label)``. Adding a rule kind is
adding a file: the core never names a rule.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from dnn64build.workspace.labels import NAME_SCHEMA_PATTERN, Label


@dataclass(frozen=True)
class Attr:
    """One attribute of a rule.

    ``schema`` is the JSON schema of its value; ``workspace_default`` lets the
    workspace's ``defaults:`` block set it for every target of every rule that
    declares it; ``labels`` marks a list of labels this target depends on.
    """

    schema: Mapping[str, Any]
    doc: str
    required: bool = False
    default: Any = None
    workspace_default: bool = False
    labels: bool = False


@dataclass(frozen=True)
class Rule:
    kind: str
    doc: str
    attrs: Mapping[str, Attr]
    implementation: Callable[[RuleContext], Any]

    def schema(self) -> dict[str, Any]:
        """The JSON schema a target of this rule must satisfy."""
        props: dict[str, Any] = {
            "rule": {"const": self.kind},
            "name": {"type": "string", "pattern": NAME_SCHEMA_PATTERN},
        }
        props.update({name: dict(a.schema) for name, a in self.attrs.items()})
        return {
            "type": "object",
            "properties": props,
            "required": ["rule", "name"] + [n for n, a in self.attrs.items() if a.required],
            "additionalProperties": False,
        }


@dataclass(frozen=True)
class Target:
    """A validated target: its label, rule, attributes (defaults applied) and origin."""

    label: Label
    rule: Rule
    attrs: Mapping[str, Any]
    where: str  # "file:line:column" of its entry in BUILD.yaml
    deps: tuple[Label, ...] = field(default=())


class RuleContext(Protocol):
    """The API an implementation declares its actions through (implemented by the graph layer)."""

    label: Label
    attrs: Mapping[str, Any]
    where: str

    def source(self, path: str, *, attr: str) -> str:
        """A file of the target's package, checked to exist inside the workspace; returns its
        ninja path."""
        ...

    def deps(self, attr: str) -> list[Any]:
        """The records returned by the implementations of the targets a label-list attribute
        names, in its order."""
        ...

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
        """Declare one action running ``stage``.

        ``outputs`` are file names relative to this target's output directory;
        the returned mapping gives their ninja paths, to pass as other actions'
        inputs. ``config`` is exactly the attributes the stage uses; it is
        written to a per-target file that changes only when they do. ``key``
        tells apart several actions of one stage in one target.
        """
        ...

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
        """Declare (once for the whole workspace, however many targets ask) an action whose
        outputs live under ``shared/<key>/``, such as the kernel library of one toolchain."""
        ...

    def compile(
        self, toolchain: str, source: str, output: str, *, include_dirs: list[str],
        headers: list[str], progress: str,
    ) -> str:
        """Compile the C file ``source`` (a ninja path) to ``output`` (relative to this
        target's output directory) with ``toolchain``, as one ninja command whose header
        dependencies are tracked exactly; ``headers`` are the generated headers it may
        include. Returns the object's ninja path."""
        ...

    def link(self, toolchain: str, objects: list[str], output: str, *, memory: int,
             progress: str) -> str:
        """Link ``objects`` into the program ``output`` (target-relative; for ``bare`` a raw
        image for ``memory`` bytes of RDRAM). Returns its ninja path."""
        ...

    def runtime(self, toolchain: str) -> tuple[str, list[str]]:
        """The kernel library and the platform layer's objects of ``toolchain``, declared
        once for the whole workspace."""
        ...

    def boot_stub(self) -> str:
        """The bare toolchain's raw boot stub (IPL3 slot), declared once."""
        ...

    def env(self, name: str) -> str | None:
        """An environment variable the graph depends on: the graph is regenerated when its
        value changes."""
        ...

    def set_info(self, key: str, value: Any) -> None:
        """Record JSON data about this target for commands (``run``, ``test``) to read from
        the target index without loading the manifests; paths in it should be ninja paths
        (as ``source`` returns)."""
        ...

    def add_group(self, group: str | None, outputs: list[str]) -> None:
        """Name the outputs ``dnn64build build`` builds (group None) or that a command such as
        ``run --platform host`` builds (a named group)."""
        ...
