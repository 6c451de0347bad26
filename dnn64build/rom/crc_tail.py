"""Choose the last 4 bytes of a block so that its CRC-32 takes a given value.

cen64 identifies the CIC by the CRC-32 (zlib's: reflected, polynomial 0xEDB88320)
of ROM 0x40..0x1000 and refuses an unknown value (N64-NOTES.md, "cen64"). The
default boot stub is short, so its last word is free: solving it for CIC-6102's
value lets cen64 boot dnn64's own ROMs.

CRC-32 over 4 appended bytes is invertible: after the prefix the register holds
``r``; the 4 bytes, read little-endian as ``w``, are XORed into it and then 32
shift/XOR steps run. Undo the 32 steps from the wanted final register and XOR
with ``r`` to get ``w``.
"""

from __future__ import annotations

import struct
import zlib

POLY = 0xEDB88320  # reflected CRC-32 polynomial
CIC_6102_IPL3_CRC = 0x90BB6CB5  # zlib.crc32 of ROM 0x40..0x1000 that cen64 takes for CIC-6102


def _unshift(register: int) -> int:
    """The register before 32 forward steps (each: ``r >> 1``, XOR POLY if bit 0 was set)."""
    for _ in range(32):
        # POLY has bit 31 set and r >> 1 never does: bit 31 tells whether POLY was XORed.
        if register & 0x80000000:
            register = (((register ^ POLY) << 1) | 1) & 0xFFFFFFFF
        else:
            register = (register << 1) & 0xFFFFFFFF
    return register


def crc32_tail(prefix: bytes, target: int) -> bytes:
    """The 4 bytes that make ``zlib.crc32(prefix + tail) == target``."""
    register = zlib.crc32(prefix) ^ 0xFFFFFFFF  # zlib inverts the register on output
    word = _unshift(target ^ 0xFFFFFFFF) ^ register
    return struct.pack("<I", word)
