"""Compile, archive and link are plain ninja commands with exact header dependencies
(real ninja, the host compiler). The reference for 'which files include a header' is a
transitive scan of the #include lines, independent of gcc's dependency output."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from dnn64build import TOOL_ROOT
from tests.build.conftest import Workspace

KERNELS = TOOL_ROOT / "kernels"
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def _includes(source: Path, search: list[Path]) -> set[Path]:
    """Every header ``source`` includes, transitively (quoted includes found in ``search``
    or beside the including file)."""
    found: set[Path] = set()
    stack = [source]
    while stack:
        current = stack.pop()
        for name in _INCLUDE.findall(current.read_text()):
            for directory in [current.parent, *search]:
                candidate = (directory / name).resolve()
                if candidate.is_file() and candidate not in found:
                    found.add(candidate)
                    stack.append(candidate)
                    break
    return found


def _compiled(actions: list[tuple[str, str]]) -> list[str]:
    return sorted(what.split(" ")[-1] for mnemonic, what in actions if mnemonic == "Compile")


def test_touching_a_kernel_header_recompiles_only_the_files_that_include_it(
    two_models: Workspace,
) -> None:
    first = two_models.build("//...")
    out = two_models.root / "dnn64-out"
    sources = [KERNELS / name for name in _compiled(first) if (KERNELS / name).exists()]
    sources += [p for p in (KERNELS / "platform").rglob("*.c") if p.name in _compiled(first)]
    sources += list(out.rglob("codegen/*.c")) + list(out.rglob("program/main.c"))
    assert len(sources) == len(_compiled(first))  # every compiled file is accounted for
    header = (KERNELS / "dnn64_math.h").resolve()
    search = [KERNELS, KERNELS / "platform", *{p.parent for p in out.rglob("codegen/*.h")}]
    expected = sorted(s.name for s in sources if header in _includes(s, search))
    assert expected and len(expected) < len(sources)

    time.sleep(0.05)
    os.utime(header)  # newer, same bytes
    assert _compiled(two_models.build("//...")) == expected
    assert two_models.build("//...") == []


def test_the_compiler_is_an_input_of_every_command(two_models: Workspace) -> None:
    """Its resolved path in the command line, its version in an identity file that every
    command depends on: another compiler rebuilds."""
    two_models.run("query", "//...")
    graph = re.sub(r"\$\n\s*", "", (two_models.root / "dnn64-out" / "build.ninja").read_text())
    identity = (two_models.root / "dnn64-out" / "toolchains" / "host.id").read_text()
    compiler = identity.splitlines()[1].removeprefix("compiler ")
    assert Path(compiler).is_absolute() and os.access(compiler, os.X_OK)
    commands = re.findall(r"^build (\S+): (compile|archive|link) (.*)$", graph, re.M)
    assert commands
    for _out, rule, deps in commands:
        assert "toolchains/host.id" in deps
        assert compiler in deps or rule == "archive"  # ar is the archiver's own input


def test_libdragon_commands_in_the_graph(two_models: Workspace, tmp_path: Path) -> None:
    """No libdragon here: a fake $N64_INST whose tools only exist; the graph's commands are
    checked as strings (n64.mk's compiler and flags, gcc dependency files, g++ links)."""
    bindir = tmp_path / "sdk" / "bin"
    bindir.mkdir(parents=True)
    for name in ("mips64-elf-gcc", "mips64-elf-g++", "mips64-elf-strip", "mips64-elf-ar",
                 "n64tool", "n64sym", "n64elfcompress", "mkdfs"):
        (bindir / name).write_text("#!/bin/sh\necho 'fake 1.0'\n")
        (bindir / name).chmod(0o755)
    manifest = two_models.root / "BUILD.yaml"
    manifest.write_text(manifest.read_text().replace("toolchain: host", "toolchain: libdragon"))
    two_models.run("query", "//...", env={"N64_INST": str(tmp_path / "sdk")})
    out = two_models.root / "dnn64-out"
    graph = re.sub(r"\$\n\s*", "", (out / "build.ninja").read_text())
    gcc, gxx = str(bindir / "mips64-elf-gcc"), str(bindir / "mips64-elf-g++")
    model = re.search(r"^build bin/models/a/compile/libdragon/m_models_a\.o: compile (.*)\n"
                      r"((?:  .*\n)*)", graph, re.M)
    assert model, "no libdragon compile of model a"
    argv = re.search(r"^  argv = (.*)$", model[2], re.M)[1].split()
    assert argv[0] == gcc and "-march=vr4300" in argv and "-std=gnu99" in argv
    assert argv[-4:] == ["-c", "bin/models/a/codegen/m_models_a.c", "-o",
                         "bin/models/a/compile/libdragon/m_models_a.o.tmp"]
    obj = "bin/models/a/compile/libdragon/m_models_a.o"
    assert argv[argv.index("-MMD"):][:5] == ["-MMD", "-MF", f"{obj}.d", "-MT", obj]
    assert gcc in model[1] and "toolchains/libdragon.id" in model[1]
    link = re.search(r"^build bin/models/a/program/libdragon/program\.elf: link .*\n"
                     r"((?:  .*\n)*)", graph, re.M)
    assert link and f"argv = {gxx} -o bin/models/a/program/libdragon/program.elf.tmp" in link[1]
    assert "shared/libdragon/libdnn64.a" in link[1]
    assert re.search(r"^build bin/models/a/a\.z64: pack .*bin/models/a/program/libdragon/"
                     r"program\.elf", graph, re.M)
    assert "fake 1.0" in (out / "toolchains" / "libdragon.id").read_text()
