"""The Toolchain interface: argv lists for compiling and linking a program.

The build puts these argv lists into ninja commands (tests run them directly through
tests/compile_program.py).
"""

from __future__ import annotations

import subprocess
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path

from dnn64build import DATA_ROOT
from dnn64build.errors import UserError

KERNELS_DIR = DATA_ROOT / "kernels"  # the portable kernels (dnn64_kernels.h)
PLATFORM_DIR = KERNELS_DIR / "platform"
# The tool's headers: every compile may include them (part of each command's key).
TOOL_HEADERS = tuple(
    str(p) for p in sorted([*KERNELS_DIR.glob("*.h"), *PLATFORM_DIR.glob("*.h")])
)
# Platform-free parts of the platform layer, built for every toolchain.
COMMON_SOURCES = (PLATFORM_DIR / "dnn64_format.c", PLATFORM_DIR / "dnn64_assets.c",
                  PLATFORM_DIR / "dnn64_cart.c")

Defines = Mapping[str, str | None]


def define_flags(defines: Defines) -> list[str]:
    """-D flags in sorted order, so argv lists are deterministic."""
    return [f"-D{k}" if v is None else f"-D{k}={v}" for k, v in sorted(defines.items())]


class Toolchain(ABC):
    """Builds a dnn64 program for one platform.

    ``compile_argv`` turns one .c/.S file into an object; ``link_argv`` links
    objects (yours plus ``platform_sources()``'s) into ``linked_path(out)``;
    ``finish_argvs`` turns that into the final ``out`` (a raw program image
    for bare, nothing more for host).
    """

    name: str
    tools: str  # the third_party/<tools>.yaml descriptor of its executables
    cc: str  # the C compiler (also assembles .S)
    cflags: tuple[str, ...]  # its flags, before defines and include directories
    ar: str  # the archiver matching the compiler

    @abstractmethod
    def platform_sources(self) -> list[Path]:
        """The platform layer's sources every program must also compile."""

    def include_dirs(self) -> list[Path]:
        """Where dnn64_platform.h lives."""
        return [PLATFORM_DIR]

    def compile_argv(
        self,
        source: Path,
        obj: Path,
        *,
        include_dirs: Sequence[Path] = (),
        defines: Defines | None = None,
        depfile: Path | None = None,
    ) -> list[str]:
        """argv compiling ``source`` (.c or .S) to ``obj``; ``depfile`` gets -MMD output."""
        incs = [f"-I{d}" for d in [*include_dirs, *self.include_dirs()]]
        dep = ["-MMD", "-MF", str(depfile)] if depfile else []
        return [
            self.cc, *self.cflags, *define_flags(defines or {}), *incs, *dep,
            "-c", str(source), "-o", str(obj),
        ]  # fmt: skip

    @abstractmethod
    def link_argv(self, objects: Sequence[Path], out: Path) -> list[str]:
        """argv linking ``objects`` into ``self.linked_path(out)``."""

    def archive_argv(self, objects: Sequence[Path], out: Path) -> list[str]:
        """argv collecting ``objects`` into the static library ``out`` (deterministic: no
        timestamps or owners, so an unchanged library is byte-identical)."""
        return [self.ar, "rcsD", str(out), *map(str, objects)]

    def linked_path(self, out: Path) -> Path:
        return Path(out)

    def finish_argvs(self, out: Path) -> list[list[str]]:
        """argv lists run after linking to produce ``out``."""
        return []


def run(argv: Sequence[str]) -> None:
    """Run one build command; a failure is a UserError carrying its output."""
    proc = subprocess.run(list(argv), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        output = (proc.stdout + proc.stderr).strip()
        raise UserError(
            f"command failed (exit {proc.returncode}): {' '.join(argv)}\n{output}",
            where=Path(argv[0]).name,
        )
