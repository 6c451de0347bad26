"""Build and run a probe ROM over a "cases" asset: the probe program compiled with every
kernel, its cases blob as the one asset, run in mupen64plus."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from dnn64build.emulator import run_rom
from dnn64build.rom import Asset, build_asset_image, pack_rom
from dnn64build.toolchains import BareToolchain
from dnn64build.toolchains.base import KERNELS_DIR, Defines
from tests.compile_program import compile_and_link
from tests.emulator.hex_dump import parse_hex_dump


def run_cases_rom(bare: BareToolchain, boot_stub: bytes, probe: Path, blob: bytes, rom: Path,
                  defines: Defines | None = None) -> list[str]:
    """Compile `probe` with the kernels for `bare`, pack it with `blob` as the "cases"
    asset into `rom` and return the lines the ROM prints."""
    program = compile_and_link(bare, [probe, *sorted(KERNELS_DIR.glob("*.c"))], [KERNELS_DIR],
                               rom.with_suffix(".bin"), defines)
    image = build_asset_image([Asset("cases", blob)]).data
    rom.write_bytes(pack_rom(program.read_bytes(), image, ipl3=boot_stub))
    return run_rom(rom, timeout=60).lines


def check_probe_cases(bare: BareToolchain, boot_stub: bytes, probe: Path, rom: Path,
                      specs: list, cases: list[tuple[bytes, np.ndarray]], tag: str,
                      cpu_kernel: str) -> list[str]:
    """Run `probe` over `cases` (each its blob and wanted int8 output) and assert that
    case i's output (hex dump ``<tag><i>``) equals its want and that `cpu_kernel` agreed
    with it on the N64 (``sam<i> 1``); return the lines for the caller's own checks."""
    blob = struct.pack(">i", len(cases)) + b"".join(c[0] for c in cases)
    lines = run_cases_rom(bare, boot_stub, probe, blob, rom)
    for i, (spec, (_, want)) in enumerate(zip(specs, cases, strict=True)):
        got = parse_hex_dump(lines, f"{tag}{i:02d}", "int8", want.size).reshape(want.shape)
        np.testing.assert_array_equal(got, want, err_msg=f"case {i} {spec}")
        assert f"sam{i:02d} 1" in lines, f"case {i}: {cpu_kernel} disagrees on the N64"
    return lines
