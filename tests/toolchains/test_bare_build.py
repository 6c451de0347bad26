"""The bare toolchain's output: an ELF linked at 0x80000400 whose code uses
only VR4300 (MIPS III) instructions; the boot stub fits the IPL3 slot."""

from __future__ import annotations

import re
import struct
import subprocess
from pathlib import Path

import pytest

from dnn64build.errors import UserError
from dnn64build.planner.fit import STACK_BYTES, check_linked_fit
from dnn64build.toolchains import BareToolchain
from dnn64build.toolchains.elf import program_size
from tests.compile_program import compile_and_link

PROBE = Path(__file__).parents[1] / "emulator" / "programs" / "asset_probe.c"
# MIPS32/MIPS IV+ mnemonics the VR4300 lacks (reserved-instruction exceptions).
NOT_ON_VR4300 = {
    "mul", "clz", "clo", "movn", "movz", "madd", "maddu", "msub", "msubu", "ext", "ins",
    "seb", "seh", "wsbh", "rotr", "rotrv", "pref", "movf", "movt", "madd.s", "msub.s",
    "lwxc1", "swxc1", "ldxc1", "sdxc1", "di", "ei", "rdhwr", "sync",
}  # fmt: skip


@pytest.fixture(scope="module")
def built(bare: BareToolchain, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bare") / "probe.bin"
    return compile_and_link(bare, [PROBE], [], out)


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
        compile_and_link(bare, [bad], [], tmp_path / "bad.bin")


def test_ram_end_moves_the_stack(bare: BareToolchain, tmp_path: Path):
    big = BareToolchain(ram_end=0x80800000)
    assert "-Wl,--defsym=__dnn64_ram_end=0x80800000" in big.link_argv([], tmp_path / "p.bin")


def test_program_size_matches_binutils(bare: BareToolchain, built: Path):
    """The section sizes the post-link fit check reads, against objdump's section table."""
    elf = built.with_suffix(".elf")
    table = subprocess.run([bare.objdump, "-h", str(elf)], capture_output=True, text=True,
                           check=True).stdout
    rows = re.findall(r"^\s*\d+\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+\S+\s+\S+\s+\S+\n"
                      r"\s+(.*)$", table, re.MULTILINE)
    alloc = [(name, int(size, 16), int(vma, 16)) for name, size, vma, flags in rows
             if "ALLOC" in flags]
    size = program_size(elf)
    assert size.text == sum(s for name, s, _ in alloc if name.startswith(".text"))
    assert size.bss == sum(s for name, s, _ in alloc if name.startswith((".bss", ".sbss")))
    assert size.text + size.rodata + size.data + size.bss == sum(s for _, s, _ in alloc)
    assert size.start == 0x80000400 == min(vma for _, _, vma in alloc)
    assert size.end == max(vma + s for _, s, vma in alloc)


def test_linked_fit_check_names_the_real_figures(built: Path):
    """The post-link check: a program that fits exactly passes; one byte less of RDRAM
    gives one message naming the arena, the program's sections, the stack and the memory."""
    size = program_size(built.with_suffix(".elf"))
    exact = size.end - 0x80000000 + STACK_BYTES
    check_linked_fit(size, memory=exact, arena_bytes=0, stack_bytes=STACK_BYTES,
                     label="//p:probe", ram_start=0x80000000)
    with pytest.raises(UserError) as info:
        check_linked_fit(size, memory=exact - 1, arena_bytes=size.bss, stack_bytes=STACK_BYTES,
                         label="//p:probe", ram_start=0x80000000)
    message = info.value.message
    assert message.startswith("//p:probe does not fit in")
    for part in ("arena", ".text", ".rodata", ".data", "stack 64.0 KiB", "low memory 1.0 KiB"):
        assert part in message
