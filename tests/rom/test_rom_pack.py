"""ROM packing checked by an independent parser (struct + ipl3checksum)."""

from __future__ import annotations

import re
import struct

import ipl3checksum
import numpy as np
import pytest

from dnn64build import TOOL_ROOT
from dnn64build.errors import UserError
from dnn64build.rom import Asset, RomHeader, build_asset_image, pack_rom, pad_boot_stub
from dnn64build.rom import pack as pack_module

STUB = pad_boot_stub(bytes(range(96)))  # stands in for the assembled boot stub
PROGRAM = bytes((i * 37) & 0xFF for i in range(5000))


def parse_asset_table(area: bytes) -> dict[str, bytes]:
    """Independent reader of the documented asset table (docs/rom-format.md)."""
    magic, version, count, size = struct.unpack_from(">4sIII", area, 0)
    assert (magic, version) == (b"DN64", 1)
    assert size % 16 == 0 and size <= len(area)
    out = {}
    for i in range(count):
        raw, offset, length = struct.unpack_from(">40sII", area, 16 + 48 * i)
        name = raw.rstrip(b"\0").decode("ascii")
        assert b"\0" not in raw.rstrip(b"\0") and raw.endswith(b"\0")
        assert offset % 16 == 0 and offset >= 16 + 48 * count and offset + length <= size
        out[name] = area[offset : offset + length]
    return out


def test_header_fields_and_crcs_parse_independently():
    assets = [Asset("weights", bytes(range(256)) * 40), Asset("input0", b"\x01\x02\x03")]
    image = build_asset_image(assets).data
    header = RomHeader(title="MNIST DIGITS", game_id="ND", region="P", version=3)
    rom = pack_rom(PROGRAM, image, ipl3=STUB, header=header)

    pi, clock, boot, libultra, crc1, crc2 = struct.unpack_from(">IIIIII", rom, 0)
    assert (pi, clock, boot, libultra) == (0x80371240, 0x0F, 0x80000400, 0)
    assert rom[0x20:0x34] == b"MNIST DIGITS        "
    assert rom[0x3B:0x3C] == b"N" and rom[0x3C:0x3E] == b"ND"
    assert rom[0x3E:0x3F] == b"P" and rom[0x3F] == 3
    assert rom[0x40:0x1000] == STUB
    assert rom[0x1000 : 0x1000 + len(PROGRAM)] == PROGRAM
    assert (crc1, crc2) == ipl3checksum.calculateChecksum(rom, ipl3checksum.CICKind.CIC_6102_7101)
    assert len(rom) % 0x100000 == 0 and len(rom) >= 0x101000
    tables = parse_asset_table(rom[0x101000:])
    assert tables == {a.name: a.data for a in assets}


def test_c_header_agrees_with_python_layout():
    text = (TOOL_ROOT / "kernels/platform/dnn64_platform.h").read_text()
    offset = int(re.search(r"#define DNN64_ASSET_CART_OFFSET (0x[0-9A-Fa-f]+)u", text)[1], 16)
    align = int(re.search(r"#define DNN64_ASSET_ALIGN (\d+)u", text)[1])
    name_max = int(re.search(r"#define DNN64_ASSET_NAME_MAX (\d+)u", text)[1])
    assert offset == pack_module.layout.ASSET_AREA_OFFSET == 0x101000
    assert align == pack_module.layout.ASSET_ALIGN
    assert name_max + 1 == pack_module.layout.ASSET_NAME_SIZE


def test_asset_image_alignment_and_padding():
    rng = np.random.default_rng(3)
    assets = [Asset(f"a{i}", rng.bytes(int(n))) for i, n in enumerate([1, 17, 0, 4096, 333])]
    image = build_asset_image(assets, align=64)
    parsed = parse_asset_table(image.data)
    assert parsed == {a.name: a.data for a in assets}
    assert all(e.offset % 64 == 0 for e in image.entries)
    assert len(image.data) % 64 == 0


def test_rom_size_rounds_up_to_whole_mebibytes():
    small = pack_rom(PROGRAM, build_asset_image([]).data, ipl3=STUB)
    assert len(small) == 0x200000
    exact = pack_rom(PROGRAM, bytes(0x100000 - 0x1000), ipl3=STUB)
    assert len(exact) == 0x200000


@pytest.mark.parametrize(
    ("assets", "message"),
    [
        ([Asset("w", b"1"), Asset("w", b"2")], "duplicate asset names: w"),
        ([Asset("x" * 40, b"1")], "must have 1..39 characters"),
        ([Asset("", b"1")], "must have 1..39 characters"),
        ([Asset("has space", b"1")], "printable ASCII without spaces"),
    ],
)
def test_bad_asset_names(assets, message):
    with pytest.raises(UserError, match=message):
        build_asset_image(assets)


