"""Finding external tools, and the errors when they are missing or too old."""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

from dnn64build.errors import UserError
from dnn64build.toolchains import (
    BareToolchain,
    HostToolchain,
    LibdragonToolchain,
    find_tool,
    find_toolchain,
)
from dnn64build.toolchains.tools import DESCRIPTOR_DIR, load_descriptor

LIBDRAGON_TOOLS = (
    "mips64-elf-gcc", "mips64-elf-g++", "mips64-elf-strip", "mips64-elf-ar", "n64tool", "n64sym",
    "n64elfcompress", "mkdfs",
)  # fmt: skip


def fake_executable(directory: Path, name: str, output: str = "") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(f"#!/bin/sh\necho '{output}'\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def fake_n64_inst(root: Path) -> Path:
    for name in LIBDRAGON_TOOLS:
        fake_executable(root / "bin", name, "13.2.0")
    return root


def test_every_descriptor_loads_and_names_an_install_route():
    names = sorted(p.stem for p in DESCRIPTOR_DIR.glob("*.yaml"))
    assert names == ["ares", "cen64", "host-cc", "libdragon", "mips-linux-gnu-gcc", "mupen64plus",
                     "nginx"]
    for name in names:
        desc = load_descriptor(name)
        assert desc.name == name and desc.executables
        assert desc.install_hint


def test_missing_cross_gcc_names_the_debian_package(tmp_path):
    with pytest.raises(UserError) as err:
        find_toolchain("bare", env={"PATH": str(tmp_path)})
    text = str(err.value)
    assert "mips-linux-gnu-gcc not found in PATH" in text
    assert "gcc-mips-linux-gnu" in text and "binutils-mips-linux-gnu" in text
    assert "DNN64_MIPS_BINDIR" in text


def test_missing_host_cc(tmp_path):
    with pytest.raises(UserError, match="cc not found"):
        HostToolchain(env={"PATH": str(tmp_path)})


def test_missing_libdragon_names_n64_inst(tmp_path):
    with pytest.raises(UserError, match=r"\$N64_INST is not set") as err:
        find_toolchain("libdragon", env={"PATH": os.environ["PATH"]})
    assert "N64_INST" in str(err.value.hint)
    with pytest.raises(UserError, match=r"mips64-elf-g\+\+ not found in \$N64_INST/bin"):
        root = tmp_path / "sdk"
        fake_executable(root / "bin", "mips64-elf-gcc")
        LibdragonToolchain(env={"N64_INST": str(root)})


def test_missing_emulator_names_the_debian_package(tmp_path):
    env = {"PATH": str(tmp_path), "DNN64_MUPEN64PLUS_BINDIR": str(tmp_path / "nothing")}
    with pytest.raises(UserError) as err:
        find_tool("mupen64plus", env=env)
    assert "mupen64plus-ui-console" in str(err.value)


def test_too_old_compiler_is_refused(tmp_path):
    bindir = tmp_path / "bin"
    for name in ("mips-linux-gnu-gcc", "mips-linux-gnu-objcopy", "mips-linux-gnu-objdump",
                 "mips-linux-gnu-ar"):
        fake_executable(bindir, name, "4.9.2")
    with pytest.raises(UserError, match="version 4.9.2 is older than the required 10"):
        BareToolchain(env={"DNN64_MIPS_BINDIR": str(bindir)})


def test_override_directory_is_used_instead_of_path(tmp_path):
    bindir = tmp_path / "bin"
    for name in ("mips-linux-gnu-gcc", "mips-linux-gnu-objcopy", "mips-linux-gnu-objdump",
                 "mips-linux-gnu-ar"):
        fake_executable(bindir, name, "12.1")
    tool = find_tool("mips-linux-gnu-gcc", env={"DNN64_MIPS_BINDIR": str(bindir), "PATH": ""})
    assert tool["gcc"] == str(bindir / "mips-linux-gnu-gcc") and tool.version == "12.1"


def test_auto_prefers_libdragon_when_n64_inst_is_set(tmp_path):
    root = fake_n64_inst(tmp_path / "sdk")
    assert isinstance(find_toolchain("auto", env={"N64_INST": str(root)}), LibdragonToolchain)


def test_auto_is_bare_without_n64_inst(tmp_path):
    with pytest.raises(UserError, match="gcc-mips-linux-gnu"):
        find_toolchain("auto", env={"PATH": str(tmp_path)})


def test_unknown_toolchain():
    with pytest.raises(UserError, match="unknown toolchain 'n64'") as err:
        find_toolchain("n64")
    assert "auto, bare, host, libdragon" in str(err.value.hint)


def test_setup_script_installs_every_debian_package_the_descriptors_name():
    script = (DESCRIPTOR_DIR.parent / "tools" / "setup.sh").read_text()
    packages = set(re.search(r'^PACKAGES="([^"]+)"', script, re.MULTILINE)[1].split())
    for name in ("mips-linux-gnu-gcc", "mupen64plus"):
        assert set(load_descriptor(name).debian_packages) <= packages
    assert "qemu-user" in packages
    syntax = subprocess.run(["sh", "-n", str(DESCRIPTOR_DIR.parent / "tools" / "setup.sh")])
    assert syntax.returncode == 0
