"""Write a DragonFS 2.0 image (libdragon's read-only ROM filesystem).

Layout as documented in N64-NOTES.md: 256-byte sectors, big-endian; each
directory entry fills one sector: {u32 next; u32 flags; char path[244];
u32 data}. Sector 0 is the root marker (flags 0xFFFFFFFF, next 0xDEADBEEF,
path "DragonFS 2.0"); the root directory's first entry is sector 1. ``next``
and ``data`` are byte offsets from the image start (0 = none); ``flags`` =
type << 28 | size (file 0, directory 1); a directory's ``data`` points at
its first entry; file data starts on a sector boundary. Entries are written in
sorted name order, so the image is deterministic.

Newer libdragon releases extend this format; for the libdragon toolchain the
build uses that toolchain's own ``mkdfs`` (dnn64build.toolchains.libdragon).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping

from dnn64build.errors import UserError

SECTOR_SIZE = 256
PATH_SIZE = 244
ROOT_FLAGS = 0xFFFFFFFF
ROOT_NEXT = 0xDEADBEEF
ROOT_PATH = b"DragonFS 2.0"
TYPE_FILE = 0
TYPE_DIR = 1
MAX_FILE_SIZE = 0x0FFFFFFF

_Tree = dict[str, "bytes | _Tree"]


def _build_tree(files: Mapping[str, bytes], where: str | None) -> _Tree:
    root: _Tree = {}
    for path, data in files.items():
        parts = path.split("/")
        if any(not p or p in (".", "..") for p in parts):
            raise UserError(f"bad DragonFS path {path!r}", where=where)
        for part in parts:
            if len(part.encode("utf-8")) > PATH_SIZE - 1:
                raise UserError(
                    f"DragonFS name {part!r} longer than {PATH_SIZE - 1} bytes", where=where
                )
        if not data:
            raise UserError(f"DragonFS cannot hold the empty file {path!r}", where=where)
        if len(data) > MAX_FILE_SIZE:
            raise UserError(f"DragonFS file {path!r} exceeds 256 MiB", where=where)
        node = root
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise UserError(f"{part!r} is both a file and a directory", where=where)
            node = child
        if parts[-1] in node:
            raise UserError(f"{path!r} is both a file and a directory", where=where)
        node[parts[-1]] = bytes(data)
    return root


def _entry(next_offset: int, flags: int, name: bytes, data_offset: int) -> bytes:
    return struct.pack(f">II{PATH_SIZE}sI", next_offset, flags, name, data_offset)


def build_dragonfs(files: Mapping[str, bytes], where: str | None = None) -> bytes:
    """Return a DragonFS image holding ``files`` ({"dir/name": bytes}, non-empty)."""
    if not files:
        raise UserError("a DragonFS image needs at least one file", where=where)
    tree = _build_tree(files, where)
    image = bytearray(_entry(ROOT_NEXT, ROOT_FLAGS, ROOT_PATH, 0))

    def allocate(size: int) -> int:
        offset = len(image)
        image.extend(bytes(-(-size // SECTOR_SIZE) * SECTOR_SIZE))
        return offset

    def add_directory(node: _Tree) -> int:
        """Write ``node``'s entries; return the offset of its first entry."""
        first = previous = 0
        for name in sorted(node):
            child = node[name]
            offset = allocate(SECTOR_SIZE)
            if isinstance(child, dict):
                data_offset = add_directory(child)
                flags = TYPE_DIR << 28
            else:
                data_offset = allocate(len(child))
                image[data_offset : data_offset + len(child)] = child
                flags = TYPE_FILE << 28 | len(child)
            image[offset : offset + SECTOR_SIZE] = _entry(
                0, flags, name.encode("utf-8"), data_offset
            )
            if previous:
                struct.pack_into(">I", image, previous, offset)
            first = first or offset
            previous = offset
        return first

    add_directory(tree)
    return bytes(image)
