"""Build and run generated models natively: the `host` platform, for exact tests.

Compiles the generated C and main.c with the host toolchain (the same flags as a
`host` build), links them with the kernels and the host platform layer (compiled
once and cached), packs the weights and inputs into an asset image
(dnn64build.rom.assets), runs the program and parses its output lines exactly.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dnn64build.codegen.model import GeneratedModel
from dnn64build.codegen.program import generate_main
from dnn64build.emulator.host import run_host
from dnn64build.rom.assets import Asset, build_asset_image
from dnn64build.run_protocol import encode_input, parse_outputs, parse_tickrate, parse_ticks
from dnn64build.toolchains.base import KERNELS_DIR, run
from dnn64build.toolchains.host import HostToolchain

BIG_ENDIAN = sys.byteorder == "big"


@dataclass(frozen=True)
class HostResult:
    """outputs[symbol][output name]; ticks[symbol]: one entry per run (ns on host)."""

    outputs: dict[str, dict[str, np.ndarray]]
    ticks: dict[str, list[int]]
    ticks_per_second: int
    lines: tuple[str, ...]


def runtime_sources(toolchain: HostToolchain) -> list[Path]:
    """The C files every host program links: the kernels and the platform layer."""
    return sorted([*KERNELS_DIR.glob("*.c"), *toolchain.platform_sources()])


def _headers_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(KERNELS_DIR.rglob("*.h")):
        digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()


def _runtime_objects(toolchain: HostToolchain, cache_dir: Path) -> list[Path]:
    """Objects of runtime_sources(), cached by compiler, flags and source contents."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    salt = "\0".join([toolchain.cc, *toolchain.cflags, _headers_digest()]).encode()
    objects = {}
    for source in runtime_sources(toolchain):
        key = hashlib.sha256(salt + source.read_bytes()).hexdigest()[:16]
        objects[source] = cache_dir / f"{source.stem}-{key}.o"

    def build(source: Path) -> None:
        partial = objects[source].with_suffix(f".{os.getpid()}.tmp.o")
        run(toolchain.compile_argv(source, partial, include_dirs=[KERNELS_DIR]))
        partial.replace(objects[source])  # atomic: parallel test runs share the cache

    missing = [source for source, obj in objects.items() if not obj.exists()]
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(build, missing))
    return list(objects.values())


def build_program(models: Sequence[GeneratedModel], workdir: Path, *, sanitize: bool = False,
                  runs: int = 1, poison: bool = False, cache_dir: Path | None = None) -> Path:
    """Write the sources of ``models`` and main.c to ``workdir`` and link a program."""
    workdir.mkdir(parents=True, exist_ok=True)
    toolchain = HostToolchain(sanitize=sanitize)
    objects = _runtime_objects(toolchain, cache_dir or workdir / "runtime")
    entries = [(m.symbol, f"{m.symbol}.h", m.arena_bytes, m.metadata) for m in models]
    (workdir / "main.c").write_text(generate_main(entries, runs=runs, poison=poison))
    for model in models:
        (workdir / f"{model.symbol}.c").write_text(model.c_source)
        (workdir / f"{model.symbol}.h").write_text(model.header)
    for source in [*(workdir / f"{m.symbol}.c" for m in models), workdir / "main.c"]:
        objects.append(source.with_suffix(".o"))
        run(toolchain.compile_argv(source, objects[-1], include_dirs=[KERNELS_DIR, workdir]))
    program = workdir / "program"
    run(toolchain.link_argv(objects, program))
    return program


def asset_image(models: Sequence[tuple[GeneratedModel, Sequence[np.ndarray]]],
                big_endian: bool) -> bytes:
    """The asset image with each model's weights and inputs (in metadata order)."""
    assets = []
    for model, inputs in models:
        meta = model.metadata
        if len(inputs) != len(meta["inputs"]):
            raise ValueError(f"{model.symbol}: {len(inputs)} inputs given, "
                             f"{len(meta['inputs'])} expected")
        assets.append(Asset(meta["weights_asset"], model.weights(big_endian)))
        assets += [Asset(entry["asset"], encode_input(array, entry, big_endian))
                   for entry, array in zip(meta["inputs"], inputs, strict=True)]
    return build_asset_image(assets).data


def run_on_host(models: Sequence[tuple[GeneratedModel, Sequence[np.ndarray]]], workdir: Path,
                *, sanitize: bool = False, runs: int = 1, poison: bool = False,
                cache_dir: Path | None = None, timeout_s: float = 600.0) -> HostResult:
    """Compile, pack and run ``models`` (each with its inputs) natively; parse the outputs.

    Raises UserError when compiling or running fails, ProtocolError when the output
    lines are incomplete or (with several runs) runs disagree.
    """
    program = build_program([m for m, _ in models], workdir, sanitize=sanitize, runs=runs,
                            poison=poison, cache_dir=cache_dir)
    image = workdir / "assets.bin"
    image.write_bytes(asset_image(models, BIG_ENDIAN))
    lines = run_host(program, image, timeout=timeout_s).lines
    outputs = {m.symbol: parse_outputs(lines, m.metadata) for m, _ in models}
    return HostResult(outputs, {m.symbol: parse_ticks(lines, m.symbol) for m, _ in models},
                      parse_tickrate(lines), lines)
