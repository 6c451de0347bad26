"""The ROM packing the built-in rules share: ``n64_model`` packs a ROM holding its one
model, ``n64_rom`` several models in one; both declare the same actions through
``declare_rom``, and offer the result to ``run`` and ``test``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from dnn64build.errors import UserError
from dnn64build.rom.header import TITLE_SIZE, title_problem
from dnn64build.rules_api import Attr, RuleContext, RunModel, file_attr

from ._model import HOST, TOOLCHAIN_ATTR, ModelInfo, check_symbols, endianness, toolchain_config

# The attributes of every rule that packs a ROM (n64_model, n64_rom).
ROM_ATTRS = {
    "title": Attr({"type": "string", "maxLength": TITLE_SIZE},
                  f"ROM title ({TITLE_SIZE} printable ASCII characters at most; default: the "
                  f"target's name, cut to {TITLE_SIZE} characters)"),
    "ipl3": file_attr(
        "boot code for ares and real hardware (bare toolchain): a CIC-6102 signed IPL3, "
        "0xFC0 bytes or a 0x1000-byte header + IPL3 file such as libdragon's "
        "boot/bin/ipl3_compat.z64; without it the ROM boots with dnn64build's own stub, "
        "which only lenient emulators accept"),
    "toolchain": TOOLCHAIN_ATTR,
}


def rom_title(ctx: RuleContext) -> str:
    """The title given, checked at analysis, before any action runs (pack would find it
    only at the end); by default the target's name cut to fit (a name is printable ASCII)."""
    if "title" not in ctx.attrs:
        return ctx.label.name[:TITLE_SIZE]
    title = ctx.attrs["title"]
    if problem := title_problem(title):
        raise UserError(f"target {ctx.label}: {problem}", where=ctx.where_of("title"))
    return title


def declare_rom(
    ctx: RuleContext,
    models: Sequence[ModelInfo],
    *,
    toolchain: str,
) -> dict[str, list[str]]:
    """Declare the pack action(s) for ``models`` in one image; returns outputs per toolchain
    (the target's own and, always, the host build used by ``run --platform host``)."""
    title = rom_title(ctx) if toolchain != HOST else None  # a host program has no title
    if not models:
        raise UserError(f"target {ctx.label}: no models to pack", where=ctx.where)
    check_symbols(ctx, models)
    built: dict[str, list[str]] = {}
    ipl3 = {"ipl3": ctx.attrs["ipl3"]} if "ipl3" in ctx.attrs else {}
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
                **({"title": title} if tc != HOST else {}),
                "memory": memory,
                "models": [{"label": str(m.label), "symbol": m.symbol} for m in models],
            },
            progress=f"{ctx.label} ({tc})",
        )
        built[tc] = sorted([*packed.values(), *([program] if tc == HOST else [])])
    ctx.add_group(None, built[toolchain])
    ctx.offer_run(rom=built[toolchain] if toolchain != HOST else None, host=built[HOST],
                  models=[RunModel(m.label, m.meta, m.ir) for m in models])
    return built
