"""What a rule module in ``rules/`` is made of: attributes, an implementation, a context.

A rule module defines ``RULE = Rule(kind=..., attrs={...}, implementation=fn)``.
The core validates a target's attributes against the schema its ``Attr``s
declare, resolves the typed ones (a file, labels providing a record, an enum, a
size: see the constructors below) with errors at the attribute's file:line, and
calls ``implementation(ctx)`` after the targets it depends on. The implementation
declares actions through the context: a built-in stage, a Python step of its own
(``ctx.step``), a command of its own (``ctx.command``) or toolchain commands; it
says what it offers to commands (``ctx.offer_plan``, ``offer_run``, ``offer_test``)
and returns an immutable record (a frozen dataclass carrying its label) that
dependent targets receive through a ``labels`` attribute. Adding a rule kind is
adding a file: the core never names a rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from dnn64build.stages.io import StageArgs
from dnn64build.workspace.labels import NAME_SCHEMA_PATTERN, Label

# What the core does with an attribute's value before the implementation sees it.
JSON = "json"  # nothing: the value as written (defaults applied)
FILE = "file"  # a package-relative path -> the file's ninja path, checked to exist
LABELS = "labels"  # a list of labels -> the records their targets returned, in order
SIZE = "size"  # "4MiB", "512 KiB", "1GB", "100B" or a byte count -> bytes (int)

# What a target can offer the commands (its entry in the target index names them), and the
# output groups ``run`` builds: the ROM, the host program and image, each model's codegen
# meta.json, and each model's quantised IR (graph.json then weights.npz).
OFFER_PLAN = "plan"
OFFER_RUN = "run"
OFFER_TEST = "test"
RUN_ROM = "rom"
RUN_HOST = "host"
RUN_MODELS = "models"
RUN_REFERENCE = "reference"

# Binary units as the IEC writes them; kB/KB, MB and GB in their decimal (SI) meaning.
_UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30,
          "kB": 10**3, "KB": 10**3, "MB": 10**6, "GB": 10**9}
_SIZE_PATTERN = rf"^([0-9]{{1,30}}) ?({'|'.join(_UNITS)})\Z"  # digits: see yaml_source


@dataclass(frozen=True)
class Attr:
    """One attribute of a rule.

    ``schema`` is the JSON schema of its value; ``workspace_default`` lets the
    workspace's ``defaults:`` block set it for every target of every rule that
    declares it; ``labels`` marks a list of labels this target depends on;
    ``resolve`` says what the core turns the value into (JSON, FILE, LABELS, SIZE);
    ``provides``: for LABELS, the record type every named target must return;
    ``minimum``, ``maximum``: for SIZE, the byte counts allowed.
    """

    schema: Mapping[str, Any]
    doc: str
    required: bool = False
    default: Any = None
    workspace_default: bool = False
    labels: bool = False
    resolve: str = JSON
    provides: type | None = None
    minimum: int = 0
    maximum: int | None = None


def file_attr(doc: str, *, required: bool = False) -> Attr:
    """A file of the target's package; the implementation gets its ninja path."""
    return Attr({"type": "string", "description": "a path relative to the package"}, doc,
                required=required, resolve=FILE)


def labels_attr(doc: str, *, provides: type | None = None, required: bool = False) -> Attr:
    """Targets this one depends on; the implementation gets the records they returned,
    each checked to be a ``provides`` (when given)."""
    return Attr({"type": "array", "items": {"type": "string"}, "minItems": 1,
                 "uniqueItems": True}, doc, required=required, labels=True,
                resolve=LABELS, provides=provides)


def enum_attr(choices: Sequence[str], doc: str, *, default: str | None = None,
              workspace_default: bool = False) -> Attr:
    """One of ``choices``."""
    return Attr({"enum": list(choices)}, doc, default=default,
                workspace_default=workspace_default)


