"""`run` puts the user's inputs into a built ROM without relinking (dnn64build/rom/repack.py):
a bare ROM is packed again; a libdragon ROM, whose asset image is the DragonFS file
assets.bin somewhere after its program, gets that image rewritten in place."""

from __future__ import annotations

import numpy as np
import pytest

from dnn64build.errors import UserError
from dnn64build.rom import build_asset_image, pack_rom
from dnn64build.rom.assets import Asset
from dnn64build.rom.repack import read_asset_image, repack_rom
from tests.rom.dragonfs import build_dragonfs

ASSETS = [Asset("weights", bytes(range(200))), Asset("input0", bytes(48))]
NEW_INPUT = bytes(range(100, 148))


def _libdragon_like_rom(image: bytes) -> bytes:
    """A 0x1000-byte header/IPL3, a program, and a DragonFS image holding ``image`` as
    assets.bin beside another file, as n64tool lays them out (the DFS 16-byte aligned)."""
    rng = np.random.default_rng(3)
    program = rng.integers(0, 256, 0x2345, dtype=np.uint8).tobytes()
    dfs = build_dragonfs({"assets.bin": image, "level1.dat": bytes(range(256)) * 3})
    head = bytes(0x1000) + program
    return head + bytes(-len(head) % 16) + dfs + bytes(64)


def test_a_libdragon_rom_gets_its_asset_image_rewritten_in_place() -> None:
    image = build_asset_image(ASSETS).data
    rom = _libdragon_like_rom(image)
    start = rom.index(image)

    out = repack_rom(rom, {"input0": NEW_INPUT})

    want = build_asset_image([ASSETS[0], Asset("input0", NEW_INPUT)]).data
    assert len(out) == len(rom)
    assert out[:start] == rom[:start]
    assert out[start : start + len(want)] == want
    assert out[start + len(want) :] == rom[start + len(image) :]


def test_a_bare_rom_is_packed_again_with_the_new_inputs() -> None:
    program = bytes(range(256)) * 4
    ipl3 = bytes(range(256)) * 15 + bytes(range(192))  # 0xFC0 bytes of an unknown IPL3
    rom = pack_rom(program, build_asset_image(ASSETS).data, ipl3=ipl3)

    out = repack_rom(rom, {"input0": NEW_INPUT})

    assert out == pack_rom(program, build_asset_image(
        [ASSETS[0], Asset("input0", NEW_INPUT)]).data, ipl3=ipl3)
    assert read_asset_image(out[0x101000:])[1].data == NEW_INPUT


@pytest.mark.parametrize("copies", [0, 2])
def test_a_rom_without_exactly_one_asset_table_is_refused(copies: int) -> None:
    image = build_asset_image(ASSETS).data
    rom = _libdragon_like_rom(image * copies if copies else b"no table here")
    with pytest.raises(UserError, match=f"the ROM holds {copies} dnn64 asset tables, not one"):
        repack_rom(rom, {"input0": NEW_INPUT})
