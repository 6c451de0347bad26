"""Compile, archive and link as plain ninja commands (CommandAction), one per file.

Paths are ninja paths: tool files (kernels) absolute, generated ones relative to the
output base. Each command writes ``OUT.tmp`` (the client moves a changed result into
place, so ``restat`` holds). Objects shared by the whole workspace (the kernel library,
the platform layer, the bare boot stub) live under ``shared/<toolchain>/``.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path

from dnn64build import DATA_ROOT
from dnn64build.errors import UserError
from dnn64build.graph.actions import BuildGraph, CommandAction
from dnn64build.toolchains import (
    BareToolchain,
    Toolchain,
    find_toolchain,
    toolchain_variables,
)
from dnn64build.toolchains.bare import KSEG0
from dnn64build.toolchains.base import KERNELS_DIR, TOOL_HEADERS
from dnn64build.toolchains.identity import identity_text

# The word ninja's progress lines show for each kind of toolchain command.
MNEMONICS = {"compile": "Compile", "archive": "Archive", "link": "Link", "objcopy": "Objcopy"}


def kernel_sources() -> list[str]:
    return [str(p) for p in sorted(KERNELS_DIR.glob("*.c"))]


def resolve(name: str) -> Toolchain | UserError:
    """The toolchain ``name`` as the rule context resolves it (its environment), or why it
    cannot be found: a missing toolchain fails the build of what needs it, not the graph."""
    return _resolve(name, tuple((v, os.environ.get(v)) for v in toolchain_variables(name)))


@cache
def _resolve(name: str, env: tuple[tuple[str, str | None], ...]) -> Toolchain | UserError:
    """``resolve``, once per toolchain and the values of the variables that select it."""
    try:
        return find_toolchain(name)
    except UserError as e:
        return e


class ToolchainActions:
    """Declares command actions into ``graph``, and each toolchain's identity file (written
    with the configs by the generator)."""

    def __init__(self, graph: BuildGraph) -> None:
        self._graph = graph

    def identity(self, toolchain: str) -> str:
        """Ninja path of ``toolchains/<name>.id``: compiler path and version (an input of
        every command of that toolchain, so another compiler rebuilds)."""
        path = f"toolchains/{toolchain}.id"
        if path not in self._graph.files:
            tc = resolve(toolchain)
            self._graph.files[path] = (f"missing: {tc}\n" if isinstance(tc, UserError)
                                       else identity_text(tc))
        return path

    def compile(
        self, toolchain: str, source: str, obj: str, *, include_dirs: Sequence[str] = (),
        headers: Sequence[str] = (), progress: str,
    ) -> str:
        """Compile ``source`` (.c/.S) to ``obj``; ``headers``: generated headers it may
        include (the tool's own are added)."""
        tc = resolve(toolchain)
        if isinstance(tc, UserError):
            return self._missing(toolchain, [source], [obj], tc, progress)
        argv = tc.compile_argv(
            Path(source), Path(obj + ".tmp"), include_dirs=[Path(d) for d in
                                                            [*include_dirs, str(KERNELS_DIR)]],
            depfile=Path(obj + ".d"),
        )
        argv[argv.index("-MF") + 2:argv.index("-MF") + 2] = ["-MT", obj]
        return self._add("compile", toolchain, [source, *headers], obj, argv,
                         f"{progress} {Path(source).name}",
                         depfile=True, key_inputs=(*headers, *TOOL_HEADERS))

    def archive(self, toolchain: str, objects: Sequence[str], out: str, *, progress: str) -> str:
        tc = resolve(toolchain)
        if isinstance(tc, UserError):
            return self._missing(toolchain, objects, [out], tc, progress)
        argv = tc.archive_argv([Path(o) for o in objects], Path(out + ".tmp"))
        return self._add("archive", toolchain, objects, out, argv, progress)

    def link(
        self, toolchain: str, objects: Sequence[str], out: str, *, memory: int, progress: str
    ) -> tuple[str, str]:
        """Link ``objects`` into the program ``out`` (for bare: the raw image, through an
        ELF beside it); returns the linked file (the ELF the fit check reads) and ``out``."""
        tc = resolve(toolchain)
        if isinstance(tc, UserError):
            missing = self._missing(toolchain, objects, [out], tc, progress)
            return missing, missing
        if isinstance(tc, BareToolchain):
            tc = BareToolchain(ram_end=KSEG0 + memory)
        linked = produced = str(tc.linked_path(Path(out)))
        argv = _retarget(tc.link_argv([Path(o) for o in objects], Path(out)), produced)
        self._add("link", toolchain, objects, produced, argv, progress)
        for finish in tc.finish_argvs(Path(out)):
            self._add("objcopy", toolchain, [produced], out, _retarget(finish, out), progress)
            produced = out
        return linked, produced

    def runtime(self, toolchain: str) -> tuple[str, list[str]]:
        """The kernel library and the platform layer's objects of ``toolchain`` (shared)."""
        base = f"shared/{toolchain}"
        progress = f"runtime ({toolchain})"
        kernels = [self.compile(toolchain, s, f"{base}/kernels/{Path(s).stem}.o",
                                progress=progress)
                   for s in kernel_sources()]
        library = self.archive(toolchain, kernels, f"{base}/libdnn64.a", progress=progress)
        tc = resolve(toolchain)
        platform = [
            self.compile(toolchain, str(s), f"{base}/platform/{s.name}.o",
                         progress=progress)
            for s in ([] if isinstance(tc, UserError) else tc.platform_sources())
        ]
        return library, platform

    def boot_stub(self) -> str:
        """The bare toolchain's IPL3-slot boot stub, raw (the pack stage pads it)."""
        tc = resolve("bare")
        out = "shared/bare/boot.bin"
        if isinstance(tc, UserError):
            return self._missing("bare", [], [out], tc, "boot stub (bare)")
        assert isinstance(tc, BareToolchain)
        assemble, extract = tc.boot_stub_argvs(Path(out))
        obj = str(Path(out).with_suffix(".o"))
        self._add("compile", "bare", [assemble[assemble.index("-c") + 1]], obj,
                  _retarget(assemble, obj), "boot stub (bare)")
        self._add("objcopy", "bare", [obj], out, _retarget(extract, out), "boot stub (bare)")
        return out

    def command(self, argv: list[str], *, inputs: Mapping[str, list[str]],
                outputs: Mapping[str, str], mnemonic: str, progress: str,
                where: str) -> dict[str, str]:
        """A rule's own command (RuleContext.command): ``argv`` as expanded, the program
        found in PATH when named bare."""
        program = argv[0] if "/" in argv[0] else shutil.which(argv[0])
        if program is None:
            raise UserError(f"command {argv[0]!r} not found in PATH", where=where,
                            hint="install it, or name it by its path")
        self._graph.add(CommandAction(
            kind="command", name=next(iter(outputs.values())),
            inputs=tuple(sorted({p for paths in inputs.values() for p in paths})),
            outputs=dict(outputs), argv=(program, *argv[1:]), progress=progress, tool=None,
            mnemonic=mnemonic,
        ))
        return dict(outputs)

    def _missing(self, toolchain: str, inputs: Sequence[str], outputs: list[str],
                 error: UserError, progress: str) -> str:
        """A command that fails with ``error`` (the graph regenerates until the toolchain is
        found: see ``BuildGraph.unresolved``)."""
        self._graph.unresolved = True
        argv = [sys.executable, "-S", "-E", "-c", f"import sys; sys.exit({f'ERROR: {error}'!r})"]
        self._graph.add(CommandAction(
            kind="compile", name=outputs[0], inputs=tuple(inputs),
            outputs={str(i): o for i, o in enumerate(outputs)}, argv=tuple(argv),
            progress=progress, tool=self.identity(toolchain), mnemonic=MNEMONICS["compile"],
        ))
        return outputs[0]

    def _add(
        self, kind: str, toolchain: str, inputs: Sequence[str], out: str, argv: list[str],
        progress: str, *, depfile: bool = False, key_inputs: Sequence[str] = (),
    ) -> str:
        self._graph.add(CommandAction(
            kind=kind, name=out, inputs=(*inputs, *_tool_files_named(argv)), outputs={"out": out},
            argv=tuple(argv), progress=progress, tool=self.identity(toolchain),
            mnemonic=MNEMONICS[kind], depfile=depfile, key_inputs=tuple(sorted(set(key_inputs))),
        ))
        return out


def _tool_files_named(argv: Sequence[str]) -> list[str]:
    """The tool's own files a command's arguments name, such as the bare linker script after
    ``-T``: files it reads, so inputs of the action (and of its remote cache key)."""
    return [a for a in argv[1:] if os.path.isabs(a) and Path(a).is_relative_to(DATA_ROOT)
            and Path(a).is_file()]


def _retarget(argv: list[str], out: str) -> list[str]:
    """``argv`` writing ``out.tmp`` instead of ``out``."""
    assert out in argv, f"bug: {out} is not an argument of {argv}"
    return [f"{a}.tmp" if a == out else a for a in argv]
