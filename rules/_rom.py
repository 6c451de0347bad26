"""Records passed between the built-in rules, and the ROM packing they share.

``n64_model`` packs a ROM holding its one model; ``n64_rom`` packs several
models into one. Both declare the same actions through ``declare_rom``.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dnn64build.errors import UserError
from dnn64build.rom.header import TITLE_SIZE, title_problem
from dnn64build.rules_api import Attr, RuleContext
from dnn64build.toolchains import (
    TOOLCHAINS,
    auto_toolchain,
    toolchain_executables,
    toolchain_variables,
)
from dnn64build.workspace.labels import Label

HOST = "host"
MODELS_GROUP = "models"  # the codegen meta.json of each model a ROM runs, in run order
REFERENCE_GROUP = "reference"  # each model's quantised IR, graph.json then weights.npz

MEMORY_SCHEMA = {
    "description": "target RDRAM: 4MiB (stock N64), 8MiB (Expansion Pak) or a byte count "
    "(at most 8MiB; 2GiB with toolchain: host)",
    "oneOf": [
        {"type": "string", "pattern": r"^[0-9]+ ?(B|KiB|MiB)\Z"},
        {"type": "integer", "minimum": 65536},
    ],
}
_UNITS = {"B": 1, "KiB": 1024, "MiB": 1024 * 1024}
N64_MEMORY_MAX = 8 * _UNITS["MiB"]  # RDRAM with the Expansion Pak (4 MiB without)
HOST_MEMORY_MAX = 2**31  # the generated C writes sizes and offsets as int32 literals (cfmt)


@dataclass(frozen=True)
class ModelInfo:
    """A compiled model, ready to be packed into a ROM."""

    label: Label
    symbol: str  # C identifier prefix of the model's generated code
    plan: str  # ninja path of plan.json
    header: str  # generated model.h
    meta: str  # codegen's meta.json: arena, staging, inputs and outputs
    ir: tuple[str, str]  # the quantised IR (graph.json, weights.npz): the reference to compare
    objects: Mapping[str, str]  # toolchain -> compiled model object
    weights: Mapping[str, str]  # "big" / "little" -> weight blob
    memory: int  # target memory in bytes


def memory_bytes(value: str | int) -> int:
    if isinstance(value, int):
        return value
    m = re.fullmatch(r"([0-9]+) ?(B|KiB|MiB)", value)
    assert m, "the schema admits only this form"
    return int(m[1]) * _UNITS[m[2]]


def check_memory(ctx: RuleContext, memory: int, toolchain: str) -> None:
    """A ROM planned for more RDRAM than a console has would hang when it runs."""
    if toolchain == HOST:
        limit, what, hint = HOST_MEMORY_MAX, "the host build takes (2 GiB)", "use less"
    else:
        limit, what, hint = (N64_MEMORY_MAX, "an N64 has (4MiB, 8MiB with the Expansion Pak)",
                             "use 4MiB or 8MiB, or toolchain: host to plan for a bigger machine")
    if memory > limit:
        raise UserError(f"target {ctx.label}: memory {ctx.attrs['memory']!r} ({memory} bytes) "
                        f"is more than {what}", where=ctx.where, hint=hint)


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


def c_symbol(label: Label) -> str:
    return "m_" + re.sub(r"[^A-Za-z0-9]", "_", label.path)


def _check_symbols(ctx: RuleContext, models: Sequence[ModelInfo]) -> None:
    """Two models of one ROM must not share a C symbol (``c_symbol`` maps '/', '.' and '_'
    alike): caught here, before any action runs, rather than at link time."""
    by_symbol: dict[str, Label] = {}
    for model in models:
        other = by_symbol.setdefault(model.symbol, model.label)
        if other != model.label:
            raise UserError(
                f"target {ctx.label}: models {other} and {model.label} would both be C symbol "
                f"{model.symbol!r} in one ROM",
                where=ctx.where, hint="rename one of the two targets",
            )


def endianness(toolchain: str) -> str:
    return "little" if toolchain == HOST else "big"


# The attributes of every rule that packs a ROM (n64_model, n64_rom).
ROM_ATTRS = {
    "title": Attr({"type": "string", "maxLength": TITLE_SIZE},
                  f"ROM title ({TITLE_SIZE} printable ASCII characters at most; default: the "
                  "target's name)"),
    "ipl3": Attr(
        {
            "type": "string",
            "description": "a CIC-6102 signed IPL3 (0xFC0 bytes, from a ROM you own) for real "
            "hardware; without it the ROM boots with dnn64build's own stub, which only "
            "emulators accept",
        },
        "boot code for real hardware (bare toolchain)",
    ),
    "toolchain": Attr(
        {"enum": list(TOOLCHAINS)}, "how the ROM is built", default="auto",
        workspace_default=True,
    ),
}


def _check_title(ctx: RuleContext, title: str) -> None:
    """At analysis, before any action runs (pack would find it only at the end)."""
    problem = title_problem(title)
    if problem is None:
        return
    given = "title" in ctx.attrs
    raise UserError(
        f"target {ctx.label}: {problem}" + ("" if given else " (the default: the target's name)"),
        where=ctx.where,
        hint=None if given else "set a shorter one with the attribute title")


def declare_rom(
    ctx: RuleContext,
    models: Sequence[ModelInfo],
    *,
    toolchain: str,
    title: str,
) -> dict[str, list[str]]:
    """Declare the pack action(s) for ``models`` in one image; returns outputs per toolchain
    (the target's own and, always, the host build used by ``run --platform host``)."""
    _check_title(ctx, title)
    if not models:
        raise UserError(f"target {ctx.label}: no models to pack", where=ctx.where)
    _check_symbols(ctx, models)
    built: dict[str, list[str]] = {}
    ipl3 = {"ipl3": ctx.source(ctx.attrs["ipl3"], attr="ipl3")} if "ipl3" in ctx.attrs else {}
    headers = [m.header for m in models]
    main_c = ctx.action(
        "program",
        inputs={"metas": [m.meta for m in models], "headers": headers},
        outputs={"source": "program/main.c"},
        config={"models": [str(m.label) for m in models]},
        progress=str(ctx.label),
    )["source"]
    memory = max(m.memory for m in models)
    for tc in sorted({toolchain, HOST}):
        library, platform = ctx.runtime(tc)
        main_o = ctx.compile(
            tc, main_c, f"program/{tc}/main.o",
            include_dirs=sorted({posixpath.dirname(h) for h in headers}), headers=headers,
            progress=f"{ctx.label} ({tc})",
        )
        linked, program = ctx.link(
            tc, [main_o, *platform, *(m.objects[tc] for m in models), library],
            f"{HOST}/{ctx.label.name}" if tc == HOST else f"program/{tc}/program.bin",
            memory=memory, progress=f"{ctx.label} ({tc})",
        )
        boot = (ipl3 or {"boot": ctx.boot_stub()}) if tc == "bare" else {}
        packed = ctx.action(
            "pack",
            key=tc,
            inputs={
                **boot,
                **({"program": program} if tc != HOST else {}),
                **({"linked": linked} if tc != HOST and linked != program else {}),
                "metas": [m.meta for m in models],
                "weights": [m.weights[endianness(tc)] for m in models],
            },
            outputs={"image": f"{HOST}/{ctx.label.name}.img"} if tc == HOST
            else {"rom": f"{ctx.label.name}.z64"},
            config={
                **toolchain_config(ctx, tc),
                "title": title,
                "memory": memory,
                "models": [{"label": str(m.label), "symbol": m.symbol} for m in models],
            },
            progress=f"{ctx.label} ({tc})",
        )
        built[tc] = sorted([*packed.values(), *([program] if tc == HOST else [])])
    ctx.add_group(None, built[toolchain])
    ctx.add_group(HOST, built[HOST])
    ctx.add_group(MODELS_GROUP, [m.meta for m in models])
    ctx.add_group(REFERENCE_GROUP, [path for m in models for path in m.ir])
    return built
