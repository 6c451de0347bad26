"""The per-platform packed outputs hold one asset area (as the pack stage writes them)."""

from __future__ import annotations

import struct

from dnn64build import TOOL_ROOT
from dnn64build.rom import Asset, build_asset_image, bundle_libdragon_assets, pack_rom
from dnn64build.rom.bundle import LIBDRAGON_ASSET_FILE

ASSETS = [Asset("weights", b"\x07" * 100), Asset("input0", b"\x01\x02")]


def read_asset(area: bytes, name: str) -> bytes:
    _, _, count, _ = struct.unpack_from(">4sIII", area, 0)
    for i in range(count):
        raw, offset, size = struct.unpack_from(">40sII", area, 16 + 48 * i)
        if raw.rstrip(b"\0").decode() == name:
            return area[offset : offset + size]
    raise KeyError(name)


def test_rom_host_and_libdragon_outputs_hold_the_same_asset_area(tmp_path):
    layout = build_asset_image(ASSETS)
    area = layout.data  # the host build's asset file
    rom = pack_rom(b"\0" * 32, area, ipl3=bytes(0xFC0))
    bundle_libdragon_assets(tmp_path / "dfs", ASSETS)
    assert rom[0x101000 : 0x101000 + len(area)] == area
    assert (tmp_path / "dfs" / LIBDRAGON_ASSET_FILE).read_bytes() == area
    for asset in ASSETS:
        assert read_asset(area, asset.name) == asset.data
        entry = layout.entry(asset.name)
        assert area[entry.offset : entry.offset + entry.size] == asset.data


def test_libdragon_layer_opens_the_bundled_file_name():
    source = TOOL_ROOT / "kernels/platform/libdragon/dnn64_platform_libdragon.c"
    assert f'dfs_rom_addr("{LIBDRAGON_ASSET_FILE}")' in source.read_text()
