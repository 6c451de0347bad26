"""The `host` toolchain: the native cc, for fast numerics tests off-target."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from dnn64build.toolchains.base import (
    COMMON_SOURCES,
    PLATFORM_DIR,
    Toolchain,
)
from dnn64build.toolchains.tools import find_tool

# -ffp-contract=off: no fused multiply-add, so float results match the VR4300
# (which has none) bit for bit.
CFLAGS = ("-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-ffp-contract=off")
SANITIZE_FLAGS = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                  "-fno-omit-frame-pointer", "-g")


class HostToolchain(Toolchain):
    name = "host"
    tools = "host-cc"  # its third_party descriptor

    def __init__(self, env: Mapping[str, str] | None = None, *, sanitize: bool = False):
        """``sanitize``: build with AddressSanitizer and UBSan (for tests)."""
        tool = find_tool(self.tools, env=env)
        self.cc = tool["cc"]
        self.link_flags = SANITIZE_FLAGS if sanitize else ()
        self.cflags = (*CFLAGS, *self.link_flags)
        self.ar = tool["ar"]

    def platform_sources(self) -> list[Path]:
        return [*COMMON_SOURCES, PLATFORM_DIR / "host" / "dnn64_platform_host.c"]

    def link_argv(self, objects: Sequence[Path], out: Path) -> list[str]:
        return [self.cc, *self.link_flags, "-o", str(out), *map(str, objects), "-lm"]
