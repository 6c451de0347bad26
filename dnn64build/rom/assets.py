"""The asset image: a table of named blobs (weights, inputs) and the blobs.

Layout (all big-endian, offsets relative to the image start; docs/rom-format.md):
  header  16 bytes: magic "DN64", u32 version, u32 count, u32 image size
  entries count x 48 bytes: name (40 bytes, NUL padded), u32 offset, u32 size
  blobs   each at a multiple of ``align``; the image is padded to ``align``.
On the cartridge the image sits at ASSET_AREA_OFFSET; on the host it is a file.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

from dnn64build.errors import UserError
from dnn64build.rom import layout


@dataclass(frozen=True)
class Asset:
    """A named blob to pack. ``name``: 1..39 printable ASCII characters."""

    name: str
    data: bytes


@dataclass(frozen=True)
class AssetEntry:
    """Where a packed asset ended up, relative to the asset-area start."""

    name: str
    offset: int
    size: int


@dataclass(frozen=True)
class AssetImage:
    data: bytes
    entries: tuple[AssetEntry, ...]

    def entry(self, name: str) -> AssetEntry:
        for entry in self.entries:
            if entry.name == name:
                return entry
        raise KeyError(name)


def _check_name(name: str, where: str | None) -> bytes:
    if not name or len(name) >= layout.ASSET_NAME_SIZE:
        raise UserError(
            f"asset name {name!r} must have 1..{layout.ASSET_NAME_SIZE - 1} characters",
            where=where,
        )
    if not all(" " < ch <= "~" for ch in name):
        raise UserError(f"asset name {name!r} must be printable ASCII without spaces", where=where)
    return name.encode("ascii")


def build_asset_image(
    assets: Sequence[Asset], *, align: int = layout.ASSET_ALIGN, where: str | None = None
) -> AssetImage:
    """Lay out ``assets`` in the given order; ``align`` is a multiple of 16."""
    if align <= 0 or align % layout.ASSET_ALIGN:
        raise ValueError(f"align must be a positive multiple of {layout.ASSET_ALIGN}")
    names = [a.name for a in assets]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise UserError(f"duplicate asset names: {', '.join(duplicates)}", where=where)
    encoded = [_check_name(a.name, where) for a in assets]

    table_size = layout.ASSET_HEADER_SIZE + layout.ASSET_ENTRY_SIZE * len(assets)
    cursor = layout.align_up(table_size, align)
    entries = []
    for asset in assets:
        entries.append(AssetEntry(asset.name, cursor, len(asset.data)))
        cursor = layout.align_up(cursor + len(asset.data), align)
    total = cursor
    if total > 0xFFFFFFFF:
        raise UserError(f"asset image of {total} bytes does not fit a u32 offset", where=where)

    image = bytearray(total)
    struct.pack_into(
        ">4sIII", image, 0, layout.ASSET_MAGIC, layout.ASSET_TABLE_VERSION, len(assets), total
    )
    for i, (entry, raw_name, asset) in enumerate(zip(entries, encoded, assets, strict=True)):
        struct.pack_into(
            f">{layout.ASSET_NAME_SIZE}sII",
            image,
            layout.ASSET_HEADER_SIZE + i * layout.ASSET_ENTRY_SIZE,
            raw_name,
            entry.offset,
            entry.size,
        )
        image[entry.offset : entry.offset + entry.size] = asset.data
    return AssetImage(bytes(image), tuple(entries))
