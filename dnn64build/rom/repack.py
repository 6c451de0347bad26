"""Read packed images back, and repack them with other assets (``dnn64build run`` puts the
user's inputs into a built ROM or host image this way, without relinking)."""

from __future__ import annotations

import re
import struct
from collections.abc import Mapping

from dnn64build.errors import UserError
from dnn64build.rom import layout
from dnn64build.rom.assets import Asset, build_asset_image
from dnn64build.rom.header import RomHeader
from dnn64build.rom.pack import pack_rom, reads_size_word


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
    """A .z64 with some assets' data replaced, without relinking.

    A bare ROM (its asset image at ASSET_AREA_OFFSET) is packed again: same header fields,
    boot code and program, CRCs recomputed. Any other ROM (libdragon's n64tool output,
    where the image is the DragonFS file assets.bin) gets its one asset image rewritten in
    place: the new image has the same layout, and libdragon's IPL3 checks no CRC."""
    if rom[layout.ASSET_AREA_OFFSET : layout.ASSET_AREA_OFFSET + 8] == _TABLE_KEY:
        assets = read_asset_image(rom[layout.ASSET_AREA_OFFSET :], where="ROM asset area")
        ipl3 = rom[layout.IPL3_OFFSET : layout.PROGRAM_OFFSET]
        # The program's own size where the IPL3 loads that much (header word 0x10), so
        # that the repacked ROM loads no more than the built one; else the whole slot.
        program_end = layout.ASSET_AREA_OFFSET
        if reads_size_word(ipl3):
            (size,) = struct.unpack_from(">I", rom, 0x10)
            program_end = min(layout.PROGRAM_OFFSET + size, program_end)
        return pack_rom(
            rom[layout.PROGRAM_OFFSET : program_end],
            build_asset_image(replace_assets(assets, new)).data,
            ipl3=ipl3,
            header=RomHeader.decode(rom),
        )
    start, size = _embedded_image(rom)
    image = repack_image(rom[start : start + size], new)
    if len(image) != size:  # cannot happen while inputs keep their sizes
        raise UserError(f"the repacked asset image has {len(image)} bytes, not {size}")
    return rom[:start] + image + rom[start + size :]


# An asset image starts with its magic and version, then u32 count and u32 image size.
_TABLE_KEY = struct.pack(">4sI", layout.ASSET_MAGIC, layout.ASSET_TABLE_VERSION)


def _embedded_image(rom: bytes) -> tuple[int, int]:
    """Offset and size of the one asset image inside ``rom`` (anywhere, 2-byte aligned as
    PI DMA reads it)."""
    found = []
    for match in re.finditer(re.escape(_TABLE_KEY), rom):
        start = match.start()
        if start % 2 or start + layout.ASSET_HEADER_SIZE > len(rom):
            continue
        count, size = struct.unpack_from(">II", rom, start + 8)
        if layout.ASSET_HEADER_SIZE + count * layout.ASSET_ENTRY_SIZE <= size <= len(rom) - start:
            found.append((start, size))
    if len(found) != 1:
        raise UserError(f"the ROM holds {len(found)} dnn64 asset tables, not one",
                        where="ROM", hint="run takes a ROM built by dnn64build")
    return found[0]