def size_attr(doc: str, *, minimum: int = 1, maximum: int | None = None,
              default: str | int | None = None, workspace_default: bool = False) -> Attr:
    """A byte count written as ``4MiB``, ``512 KiB``, ``1GiB``, ``100B``, ``4MB`` (decimal:
    4,000,000) or an integer; the implementation gets bytes, checked to lie in
    [minimum, maximum]."""
    return Attr(
        {"description": f"{doc}: an integer byte count, or a number with B, KiB, MiB or "
                        "GiB (powers of 1024, such as 4MiB or 512 KiB) or kB, MB or GB (powers "
                        "of 1000)",
         "oneOf": [{"type": "string", "pattern": _SIZE_PATTERN},
                   {"type": "integer", "minimum": minimum}]},
        doc, default=default, workspace_default=workspace_default, resolve=SIZE,
        minimum=minimum, maximum=maximum,
    )


def size_bytes(value: str | int) -> int:
    """The byte count a SIZE attribute's value (already schema-checked) stands for."""
    if isinstance(value, int):
        return value
    m = re.fullmatch(_SIZE_PATTERN.strip("^"), value)
    assert m, "the schema admits only this form"
    return int(m[1]) * _UNITS[m[2]]


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
    """A validated target: its label, rule, attributes (defaults applied) and origin
    (``where``: "file:line:column" of its entry; ``attr_where``: of each attribute)."""

    label: Label
    rule: Rule
    attrs: Mapping[str, Any]
    where: str
    deps: tuple[Label, ...] = field(default=())
    attr_where: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RunModel:
    """One model a runnable program runs, for ``run`` and ``test``: its codegen meta.json
    and the quantised IR (graph.json, weights.npz) its outputs are compared with."""

    label: Label
    meta: str
    ir: tuple[str, str]


class RuleContext(Protocol):
    """The API an implementation declares its actions through (implemented by the graph
    layer, dnn64build/graph/context.py, where each method is documented).

    ``attrs`` holds the resolved attributes (FILE -> ninja path, LABELS -> records,
    SIZE -> bytes), ``written`` the values as the manifest has them (for messages),
    ``where_of(attr)`` the file:line:column of an attribute (of the target when it is
    not written out). Paths are ninja paths: what ``source`` and the action methods
    return, and what action inputs take.
    """

    label: Label
    attrs: Mapping[str, Any]
    written: Mapping[str, Any]
    where: str

    def where_of(self, attr: str) -> str: ...

    def source(self, path: str, *, attr: str) -> str: ...

    def action(self, stage: str, *, inputs: Mapping[str, str | list[str]],
               outputs: Mapping[str, str], config: Mapping[str, Any], progress: str,
               key: str | None = None) -> dict[str, str]: ...

    def step(self, function: Callable[[StageArgs], None], *,
             inputs: Mapping[str, str | list[str]], outputs: Mapping[str, str],
             config: Mapping[str, Any], mnemonic: str, progress: str,
             key: str | None = None) -> dict[str, str]: ...

    def command(self, argv: Sequence[str], *, inputs: Mapping[str, str | list[str]],
                outputs: Mapping[str, str], mnemonic: str, progress: str) -> dict[str, str]: ...

    def compile(self, toolchain: str, source: str, output: str, *, include_dirs: list[str],
                headers: list[str], progress: str) -> str: ...

    def archive(self, toolchain: str, objects: list[str], output: str, *,
                progress: str) -> str: ...

    def link(self, toolchain: str, objects: list[str], output: str, *, memory: int,
             progress: str) -> tuple[str, str]: ...

    def runtime(self, toolchain: str) -> tuple[str, list[str]]: ...

    def boot_stub(self) -> str: ...

    def env(self, name: str) -> str | None: ...

    def add_group(self, group: str | None, outputs: list[str]) -> None: ...

    def offer_plan(self, *, plan: str, report: str, timeline: str) -> None: ...

    def offer_run(self, *, rom: list[str] | None, host: list[str],
                  models: Sequence[RunModel]) -> None: ...

    def offer_test(self, *, inputs: str, outputs: str | None, labels: str | None) -> None: ...
