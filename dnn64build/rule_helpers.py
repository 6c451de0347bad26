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
from dnn64build.rules_api import Attr, RuleContext
from dnn64build.workspace.labels import Label

HOST = "host"
MODELS_GROUP = "models"  # the codegen meta.json of each model a ROM runs, in run order
REFERENCE_GROUP = "reference"  # each model's quantised IR, graph.json then weights.npz
N64_TOOLCHAINS = ("bare", "libdragon")
TOOLCHAINS = ("auto", *N64_TOOLCHAINS, HOST)

MEMORY_SCHEMA = {
    "description": "target RDRAM: 4MiB (stock N64), 8MiB (Expansion Pak) or a byte count",
    "oneOf": [
        {"type": "string", "pattern": r"^[0-9]+ ?(B|KiB|MiB)$"},
        {"type": "integer", "minimum": 65536},
    ],
}
_UNITS = {"B": 1, "KiB": 1024, "MiB": 1024 * 1024}


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


def resolve_toolchain(ctx: RuleContext, name: str) -> str:
    """``auto`` picks libdragon where $N64_INST is set, else the SDK-free bare toolchain."""
    if name != "auto":
        return name
    return "libdragon" if ctx.env("N64_INST") else "bare"


def c_symbol(label: Label) -> str:
    return "m_" + re.sub(r"[^A-Za-z0-9]", "_", label.path)


def endianness(toolchain: str) -> str:
    return "little" if toolchain == HOST else "big"


# The attributes of every rule that packs a ROM (n64_model, n64_rom).
ROM_ATTRS = {
    "title": Attr({"type": "string", "maxLength": 20}, "ROM title (20 characters at most)"),
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


def declare_rom(
    ctx: RuleContext,
    models: Sequence[ModelInfo],
    *,
    toolchain: str,
    title: str,
) -> dict[str, list[str]]:
    """Declare the pack action(s) for ``models`` in one image; returns outputs per toolchain
    (the target's own and, always, the host build used by ``run --platform host``)."""
    if not models:
        raise UserError(f"target {ctx.label}: no models to pack", where=ctx.where)
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
    for tc in sorted({toolchain, HOST}):
        library, platform = ctx.runtime(tc)
        main_o = ctx.compile(
            tc, main_c, f"program/{tc}/main.o",
            include_dirs=sorted({posixpath.dirname(h) for h in headers}), headers=headers,
            progress=f"{ctx.label} ({tc})",
        )
        program = ctx.link(
            tc, [main_o, *platform, *(m.objects[tc] for m in models), library],
            f"{HOST}/{ctx.label.name}" if tc == HOST else f"program/{tc}/program.bin",
            memory=max(m.memory for m in models), progress=f"{ctx.label} ({tc})",
        )
        boot = (ipl3 or {"boot": ctx.boot_stub()}) if tc == "bare" else {}
        packed = ctx.action(
            "pack",
            key=tc,
            inputs={
                **boot,
                **({"program": program} if tc != HOST else {}),
                "metas": [m.meta for m in models],
                "weights": [m.weights[endianness(tc)] for m in models],
            },
            outputs={"image": f"{HOST}/{ctx.label.name}.img"} if tc == HOST
            else {"rom": f"{ctx.label.name}.z64"},
            config={
                "toolchain": tc,
                "title": title,
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
