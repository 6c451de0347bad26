"""libdragon commands cannot run here: check them as strings against n64.mk
(as summarised in N64-NOTES.md), with a fake $N64_INST."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

import pytest

from dnn64build.toolchains import LibdragonToolchain
from dnn64build.toolchains.base import PLATFORM_DIR

TOOLS = ("mips64-elf-gcc", "mips64-elf-g++", "mips64-elf-strip", "mips64-elf-ar", "n64tool",
         "n64sym", "n64elfcompress", "mkdfs")  # fmt: skip


@pytest.fixture
def sdk(tmp_path: Path) -> Path:
    (tmp_path / "sdk" / "bin").mkdir(parents=True)
    for name in TOOLS:
        exe = tmp_path / "sdk" / "bin" / name
        exe.write_text("#!/bin/sh\n")
        exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return tmp_path / "sdk"


def test_compile_command(sdk):
    tc = LibdragonToolchain(env={"N64_INST": str(sdk)})
    argv = tc.compile_argv(
        Path("model.c"), Path("model.o"), include_dirs=[Path("gen")], defines={"B": "2", "A": None}
    )
    assert argv[0] == f"{sdk}/bin/mips64-elf-gcc"
    text = " ".join(argv)
    assert (
        "-march=vr4300 -mtune=vr4300 -falign-functions=32 -ffunction-sections -fdata-sections "
        "-g -ffast-math -ftrapping-math -fno-associative-math -DN64 -O2 -Wall -Werror -std=gnu99"
    ) in text
    assert f"-I{sdk}/mips64-elf/include" in argv
    assert argv.index("-DA") < argv.index("-DB=2")  # sorted, deterministic
    assert "-Igen" in argv and any(a.endswith("kernels/platform") for a in argv)
    assert argv[-4:] == ["-c", "model.c", "-o", "model.o"]


def test_link_command(sdk):
    tc = LibdragonToolchain(env={"N64_INST": str(sdk)})
    argv = tc.link_argv([Path("a.o"), Path("b.o")], Path("out/prog.z64"))
    assert argv[:5] == [f"{sdk}/bin/mips64-elf-g++", "-o", "out/prog.elf", "a.o", "b.o"]
    assert " ".join(argv[5:]) == (
        f"-lc -Wl,-L{sdk}/mips64-elf/lib -Wl,-g -Wl,-ldragon -Wl,-lm -Wl,-ldragonsys "
        "-Wl,-Tn64.ld -Wl,--gc-sections -Wl,--wrap -Wl,__do_global_ctors"
    )


def test_dfs_and_rom_commands(sdk):
    tc = LibdragonToolchain(env={"N64_INST": str(sdk)}, title="DIGITS")
    bindir = f"{sdk}/bin"
    assert tc.dfs_argv(Path("assets"), Path("out/a.dfs")) == [
        f"{bindir}/mkdfs", "out/a.dfs", "assets",
    ]  # fmt: skip
    assert tc.rom_argvs(Path("out/p.elf"), Path("out/a.dfs"), Path("out/p.z64")) == [
        [f"{bindir}/n64sym", "out/p.elf", "out/p.elf.sym"],
        ["cp", "out/p.elf", "out/p.elf.stripped"],
        [f"{bindir}/mips64-elf-strip", "-s", "out/p.elf.stripped"],
        [f"{bindir}/n64elfcompress", "-o", "out", "-c", "1", "out/p.elf.stripped"],
        [f"{bindir}/n64tool", "--title", "DIGITS", "--toc", "--output", "out/p.z64",
         "--align", "256", "out/p.elf.stripped", "--align", "8", "out/p.elf.sym",
         "--align", "16", "out/a.dfs"],
    ]  # fmt: skip


def test_platform_sources_use_the_libdragon_layer(sdk):
    tc = LibdragonToolchain(env={"N64_INST": str(sdk)})
    names = [p.name for p in tc.platform_sources()]
    assert names == ["dnn64_format.c", "dnn64_assets.c", "dnn64_cart.c",
                     "dnn64_platform_libdragon.c"]
    assert all(p.is_file() for p in tc.platform_sources())


def test_libdragon_platform_layer_type_checks_against_the_documented_api(host_cc: str):
    """No SDK here: compile against a stand-in header with libdragon's signatures."""
    source = PLATFORM_DIR / "libdragon" / "dnn64_platform_libdragon.c"
    fake = Path(__file__).parent / "fake_libdragon"
    proc = subprocess.run(
        [host_cc, "-fsyntax-only", "-std=gnu99", "-Wall", "-Wextra", "-Werror",
         f"-I{fake}", f"-I{PLATFORM_DIR}", str(source)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
