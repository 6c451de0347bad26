"""ROM packing: cartridge header, asset table, .z64 assembly, libdragon asset directory."""

from dnn64build.rom.assets import Asset, AssetEntry, AssetImage, build_asset_image
from dnn64build.rom.bundle import bundle_libdragon_assets
from dnn64build.rom.header import RomHeader
from dnn64build.rom.pack import check_ipl3, pack_rom, pad_boot_stub, read_ipl3

__all__ = [
    "Asset",
    "AssetEntry",
    "AssetImage",
    "RomHeader",
    "build_asset_image",
    "bundle_libdragon_assets",
    "check_ipl3",
    "pack_rom",
    "pad_boot_stub",
    "read_ipl3",
]
