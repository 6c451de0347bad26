"""The record ``n64_model`` returns (``ModelInfo``), and what the rules that build from
models share: the toolchain attribute, the memory limits, C symbols, byte order.

A workspace rule that takes models imports the record from here:
``from dnn64build_rules.builtin._model import ModelInfo``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dnn64build.errors import UserError
from dnn64build.rules_api import RuleContext, enum_attr
from dnn64build.toolchains import (
    TOOLCHAINS,
    auto_toolchain,
    toolchain_executables,
    toolchain_variables,
)
from dnn64build.workspace.labels import Label

HOST = "host"
BARE = "bare"
N64_MEMORY_MAX = 8 * 1024 * 1024  # RDRAM with the Expansion Pak (4 MiB without)
HOST_MEMORY_MAX = 2**31  # the generated C writes sizes and offsets as int32 literals (cfmt)

TOOLCHAIN_ATTR = enum_attr(TOOLCHAINS, "how the program is built (auto: libdragon where "
                           "$N64_INST is set, else bare)", default="auto",
                           workspace_default=True)


@dataclass(frozen=True)
class ModelInfo:
    """A compiled model, ready to be packed into a ROM or a library (paths: ninja paths)."""

    label: Label
    symbol: str  # C identifier prefix of the model's generated code
    plan: str  # plan.json
    source: str  # the generated C
    header: str  # the generated model.h
    meta: str  # codegen's meta.json: arena, staging, inputs and outputs
    ir: tuple[str, str]  # the quantised IR (graph.json, weights.npz): the reference to compare
    objects: Mapping[str, str]  # toolchain -> compiled model object
    weights: Mapping[str, str]  # "big" / "little" -> weight blob
    memory: int  # target memory in bytes


def c_symbol(label: Label) -> str:
    return "m_" + re.sub(r"[^A-Za-z0-9]", "_", label.path)


def endianness(toolchain: str) -> str:
    return "little" if toolchain == HOST else "big"


def check_memory(ctx: RuleContext, memory: int, toolchain: str) -> None:
    """A program planned for more RDRAM than a console has would hang when it runs."""
    if toolchain == HOST:
        limit, what, hint = HOST_MEMORY_MAX, "the host build takes (2 GiB)", "use less"
    else:
        limit, what, hint = (N64_MEMORY_MAX, "an N64 has (4MiB, 8MiB with the Expansion Pak)",
                             "use 4MiB or 8MiB, or toolchain: host to plan for a bigger machine")
    if memory > limit:
        raise UserError(f"target {ctx.label}: memory {ctx.written['memory']!r} ({memory} "
                        f"bytes) is more than {what}", where=ctx.where_of("memory"), hint=hint)


def default_kernels(toolchain: str) -> str:
    """``kernels`` when the target does not say: the RSP where it pays on ``bare``, whose
    RSP kernels are proven in the emulators (docs/rsp.md); the CPU on libdragon, whose RSP
    path is not proven yet, and on the host, which has no RSP."""
    return "auto" if toolchain == BARE else "cpu"


def resolve_toolchain(ctx: RuleContext, name: str) -> str:
    """The toolchain ``name`` stands for (``auto``: see toolchains.auto_toolchain)."""
    return auto_toolchain(ctx.env("N64_INST")) if name == "auto" else name


def toolchain_config(ctx: RuleContext, toolchain: str) -> dict[str, object]:
    """The config of an action that runs ``toolchain``: its name and the executables it
    finds now. The stage finds them again itself; they are here so that switching
    DNN64_HOST_BINDIR, DNN64_MIPS_BINDIR, N64_INST or PATH to another compiler reruns it."""
    env = {name: value for name in toolchain_variables(toolchain)
           if (value := ctx.env(name)) is not None}
    return {"toolchain": toolchain, "executables": toolchain_executables(toolchain, env)}


def check_symbols(ctx: RuleContext, models: Sequence[ModelInfo]) -> None:
    """Two models of one program must not share a C symbol (``c_symbol`` maps '/', '.' and '_'
    alike): caught here, before any action runs, rather than at link time."""
    by_symbol: dict[str, Label] = {}
    for model in models:
        other = by_symbol.setdefault(model.symbol, model.label)
        if other != model.label:
            raise UserError(
                f"target {ctx.label}: models {other} and {model.label} would both be C symbol "
                f"{model.symbol!r} in one program",
                where=ctx.where, hint="rename one of the two targets",
            )
