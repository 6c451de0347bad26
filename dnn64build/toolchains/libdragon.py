"""The `libdragon` toolchain: libdragon's SDK under $N64_INST (commands as its n64.mk).

The asset image becomes the DragonFS file ``assets.bin`` (the toolchain's own
``mkdfs``, so the image matches that libdragon's reader); n64tool assembles the
ROM with libdragon's CIC-signed IPL3. Cannot run on this project's CI (no
libdragon), so the commands are tested as strings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from dnn64build.toolchains.base import (
    COMMON_SOURCES,
    PLATFORM_DIR,
    Toolchain,
)
from dnn64build.toolchains.tools import find_tool

# N64-NOTES.md, "libdragon": n64.mk's compile flags.
CFLAGS = (
    "-march=vr4300", "-mtune=vr4300", "-falign-functions=32", "-ffunction-sections",
    "-fdata-sections", "-g", "-ffast-math", "-ftrapping-math", "-fno-associative-math",
    "-DN64", "-O2", "-Wall", "-Werror", "-std=gnu99",
    # n64.mk's flags end here. The kernels need exact IEEE fp32 (int8 resize weights,
    # QuantizeLinear ties, NaN checks), so fast-math is switched off again after them.
    "-fno-fast-math", "-ffp-contract=off",
)  # fmt: skip
LDFLAGS = (
    "-g", "-ldragon", "-lm", "-ldragonsys", "-Tn64.ld", "--gc-sections",
    "--wrap", "__do_global_ctors",
)  # fmt: skip


class LibdragonToolchain(Toolchain):
    name = "libdragon"
    tools = "libdragon"  # its third_party descriptor

    def __init__(self, env: Mapping[str, str] | None = None, title: str = "DNN64"):
        tool = find_tool(self.tools, env=env, check_version=False)
        self.paths = {role: str(path) for role, path in tool.paths.items()}
        self.root = Path(tool.paths["gcc"]).parent.parent
        self.cc = self.paths["gcc"]
        self.cflags = (*CFLAGS, f"-I{self.root / 'mips64-elf' / 'include'}")
        self.ar = self.paths["ar"]
        self.title = title

    def platform_sources(self) -> list[Path]:
        return [*COMMON_SOURCES, PLATFORM_DIR / "libdragon" / "dnn64_platform_libdragon.c"]

    def linked_path(self, out: Path) -> Path:
        return Path(out).with_suffix(".elf")

    def link_argv(self, objects: Sequence[Path], out: Path) -> list[str]:
        libdir = self.root / "mips64-elf" / "lib"
        return [
            self.paths["gxx"], "-o", str(self.linked_path(out)), *map(str, objects), "-lc",
            f"-Wl,-L{libdir}", *(f"-Wl,{flag}" for flag in LDFLAGS),
        ]  # fmt: skip

    def dfs_argv(self, asset_dir: Path, out_dfs: Path) -> list[str]:
        """mkdfs over a directory holding ``assets.bin`` (the asset image)."""
        return [self.paths["mkdfs"], str(out_dfs), str(asset_dir)]

    def rom_argvs(self, elf: Path, dfs: Path, out_rom: Path) -> list[list[str]]:
        """n64.mk's %.z64 recipe: symbols, strip, compress, n64tool with the DFS."""
        elf = Path(elf)
        sym = f"{elf}.sym"
        stripped = f"{elf}.stripped"
        return [
            [self.paths["n64sym"], str(elf), sym],
            ["cp", str(elf), stripped],
            [self.paths["strip"], "-s", stripped],
            [self.paths["n64elfcompress"], "-o", str(elf.parent), "-c", "1", stripped],
            [self.paths["n64tool"], "--title", self.title, "--toc", "--output", str(out_rom),
             "--align", "256", stripped, "--align", "8", sym, "--align", "16", str(dfs)],
        ]  # fmt: skip
