"""The `bare` toolchain: Debian's mips-linux-gnu-gcc, no N64 SDK.

Produces a raw program image (objcopy -O binary) for the ROM's program slot,
and assembles the default IPL3-slot boot stub. Flags: N64-NOTES.md.
Debian's libgcc is MIPS32r2 code (uses `mul`, `clz`) that the VR4300 cannot
run, so it is not linked; kernels/platform/bare/dnn64_libgcc.c replaces it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from dnn64build.rom.pack import pad_boot_stub
from dnn64build.toolchains.base import (
    COMMON_SOURCES,
    PLATFORM_DIR,
    Toolchain,
    run,
)
from dnn64build.toolchains.tools import find_tool

BARE_DIR = PLATFORM_DIR / "bare"
LINKER_SCRIPT = BARE_DIR / "n64.ld"
BOOT_STUB_SOURCE = BARE_DIR / "boot.S"

ARCH_FLAGS = ("-march=vr4300", "-mabi=32", "-mfp32", "-mhard-float", "-EB")
CFLAGS = (
    *ARCH_FLAGS,
    "-mfix4300",
    "-mno-abicalls",
    "-fno-pic",
    "-ffreestanding",
    "-G0",
    "-O2",
    "-std=c99",
    "-Wall",
    "-Wextra",
    "-Werror",
    # Keep gcc from turning memcpy/memset loops into calls to themselves.
    "-fno-tree-loop-distribute-patterns",
    # Bit-exact floats with the host build (which also sets this).
    "-ffp-contract=off",
)
LDFLAGS = (*ARCH_FLAGS, "-nostdlib", "-static", "-no-pie", "-Wl,--build-id=none")
IMAGE_SECTIONS = ("-j", ".text", "-j", ".rodata", "-j", ".data")


KSEG0 = 0x80000000  # the cached window of RDRAM where programs run

class BareToolchain(Toolchain):
    name = "bare"
    tools = "mips-linux-gnu-gcc"  # its third_party descriptor

    def __init__(self, env: Mapping[str, str] | None = None, ram_end: int = 0x80400000):
        """``ram_end``: KSEG0 end of usable RDRAM (0x80800000 with the Expansion Pak)."""
        tool = find_tool(self.tools, env=env)
        self.cc = tool["gcc"]
        self.cflags = CFLAGS
        self.objcopy = tool["objcopy"]
        self.ar = tool["ar"]
        self.objdump = tool["objdump"]
        self.ram_end = ram_end

    def platform_sources(self) -> list[Path]:
        return [
            *COMMON_SOURCES,
            BARE_DIR / "crt0.S",
            BARE_DIR / "dnn64_platform_bare.c",
            BARE_DIR / "dnn64_libc.c",
            BARE_DIR / "dnn64_libgcc.c",
            BARE_DIR / "dnn64_rsp_bare.c",
            BARE_DIR / "dnn64_rsp_microcode.c",
        ]

    def linked_path(self, out: Path) -> Path:
        return Path(out).with_suffix(".elf")

    def link_argv(self, objects: Sequence[Path], out: Path) -> list[str]:
        return [
            self.cc, *LDFLAGS, f"-Wl,--defsym=__dnn64_ram_end={self.ram_end:#x}",
            "-T", str(LINKER_SCRIPT), "-o", str(self.linked_path(out)), *map(str, objects),
        ]  # fmt: skip

    def finish_argvs(self, out: Path) -> list[list[str]]:
        return [
            [self.objcopy, "-O", "binary", *IMAGE_SECTIONS, str(self.linked_path(out)), str(out)]
        ]

    def boot_stub_argvs(self, out: Path) -> list[list[str]]:
        """Assemble boot.S into ``out`` (raw, unpadded; pad with rom.pad_boot_stub)."""
        obj = Path(out).with_suffix(".o")
        return [
            [self.cc, *ARCH_FLAGS, "-mno-abicalls", "-fno-pic", "-c", str(BOOT_STUB_SOURCE),
             "-o", str(obj)],
            [self.objcopy, "-O", "binary", "-j", ".text", str(obj), str(out)],
        ]  # fmt: skip

    def build_boot_stub(self, out: Path) -> bytes:
        """Assemble the boot stub into ``out``; return it padded to the IPL3 size."""
        for argv in self.boot_stub_argvs(out):
            run(argv)
        return pad_boot_stub(Path(out).read_bytes(), where=str(BOOT_STUB_SOURCE))
