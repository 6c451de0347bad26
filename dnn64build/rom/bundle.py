"""The libdragon build's asset directory: ``assets.bin`` for the SDK's mkdfs.

(A bare ROM is ``pack.pack_rom`` over the same asset image; a host build reads that image
through $DNN64_ASSETS.) The write is atomic and leaves an identical file untouched.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from dnn64build.atomic_write import write_if_changed
from dnn64build.rom.assets import Asset, AssetImage, build_asset_image

LIBDRAGON_ASSET_FILE = "assets.bin"  # the DragonFS path dnn64_platform_libdragon.c opens


def bundle_libdragon_assets(directory: Path, assets: Sequence[Asset]) -> AssetImage:
    """Write ``directory/assets.bin`` (the input directory of mkdfs)."""
    out = Path(directory) / LIBDRAGON_ASSET_FILE
    image = build_asset_image(assets, where=str(out))
    write_if_changed(out, image.data)
    return image
