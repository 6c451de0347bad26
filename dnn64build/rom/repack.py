"""Read packed images back, and repack them with other assets (``dnn64build run`` puts the
user's inputs into a built ROM or host image this way, without relinking)."""

from __future__ import annotations

import struct
from collections.abc import Mapping

from dnn64build.errors import UserError
from dnn64build.rom import layout
from dnn64build.rom.assets import Asset, build_asset_image
from dnn64build.rom.header import RomHeader
from dnn64build.rom.pack import pack_rom


def read_asset_image(data: bytes, where: str | None = None) -> list[Asset]:
    """The assets of an asset image, in table order."""
    magic, version, count, _size = struct.unpack_from(">4sIII", data, 0)
    if magic != layout.ASSET_MAGIC or version != layout.ASSET_TABLE_VERSION:
        raise UserError("not a dnn64 asset image (bad magic or version)", where=where)
    assets = []
    for i in range(count):
        raw_name, offset, size = struct.unpack_from(
            f">{layout.ASSET_NAME_SIZE}sII", data,
            layout.ASSET_HEADER_SIZE + i * layout.ASSET_ENTRY_SIZE,
        )
        assets.append(Asset(raw_name.rstrip(b"\0").decode("ascii"), data[offset : offset + size]))
    return assets


def replace_assets(assets: list[Asset], new: Mapping[str, bytes]) -> list[Asset]:
    """``assets`` with the data of the names in ``new`` replaced (all must exist)."""
    missing = set(new) - {a.name for a in assets}
    if missing:
        raise UserError(f"no asset named {', '.join(sorted(missing))} in the image")
    return [Asset(a.name, new.get(a.name, a.data)) for a in assets]


def repack_image(image: bytes, new: Mapping[str, bytes]) -> bytes:
    """A host asset image with some assets' data replaced."""
    return build_asset_image(replace_assets(read_asset_image(image), new)).data


def repack_rom(rom: bytes, new: Mapping[str, bytes]) -> bytes:
    """A .z64 with some assets' data replaced: same header fields, boot code and program,
    CRCs recomputed."""
    assets = read_asset_image(rom[layout.ASSET_AREA_OFFSET :], where="ROM asset area")
    return pack_rom(
        rom[layout.PROGRAM_OFFSET : layout.ASSET_AREA_OFFSET],
        build_asset_image(replace_assets(assets, new)).data,
        ipl3=rom[layout.IPL3_OFFSET : layout.PROGRAM_OFFSET],
        header=RomHeader.decode(rom),
    )
