"""The bare toolchain's output: an ELF linked at 0x80000400 whose code uses
only VR4300 (MIPS III) instructions; the boot stub fits the IPL3 slot."""

from __future__ import annotations

import re
import struct
import subprocess
from pathlib import Path

import pytest

from dnn64build.errors import UserError
from dnn64build.toolchains import BareToolchain
from tests.tool_required import missing_tool

PROBE = Path(__file__).parents[1] / "emulator" / "programs" / "asset_probe.c"
# MIPS32/MIPS IV+ mnemonics the VR4300 lacks (reserved-instruction exceptions).
NOT_ON_VR4300 = {
    "mul", "clz", "clo", "movn", "movz", "madd", "maddu", "msub", "msubu", "ext", "ins",
    "seb", "seh", "wsbh", "rotr", "rotrv", "pref", "movf", "movt", "madd.s", "msub.s",
    "lwxc1", "swxc1", "ldxc1", "sdxc1", "di", "ei", "rdhwr", "sync",
}  # fmt: skip


@pytest.fixture(scope="module")
def bare() -> BareToolchain:
    try:
        return BareToolchain()
    except UserError as exc:
        missing_tool(exc)


@pytest.fixture(scope="module")
def built(bare: BareToolchain, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bare") / "probe.bin"
    return bare.compile_and_link([PROBE], [], out)


def test_elf_header_entry_and_image(built: Path):
    elf = built.with_suffix(".elf").read_bytes()
    assert elf[:4] == b"\x7fELF" and elf[4] == 1 and elf[5] == 2  # ELF32, big-endian
    machine, _version, entry = struct.unpack_from(">HII", elf, 18)
    assert machine == 8 and entry == 0x80000400  # EM_MIPS
    image = built.read_bytes()
    assert 0 < len(image) <= 0x100000 and len(image) % 16 == 0


def test_code_has_only_vr4300_instructions(bare: BareToolchain, built: Path):
    listing = subprocess.run(
        [bare.objdump, "-d", str(built.with_suffix(".elf"))],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    mnemonics = set(re.findall(r"^\s*[0-9a-f]+:\s+[0-9a-f]{8}\s+(\S+)", listing, re.MULTILINE))
    assert {"jal", "lw", "sw"} <= mnemonics
    assert not mnemonics & NOT_ON_VR4300


def test_no_undefined_or_libgcc_symbols(bare: BareToolchain, built: Path):
    elf = built.with_suffix(".elf")
    symbols = subprocess.run(
        [bare.objdump, "-t", str(elf)], capture_output=True, text=True, check=True
    ).stdout
    assert "*UND*" not in symbols.replace("00000000         *UND*\t00000000 \n", "")
    assert " __udivdi3" in symbols  # ours, from dnn64_libgcc.c


def test_boot_stub_fits_and_is_position_independent(bare: BareToolchain, tmp_path: Path):
    stub = bare.build_boot_stub(tmp_path / "boot.bin")
    assert len(stub) == 0xFC0
    words = struct.unpack(">24I", stub[:96])
    opcodes = {w >> 26 for w in words}
    assert 2 not in opcodes and 3 not in opcodes  # no absolute j / jal
    assert words[0] == 0x3C08A460  # lui t0, 0xA460: the PI registers


def test_compile_error_is_a_user_error(bare: BareToolchain, tmp_path: Path):
    bad = tmp_path / "bad.c"
    bad.write_text("int main(void) { return undefined_thing; }\n")
    with pytest.raises(UserError, match="undefined_thing"):
        bare.compile_and_link([bad], [], tmp_path / "bad.bin")


def test_ram_end_moves_the_stack(tmp_path: Path):
    try:
        big = BareToolchain(ram_end=0x80800000)
    except UserError as exc:
        missing_tool(exc)
    assert "-Wl,--defsym=__dnn64_ram_end=0x80800000" in big.link_argv([], tmp_path / "p.bin")
