"""Pack stage: the program running a ROM's models (main.c, compiled and linked with the
models, the platform layer and the kernel library) and its image.

bare:      a bootable .z64 (header, boot stub, program, asset area).
libdragon: the SDK's own ROM tools, weights in DragonFS.
host:      a native program and the asset image it reads ($DNN64_ASSETS).

The assets are each model's weight blob and one zero-filled input per model
input; ``dnn64build run`` repacks the image with real inputs.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from dnn64build.build_outputs import load_json
from dnn64build.codegen.program import generate_main
from dnn64build.errors import UserError
from dnn64build.planner.fit import STACK_BYTES, check_linked_fit
from dnn64build.rom.assets import Asset, build_asset_image
from dnn64build.rom.header import RomHeader
from dnn64build.rom.pack import pack_rom, read_ipl3
from dnn64build.stages.io import StageArgs
from dnn64build.toolchains import BareToolchain, LibdragonToolchain, Toolchain, find_toolchain
from dnn64build.toolchains.base import KERNELS_DIR, run
from dnn64build.toolchains.elf import program_size

KSEG0 = 0x80000000


def main(args: StageArgs) -> None:
    config = args.config
    metas = [load_json(p) for p in args.inputs["metas"]]
    assets = model_assets(metas, [p.read_bytes() for p in args.inputs["weights"]])
    toolchain = _toolchain(config)
    first_output = next(iter(args.outputs.values()))
    first_output.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=first_output.parent, prefix=".pack") as tmp_dir:
        tmp = Path(tmp_dir)
        program = link_program(toolchain, metas, args.inputs, tmp)
        if isinstance(toolchain, (BareToolchain, LibdragonToolchain)):  # not the host
            check_linked_fit(
                program_size(toolchain.linked_path(program)), memory=config["memory"],
                arena_bytes=max(meta["arena_bytes"] for meta in metas),
                stack_bytes=STACK_BYTES, ram_start=KSEG0,
                label=" + ".join(model["label"] for model in config["models"]),
            )
        if isinstance(toolchain, BareToolchain):
            user_ipl3 = args.optional_input("ipl3")
            ipl3 = (read_ipl3(user_ipl3) if user_ipl3
                    else toolchain.build_boot_stub(tmp / "boot.bin"))
            args.write("rom", pack_rom(
                program.read_bytes(), build_asset_image(assets).data, ipl3=ipl3,
                header=RomHeader(title=config["title"]), where=config["models"][0]["label"],
            ))
        elif isinstance(toolchain, LibdragonToolchain):
            args.write("rom", _libdragon_rom(toolchain, program, assets, tmp))
        else:
            args.write("program", program.read_bytes())
            os.chmod(args.outputs["program"], 0o755)
            args.write("image", build_asset_image(assets).data)


def model_assets(metas: list[dict[str, Any]], weights: list[bytes]) -> list[Asset]:
    """Each model's weight blob, and a zero-filled asset per input."""
    assets = []
    for meta, blob in zip(metas, weights, strict=True):
        assets.append(Asset(meta["weights_asset"], blob))
        assets += [Asset(entry["asset"], bytes(entry["bytes"])) for entry in meta["inputs"]]
    return assets


def link_program(
    toolchain: Toolchain, metas: list[dict[str, Any]], inputs: dict[str, list[Path]], tmp: Path
) -> Path:
    """Generate main.c for ``metas`` and link it with the model objects, the platform layer
    and the kernel library; returns the program (raw image for bare)."""
    headers = [str(p.resolve()) for p in inputs["headers"]]
    main_c = tmp / "main.c"
    main_c.write_text(generate_main(
        [(m["symbol"], h, m["arena_bytes"], m) for m, h in zip(metas, headers, strict=True)]
    ))
    objects = []
    for k, source in enumerate([main_c, *toolchain.platform_sources()]):
        obj = tmp / f"{k:02d}_{source.stem}.o"
        run(toolchain.compile_argv(source, obj, include_dirs=[KERNELS_DIR]))
        objects.append(obj)
    program = tmp / "program.bin"
    run(toolchain.link_argv([*objects, *inputs["objects"], *inputs["runtime"]], program))
    for argv in toolchain.finish_argvs(program):
        run(argv)
    return program


def _toolchain(config: dict[str, Any]) -> Toolchain:
    if config["toolchain"] == "bare":
        return BareToolchain(ram_end=KSEG0 + config["memory"])
    if config["toolchain"] == "libdragon":
        return LibdragonToolchain(title=config["title"])
    return find_toolchain(config["toolchain"])


def _libdragon_rom(
    toolchain: LibdragonToolchain, program: Path, assets: list[Asset], tmp: Path
) -> bytes:
    from dnn64build.rom.bundle import bundle_libdragon_assets

    asset_dir = tmp / "dfs"
    bundle_libdragon_assets(asset_dir, assets)
    dfs, rom = tmp / "assets.dfs", tmp / "program.z64"
    run(toolchain.dfs_argv(asset_dir, dfs))
    for argv in toolchain.rom_argvs(toolchain.linked_path(program), dfs, rom):
        run(argv)
    if not rom.exists():
        raise UserError("libdragon's n64tool wrote no ROM", where=str(rom))
    return rom.read_bytes()
