"""Build and run generated models natively: the `host` platform, for exact tests.

Compiles the generated C, main.c, the kernels and the host platform layer with
the system C compiler (C99, -Wall -Wextra -Werror), packs the weights and inputs
into an asset image (dnn64build.rom.assets), runs the program with
$DNN64_ASSETS pointing at it and parses its output lines exactly.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dnn64build import TOOL_ROOT
from dnn64build.codegen.model import GeneratedModel
from dnn64build.codegen.program import generate_main
from dnn64build.codegen.protocol import (
    DONE_LINE,
    ProtocolError,
    encode_input,
    parse_outputs,
    parse_tickrate,
    parse_ticks,
)
from dnn64build.rom.assets import Asset, build_asset_image

KERNELS_DIR = TOOL_ROOT / "kernels"
PLATFORM_DIR = KERNELS_DIR / "platform"
CFLAGS = ("-std=c99", "-O2", "-Wall", "-Wextra", "-Werror")
SANITIZE_FLAGS = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                  "-fno-omit-frame-pointer", "-g")
BIG_ENDIAN = sys.byteorder == "big"


@dataclass(frozen=True)
class HostResult:
    """outputs[symbol][output name]; ticks[symbol]: one entry per run (ns on host)."""

    outputs: dict[str, dict[str, np.ndarray]]
    ticks: dict[str, list[int]]
    ticks_per_second: int
    lines: tuple[str, ...]


def runtime_sources() -> list[Path]:
    """The C files every host program links: kernels + portable and host platform."""
    return sorted([*KERNELS_DIR.glob("*.c"), *PLATFORM_DIR.glob("*.c"),
                   *(PLATFORM_DIR / "host").glob("*.c")])


def _headers_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted([*KERNELS_DIR.rglob("*.h")]):
        digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()


def _compile(cc: str, flags: Sequence[str], source: Path, obj: Path) -> None:
    command = [cc, *flags, f"-I{KERNELS_DIR}", f"-I{PLATFORM_DIR}", "-c", str(source),
               "-o", str(obj)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"compiling {source.name} failed:\n{' '.join(command)}\n"
                           f"{result.stderr}")


def _runtime_objects(cc: str, flags: Sequence[str], cache_dir: Path) -> list[Path]:
    """Objects of runtime_sources(), cached by compiler, flags and source contents."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    salt = "\0".join([cc, *flags, _headers_digest()]).encode()
    objects = {}
    for source in runtime_sources():
        key = hashlib.sha256(salt + source.read_bytes()).hexdigest()[:16]
        objects[source] = cache_dir / f"{source.stem}-{key}.o"

    def build(source: Path) -> None:
        partial = objects[source].with_suffix(f".{os.getpid()}.tmp.o")
        _compile(cc, flags, source, partial)
        partial.replace(objects[source])  # atomic: parallel test runs share the cache

    missing = [source for source, obj in objects.items() if not obj.exists()]
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(build, missing))
    return list(objects.values())


def build_program(models: Sequence[GeneratedModel], workdir: Path, *, cc: str = "cc",
                  sanitize: bool = False, runs: int = 1, poison: bool = False,
                  cache_dir: Path | None = None) -> Path:
    """Write the sources of ``models`` and main.c to ``workdir`` and link a program."""
    workdir.mkdir(parents=True, exist_ok=True)
    flags = [*CFLAGS, *(SANITIZE_FLAGS if sanitize else ())]
    objects = _runtime_objects(cc, flags, cache_dir or workdir / "runtime")
    for model in models:
        (workdir / f"{model.symbol}.c").write_text(model.c_source)
        (workdir / f"{model.symbol}.h").write_text(model.header)
        objects.append(workdir / f"{model.symbol}.o")
        _compile(cc, flags, workdir / f"{model.symbol}.c", objects[-1])
    entries = [(m.symbol, f"{m.symbol}.h", m.arena_bytes, m.metadata) for m in models]
    (workdir / "main.c").write_text(generate_main(entries, runs=runs, poison=poison))
    objects.append(workdir / "main.o")
    _compile(cc, [*flags, f"-I{workdir}"], workdir / "main.c", objects[-1])
    program = workdir / "program"
    link = [cc, *flags, *map(str, objects), "-o", str(program)]
    result = subprocess.run(link, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"linking failed:\n{' '.join(link)}\n{result.stderr}")
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
                *, cc: str = "cc", sanitize: bool = False, runs: int = 1, poison: bool = False,
                cache_dir: Path | None = None, timeout_s: float = 600.0) -> HostResult:
    """Compile, pack and run ``models`` (each with its inputs) natively; parse the outputs.

    Raises RuntimeError when compiling or running fails, ProtocolError when the
    output lines are incomplete or (with several runs) runs disagree.
    """
    program = build_program([m for m, _ in models], workdir, cc=cc, sanitize=sanitize,
                            runs=runs, poison=poison, cache_dir=cache_dir)
    image = workdir / "assets.bin"
    image.write_bytes(asset_image(models, BIG_ENDIAN))
    env = {**os.environ, "DNN64_ASSETS": str(image)}
    result = subprocess.run([str(program)], capture_output=True, text=True, env=env,
                            timeout=timeout_s, check=False)
    lines = tuple(result.stdout.splitlines())
    if result.returncode != 0 or DONE_LINE not in lines:
        raise RuntimeError(f"{program} exited with {result.returncode}:\n"
                           f"{result.stdout[-2000:]}\n{result.stderr[-4000:]}")
    try:
        outputs = {m.symbol: parse_outputs(lines, m.metadata) for m, _ in models}
    except ProtocolError as exc:
        raise ProtocolError(f"{exc}\n{result.stderr[-2000:]}") from exc
    return HostResult(outputs, {m.symbol: parse_ticks(lines, m.symbol) for m, _ in models},
                      parse_tickrate(lines), lines)
