"""Write the packed outputs for each platform from a program and its assets.

bare:      one .z64 (header, IPL3, program slot, asset area).
host:      the asset image file the host program reads via $DNN64_ASSETS.
libdragon: a directory holding ``assets.bin`` for the toolchain's mkdfs.
All writes are atomic and leave identical files untouched.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from dnn64build.atomic_write import write_if_changed
from dnn64build.rom.assets import Asset, AssetImage, build_asset_image
from dnn64build.rom.header import RomHeader
from dnn64build.rom.pack import pack_rom

LIBDRAGON_ASSET_FILE = "assets.bin"  # the DragonFS path dnn64_platform_libdragon.c opens


def bundle_rom(
    out: Path,
    program: bytes,
    assets: Sequence[Asset],
    *,
    ipl3: bytes,
    header: RomHeader | None = None,
) -> AssetImage:
    """Write a bootable .z64 to ``out``; return the asset layout used."""
    image = build_asset_image(assets, where=str(out))
    write_if_changed(out, pack_rom(program, image.data, ipl3=ipl3, header=header, where=str(out)))
    return image


def bundle_host_assets(out: Path, assets: Sequence[Asset]) -> AssetImage:
    """Write the asset image for a host build."""
    image = build_asset_image(assets, where=str(out))
    write_if_changed(out, image.data)
    return image


def bundle_libdragon_assets(directory: Path, assets: Sequence[Asset]) -> AssetImage:
    """Write ``directory/assets.bin`` (the input directory of mkdfs)."""
    out = Path(directory) / LIBDRAGON_ASSET_FILE
    image = build_asset_image(assets, where=str(out))
    write_if_changed(out, image.data)
    return image