def test_64_mib_limit():
    too_big = bytes(64 * 1024 * 1024 - 0x101000 + 1)
    with pytest.raises(UserError, match="at most 64 MiB"):
        pack_rom(PROGRAM, too_big, ipl3=STUB)
    fits = pack_rom(b"", bytes(64 * 1024 * 1024 - 0x101000), ipl3=STUB)
    assert len(fits) == 64 * 1024 * 1024


def test_program_over_one_mib_is_refused():
    with pytest.raises(UserError, match="program slot holds 1048576"):
        pack_rom(bytes(0x100001), b"", ipl3=STUB)


def test_ipl3_must_be_exactly_0xfc0_bytes(tmp_path):
    bad = tmp_path / "ipl3.bin"
    bad.write_bytes(bytes(0xF00))
    with pytest.raises(UserError, match="exactly 0xfc0 bytes") as err:
        pack_module.read_ipl3(bad)
    assert str(bad) in str(err.value)
    with pytest.raises(UserError, match="cannot read IPL3"):
        pack_module.read_ipl3(tmp_path / "missing.bin")


# A homebrew signed IPL3 stands in: neither a Nintendo IPL3 ipl3checksum knows nor one
# with CIC-6102's CRC-32 (libdragon's ipl3_compat.z64 is neither).
HOMEBREW_IPL3 = bytes((i * 7 + 1) & 0xFF for i in range(0xFC0))


def test_boot_file_with_header_gives_its_ipl3(tmp_path):
    boot = tmp_path / "ipl3_compat.z64"
    boot.write_bytes(bytes(0x40) + HOMEBREW_IPL3)  # 0x1000 bytes: header + IPL3
    assert pack_module.read_ipl3(boot) == HOMEBREW_IPL3


def test_ipl3_running_on_past_0x1000_is_refused(tmp_path):
    prod = tmp_path / "ipl3_prod.z64"
    prod.write_bytes(bytes(0x40) + HOMEBREW_IPL3 + bytes(0x8C8))  # 6344 bytes, as r8's
    with pytest.raises(UserError, match="past ROM 0x1000") as err:
        pack_module.read_ipl3(prod)
    assert "ipl3_compat" in str(err.value)


def test_homebrew_ipl3_gets_the_load_size_in_header_word_0x10():
    program = bytes(5001)  # the IPL3 loads whole 8-byte words: 5008 bytes
    rom = pack_rom(program, b"", ipl3=HOMEBREW_IPL3)
    size, crc2 = struct.unpack_from(">II", rom, 0x10)
    assert size == 5008
    assert crc2 == ipl3checksum.calculateChecksum(rom, ipl3checksum.CICKind.CIC_6102_7101)[1]
    assert rom[0x40:0x1000] == HOMEBREW_IPL3
    assert struct.unpack_from(">I", rom, 0x8)[0] == 0x80000400  # where it loads to


def test_nintendo_ipl3_keeps_the_crcs(monkeypatch):
    monkeypatch.setattr(
        pack_module.ipl3checksum, "detectCICRaw", lambda _raw: ipl3checksum.CICKind.CIC_6102_7101
    )
    rom = pack_rom(PROGRAM, b"", ipl3=HOMEBREW_IPL3)
    crcs = struct.unpack_from(">II", rom, 0x10)
    assert crcs == ipl3checksum.calculateChecksum(rom, ipl3checksum.CICKind.CIC_6102_7101)


def test_ipl3_of_another_cic_is_refused(monkeypatch):
    monkeypatch.setattr(
        pack_module.ipl3checksum, "detectCICRaw", lambda _raw: ipl3checksum.CICKind.CIC_X105
    )
    with pytest.raises(UserError, match="only CIC-6102/7101"):
        pack_rom(PROGRAM, b"", ipl3=STUB)


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (RomHeader(title="x" * 21), "at most 20 printable ASCII"),
        (RomHeader(title="caf\u00e9"), "at most 20 printable ASCII"),
        (RomHeader(game_id="A"), "2 ASCII letters or digits"),
        (RomHeader(region="EU"), "one ASCII letter"),
        (RomHeader(version=256), "0..255"),
    ],
)
def test_bad_header_fields(header, message):
    with pytest.raises(UserError, match=message):
        pack_rom(PROGRAM, b"", ipl3=STUB, header=header)
