"""Fixed offsets and limits of a dnn64 cartridge ROM (docs/rom-format.md).

The C side mirrors DNN64_ASSET_CART_OFFSET and the asset-table constants in
kernels/platform/dnn64_platform.h; tests/rom checks the two agree.
"""

from __future__ import annotations

HEADER_SIZE = 0x40
IPL3_OFFSET = 0x40
IPL3_SIZE = 0xFC0
PROGRAM_OFFSET = 0x1000
# The IPL3 (ours or CIC-6102) copies exactly this much of the ROM to RDRAM.
PROGRAM_SLOT_SIZE = 0x100000
ASSET_AREA_OFFSET = PROGRAM_OFFSET + PROGRAM_SLOT_SIZE
BOOT_ADDRESS = 0x80000400
PI_CONFIG = 0x80371240
CLOCK_RATE = 0x0000000F

# The CIC-6102 checksum covers 0x1000..0x101000, so the ROM must reach that far.
ROM_MIN_SIZE = 0x101000
ROM_SIZE_ALIGN = 0x100000
ROM_MAX_SIZE = 64 * 1024 * 1024

ASSET_MAGIC = b"DN64"
ASSET_TABLE_VERSION = 1
ASSET_HEADER_SIZE = 16
ASSET_ENTRY_SIZE = 48
ASSET_NAME_SIZE = 40
ASSET_ALIGN = 16


def align_up(value: int, alignment: int) -> int:
    """Round ``value`` up to a multiple of ``alignment``."""
    return (value + alignment - 1) // alignment * alignment
