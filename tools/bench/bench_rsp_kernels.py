"""CPU cycles of single int8 layers per kernel, in cen64: the CPU kernel, the RSP kernel
the CPU feeds (dnn64_rsp_conv_s8) and the RSP kernels that fetch their own data.

    python -m tools.bench.bench_rsp_kernels [--timeout 900] [--kernels-at REV]

Builds tools/bench/programs/rsp_kernel_shapes.c with every kernel source for the bare
toolchain (with --kernels-at, kernels/ as it was at git revision REV, microcode and
platform layer included: the same shapes before and after a change), runs it in cen64
(cycles = Count x 2, read around each call) and prints a markdown table: per shape, MACs
(products for a Mul), cycles and cycles per MAC per kernel, and whether each RSP
kernel's output equals the CPU kernel's on the console.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from dnn64build.emulator.cen64 import run_rom_cen64  # noqa: E402
from dnn64build.rom import build_asset_image, pack_rom  # noqa: E402
from dnn64build.toolchains.bare import BareToolchain  # noqa: E402
from dnn64build.toolchains.base import KERNELS_DIR  # noqa: E402
from tests.compile_program import compile_and_link  # noqa: E402

PROGRAM = Path(__file__).parent / "programs" / "rsp_kernel_shapes.c"
LINE = re.compile(r"^(\S+) (\S+) +(\d+) +([01])$")


def macs(shape: str) -> int:
    """Multiply-accumulates of a shape name (dw<k>x<k>s<s>_<c>x<h>, pw<cin>to<cout>_<h>,
    stem<cin>to<cout>_<h> (3x3 stride 2), mul_<c>x<h>, fc<k>to<n>; gap_<c>x<h>: the bytes
    summed)."""
    if shape.startswith("dw"):
        k, s, c, h = map(int, re.match(r"dw(\d)x\d+s(\d)_(\d+)x(\d+)", shape).groups())
        out = (h + 2 * (k // 2) - k) // s + 1
        return c * out * out * k * k
    if shape.startswith("pw"):
        cin, cout, h = map(int, re.match(r"pw(\d+)to(\d+)_(\d+)", shape).groups())
        return cin * cout * h * h
    if shape.startswith("stem"):
        cin, cout, h = map(int, re.match(r"stem(\d+)to(\d+)_(\d+)", shape).groups())
        return cin * cout * 9 * ((h - 1) // 2 + 1) ** 2
    if shape.startswith("fc"):
        k, n = map(int, re.match(r"fc(\d+)to(\d+)", shape).groups())
        return k * n
    c, h = map(int, re.match(r"(?:mul|gap)_(\d+)x(\d+)", shape).groups())
    return c * h * h


class KernelsToolchain(BareToolchain):
    """The bare toolchain with its platform layer taken from another kernels/ tree."""

    def __init__(self, kernels: Path):
        super().__init__()
        self.kernels = kernels

    def platform_sources(self) -> list[Path]:
        return [self.kernels / p.relative_to(KERNELS_DIR) for p in super().platform_sources()]


def kernels_at(rev: str, out: Path) -> Path:
    """kernels/ as it was at git revision ``rev``, extracted under ``out``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "kernels"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    return out / "kernels"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--kernels-at", metavar="REV",
                        help="build kernels/ as it was at this git revision")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        kernels = kernels_at(args.kernels_at, out) if args.kernels_at else KERNELS_DIR
        bare = KernelsToolchain(kernels)
        program = compile_and_link(bare, [PROGRAM, *sorted(kernels.glob("*.c"))],
                                   [kernels, kernels / "platform"], out / "shapes.bin")
        rom = out / "shapes.z64"
        rom.write_bytes(pack_rom(program.read_bytes(), build_asset_image([]).data,
                                 ipl3=bare.build_boot_stub(out / "boot.bin")))
        lines = run_rom_cen64(rom, timeout=args.timeout).lines
    rows: dict[str, dict[str, tuple[int, bool]]] = {}
    for line in lines:
        m = LINE.match(line.strip())
        if m:
            rows.setdefault(m[1], {})[m[2]] = (int(m[3]), m[4] == "1")
    print("| layer | M MACs | kernel | CPU cycles | cycles/MAC | = CPU kernel's output |")
    print("|---|---|---|---:|---:|---|")
    for shape, kernels in rows.items():
        count = macs(shape)
        for kernel, (cycles, same) in kernels.items():
            check = "-" if kernel == "cpu" else ("yes" if same else "NO")
            print(f"| {shape} | {count / 1e6:.2f} | {kernel} | {cycles:,} | "
                  f"{cycles / count:.2f} | {check} |")
    return 0 if all(same for k in rows.values() for _, same in k.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
