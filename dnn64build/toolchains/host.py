"""The `host` toolchain: the native cc, for fast numerics tests off-target."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from dnn64build.toolchains.base import (
    COMMON_SOURCES,
    PLATFORM_DIR,
    Defines,
    Toolchain,
    define_flags,
)
from dnn64build.toolchains.tools import find_tool

# -ffp-contract=off: no fused multiply-add, so float results match the VR4300
# (which has none) bit for bit.
CFLAGS = ("-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-ffp-contract=off")


class HostToolchain(Toolchain):
    name = "host"

    def __init__(self, env: Mapping[str, str] | None = None):
        tool = find_tool("host-cc", env=env)
        self.cc = tool["cc"]
        self.ar = tool["ar"]

    def platform_sources(self) -> list[Path]:
        return [*COMMON_SOURCES, PLATFORM_DIR / "host" / "dnn64_platform_host.c"]

    def compile_argv(
        self,
        source: Path,
        obj: Path,
        *,
        include_dirs: Sequence[Path] = (),
        defines: Defines | None = None,
        depfile: Path | None = None,
    ) -> list[str]:
        incs = [f"-I{d}" for d in [*include_dirs, *self.include_dirs()]]
        dep = ["-MMD", "-MF", str(depfile)] if depfile else []
        return [
            self.cc, *CFLAGS, *define_flags(defines or {}), *incs, *dep,
            "-c", str(source), "-o", str(obj),
        ]  # fmt: skip

    def link_argv(self, objects: Sequence[Path], out: Path) -> list[str]:
        return [self.cc, "-o", str(out), *map(str, objects), "-lm"]
