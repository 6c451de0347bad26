"""Build and run a probe ROM over a "cases" asset: the probe program compiled with every
kernel, its cases blob as the one asset, run in mupen64plus."""

from __future__ import annotations

from pathlib import Path

from dnn64build.emulator import run_rom
from dnn64build.rom import Asset, build_asset_image, pack_rom
from dnn64build.toolchains import BareToolchain
from dnn64build.toolchains.base import KERNELS_DIR, Defines
from tests.compile_program import compile_and_link


def run_cases_rom(bare: BareToolchain, boot_stub: bytes, probe: Path, blob: bytes, rom: Path,
                  defines: Defines | None = None) -> list[str]:
    """Compile `probe` with the kernels for `bare`, pack it with `blob` as the "cases"
    asset into `rom` and return the lines the ROM prints."""
    program = compile_and_link(bare, [probe, *sorted(KERNELS_DIR.glob("*.c"))], [KERNELS_DIR],
                               rom.with_suffix(".bin"), defines)
    image = build_asset_image([Asset("cases", blob)]).data
    rom.write_bytes(pack_rom(program.read_bytes(), image, ipl3=boot_stub))
    return run_rom(rom, timeout=60).lines
