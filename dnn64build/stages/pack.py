"""Pack stage: a linked program (main.c from stages/program.py, compiled and linked by
ninja commands) and its models' assets -> the image.

bare:      a bootable .z64 (header, boot stub, program, asset area).
libdragon: the SDK's own ROM tools, weights in DragonFS.
host:      the asset image the native program (linked by ninja) reads ($DNN64_ASSETS).

The assets are each model's weight blob and one zero-filled input per model
input; ``dnn64build run`` repacks the image with real inputs.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from dnn64build.build_outputs import load_json
from dnn64build.errors import UserError
from dnn64build.planner.fit import STACK_BYTES, check_linked_fit
from dnn64build.rom.assets import Asset, build_asset_image
from dnn64build.rom.header import RomHeader
from dnn64build.rom.pack import pack_rom, pad_boot_stub, read_ipl3
from dnn64build.stages.io import StageArgs
from dnn64build.toolchains import LibdragonToolchain
from dnn64build.toolchains.bare import KSEG0
from dnn64build.toolchains.base import run
from dnn64build.toolchains.elf import program_size


def main(args: StageArgs) -> None:
    config = args.config
    metas = [load_json(p) for p in args.inputs["metas"]]
    assets = model_assets(metas, [p.read_bytes() for p in args.inputs["weights"]])
    if config["toolchain"] != "host":  # the real program size, not the plan's estimate
        check_linked_fit(
            program_size(args.optional_input("linked") or args.input("program")),
            memory=config["memory"], arena_bytes=max(meta["arena_bytes"] for meta in metas),
            stack_bytes=STACK_BYTES, ram_start=KSEG0,
            label=" + ".join(model["label"] for model in config["models"]),
        )
    if config["toolchain"] == "bare":
        ipl3 = args.optional_input("ipl3")
        boot = (read_ipl3(ipl3) if ipl3 else
                pad_boot_stub(args.input("boot").read_bytes(), where=str(args.input("boot"))))
        args.write("rom", pack_rom(
            args.input("program").read_bytes(), build_asset_image(assets).data, ipl3=boot,
            header=RomHeader(title=config["title"]), where=config["models"][0]["label"],
        ))
    elif config["toolchain"] == "libdragon":
        out = args.outputs["rom"]
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=out.parent, prefix=".pack") as tmp:
            toolchain = LibdragonToolchain(title=config["title"])
            args.write("rom", _libdragon_rom(toolchain, args.input("program"), assets,
                                             Path(tmp)))
    else:
        args.write("image", build_asset_image(assets).data)


def model_assets(metas: list[dict[str, Any]], weights: list[bytes]) -> list[Asset]:
    """Each model's weight blob, and a zero-filled asset per input."""
    assets = []
    for meta, blob in zip(metas, weights, strict=True):
        assets.append(Asset(meta["weights_asset"], blob))
        assets += [Asset(entry["asset"], bytes(entry["bytes"])) for entry in meta["inputs"]]
    return assets


def _libdragon_rom(
    toolchain: LibdragonToolchain, elf: Path, assets: list[Asset], tmp: Path
) -> bytes:
    from dnn64build.rom.bundle import bundle_libdragon_assets

    asset_dir = tmp / "dfs"
    bundle_libdragon_assets(asset_dir, assets)
    dfs, rom = tmp / "assets.dfs", tmp / "program.z64"
    run(toolchain.dfs_argv(asset_dir, dfs))
    program = tmp / "program.elf"  # the ROM tools write beside the ELF: keep that in tmp
    shutil.copyfile(elf, program)
    for argv in toolchain.rom_argvs(program, dfs, rom):
        run(argv)
    if not rom.exists():
        raise UserError("libdragon's n64tool wrote no ROM", where=str(rom))
    return rom.read_bytes()
