"""Assemble a bootable .z64: header, IPL3, program slot, asset area, CRCs.

Layout (docs/rom-format.md): 0x0 header, 0x40 IPL3 (0xFC0 bytes), 0x1000 the
program image (<= 1 MiB, the slot the IPL3 copies to 0x80000400), 0x101000 the
asset image; zero padding to a multiple of 1 MiB; at most 64 MiB.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import ipl3checksum

from dnn64build.errors import UserError
from dnn64build.rom import layout
from dnn64build.rom.crc_tail import CIC_6102_IPL3_CRC, crc32_tail
from dnn64build.rom.header import RomHeader

# The IPL3s whose boot contract (load 1 MiB from 0x1000 to the header's boot
# address) the program slot assumes.
_SUPPORTED_CICS = (ipl3checksum.CICKind.CIC_6102_7101,)


def read_ipl3(path: Path) -> bytes:
    """Read and check a user-supplied IPL3: the 0xFC0 bytes of ROM 0x40..0x1000, or a
    0x1000-byte boot file (header + IPL3, as libdragon's ``ipl3_compat.z64``)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read IPL3 file: {exc.strerror}", where=str(path)) from exc
    if len(data) > layout.PROGRAM_OFFSET:
        raise UserError(
            f"IPL3 file is {len(data):#x} bytes: its boot code goes on past ROM 0x1000 "
            f"(as libdragon's ELF-loading ipl3_prod/ipl3_dev), where a bare ROM holds "
            f"its program",
            where=str(path),
            hint="use an IPL3 that loads a flat program from 0x1000, such as libdragon's "
            "boot/bin/ipl3_compat.z64",
        )
    if len(data) == layout.PROGRAM_OFFSET:
        data = data[layout.IPL3_OFFSET :]
    check_ipl3(data, where=str(path))
    return data


def check_ipl3(ipl3: bytes, where: str | None = None) -> ipl3checksum.CICKind:
    """Return the CIC kind the checksum must use for this IPL3.

    A known CIC-signed IPL3 other than 6102/7101 is refused (its boot contract
    differs); an unknown one (e.g. dnn64's own boot stub) gets 6102 CRCs, the
    seeds mupen64plus assumes for an unknown IPL3.
    """
    if len(ipl3) != layout.IPL3_SIZE:
        raise UserError(
            f"IPL3 must be exactly {layout.IPL3_SIZE:#x} bytes (ROM 0x40..0x1000), "
            f"got {len(ipl3):#x}",
            where=where,
            hint="pass the boot code only (or a 0x1000-byte header + IPL3 file), not a "
            "whole ROM",
        )
    kind = ipl3checksum.detectCICRaw(bytes(ipl3))
    if kind is not None and kind not in _SUPPORTED_CICS:
        raise UserError(
            f"IPL3 is signed for {kind.name}; only CIC-6102/7101 IPL3s are supported",
            where=where,
        )
    return ipl3checksum.CICKind.CIC_6102_7101


def reads_size_word(ipl3: bytes) -> bool:
    """Whether ``ipl3`` takes header word 0x10 as the number of bytes to load from ROM
    0x1000 (libdragon's ipl3_compat: 0 or too big means 1 MiB) instead of checking CRC1
    there.

    Nintendo's IPL3s check CRC1/CRC2 and are the ones ipl3checksum identifies; dnn64's
    boot stub checks nothing and shares CIC-6102's CRC-32 (pad_boot_stub), so both keep
    the CRCs. Any other IPL3 is a homebrew one that verifies no checksum.
    """
    known = ipl3checksum.detectCICRaw(bytes(ipl3)) is not None
    return not known and zlib.crc32(ipl3) != CIC_6102_IPL3_CRC


def pad_boot_stub(stub: bytes, where: str | None = None) -> bytes:
    """Zero-pad an assembled boot stub to the IPL3 slot size, its last 4 bytes chosen so
    that the slot's CRC-32 is CIC-6102's: cen64 refuses to boot an unknown IPL3 area."""
    room = layout.IPL3_SIZE - 4
    if len(stub) > room:
        raise UserError(f"boot stub is {len(stub)} bytes, over {room}", where=where)
    body = stub.ljust(room, b"\0")
    return body + crc32_tail(body, CIC_6102_IPL3_CRC)


def pack_rom(
    program: bytes,
    asset_image: bytes,
    *,
    ipl3: bytes,
    header: RomHeader | None = None,
    where: str | None = None,
) -> bytes:
    """Return the ROM bytes.

    program:     the raw program image (objcopy -O binary), loaded at 0x80000400.
    asset_image: an asset image (dnn64build.rom.assets.build_asset_image().data).
    ipl3:        exactly 0xFC0 bytes: the padded dnn64 boot stub or a CIC-6102 IPL3.

    Header words 0x10/0x14 hold the CIC-6102 CRCs, except for an IPL3 that reads the
    load size there (reads_size_word): then word 0x10 is the program image's size.
    """
    header = header or RomHeader()
    header.validate(where)
    kind = check_ipl3(ipl3, where)
    if len(program) > layout.PROGRAM_SLOT_SIZE:
        raise UserError(
            f"program image is {len(program)} bytes; the program slot holds "
            f"{layout.PROGRAM_SLOT_SIZE} (1 MiB)",
            where=where,
            hint="move constant data into assets",
        )
    end = layout.ASSET_AREA_OFFSET + len(asset_image)
    size = max(layout.align_up(end, layout.ROM_SIZE_ALIGN), layout.ROM_MIN_SIZE)
    if size > layout.ROM_MAX_SIZE:
        raise UserError(
            f"ROM would be {size / 2**20:.1f} MiB; a cartridge holds at most 64 MiB",
            where=where,
            hint="shrink the model (e.g. quantize to int8) or its inputs",
        )
    rom = bytearray(size)
    rom[layout.IPL3_OFFSET : layout.PROGRAM_OFFSET] = ipl3
    rom[layout.PROGRAM_OFFSET : layout.PROGRAM_OFFSET + len(program)] = program
    rom[layout.ASSET_AREA_OFFSET : end] = asset_image
    rom[: layout.HEADER_SIZE] = header.encode()
    checksum = ipl3checksum.calculateChecksum(bytes(rom), kind)
    if checksum is None:
        raise AssertionError("bug: ipl3checksum refused a ROM of valid size")
    word_10, crc2 = checksum
    if reads_size_word(ipl3):
        # Whole 64-bit words: the load is one PI DMA into RDRAM.
        word_10 = layout.align_up(len(program), 8)
    rom[: layout.HEADER_SIZE] = header.encode(word_10, crc2)
    return bytes(rom)
