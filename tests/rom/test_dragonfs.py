"""DragonFS images checked against the documented 2.0 layout (N64-NOTES.md)
by an independent walker."""

from __future__ import annotations

import struct

import pytest

from dnn64build.errors import UserError
from tests.rom.dragonfs import build_dragonfs

SECTOR = 256


def read_entry(image: bytes, offset: int) -> tuple[int, int, str, int]:
    assert offset % SECTOR == 0 and offset + SECTOR <= len(image)
    next_entry, flags = struct.unpack_from(">II", image, offset)
    path = image[offset + 8 : offset + 252].split(b"\0", 1)[0].decode()
    (data,) = struct.unpack_from(">I", image, offset + 252)
    return next_entry, flags, path, data


def walk(image: bytes, first: int, prefix: str = "") -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    names = []
    offset = first
    while offset:
        next_entry, flags, name, data = read_entry(image, offset)
        names.append(name)
        kind, size = flags >> 28, flags & 0x0FFFFFFF
        assert data % SECTOR == 0
        if kind == 0:
            files[prefix + name] = image[data : data + size]
        else:
            assert kind == 1 and size == 0
            files.update(walk(image, data, prefix + name + "/"))
        offset = next_entry
    assert names == sorted(names)
    return files


def test_image_matches_documented_layout():
    files = {
        "assets.bin": bytes(range(256)) * 3 + b"tail",
        "inputs/x0.bin": b"\x01" * 10,
        "inputs/deep/y.bin": b"abc",
        "a.txt": b"hello",
    }
    image = build_dragonfs(files)
    assert len(image) % SECTOR == 0
    next_entry, flags, path, _ = read_entry(image, 0)
    assert (next_entry, flags, path) == (0xDEADBEEF, 0xFFFFFFFF, "DragonFS 2.0")
    # The root directory's entries begin at sector 1.
    assert walk(image, SECTOR) == files


def test_deterministic():
    files = {"b": b"2", "a": b"1"}
    assert build_dragonfs(files) == build_dragonfs(dict(reversed(list(files.items()))))


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({}, "at least one file"),
        ({"empty": b""}, "empty file"),
        ({"a//b": b"1"}, "bad DragonFS path"),
        ({"x" * 244: b"1"}, "longer than 243"),
        ({"d": b"1", "d/e": b"2"}, "both a file and a directory"),
        ({"d/e": b"2", "d": b"1"}, "both a file and a directory"),
    ],
)
def test_bad_inputs(files, message):
    with pytest.raises(UserError, match=message):
        build_dragonfs(files)
