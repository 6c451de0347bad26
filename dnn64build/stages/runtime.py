"""Runtime stage: the portable C kernels -> one static library per toolchain, shared by
every model built with it."""

from __future__ import annotations

import tempfile
from pathlib import Path

from dnn64build.stages.io import StageArgs
from dnn64build.toolchains import find_toolchain
from dnn64build.toolchains.base import KERNELS_DIR, run


def kernel_sources() -> list[Path]:
    return sorted(KERNELS_DIR.glob("*.c"))


def main(args: StageArgs) -> None:
    toolchain = find_toolchain(args.config["toolchain"])
    out = args.outputs["library"]
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".runtime") as tmp:
        objects = []
        for source in kernel_sources():
            obj = Path(tmp) / f"{source.stem}.o"
            run(toolchain.compile_argv(source, obj, include_dirs=[KERNELS_DIR]))
            objects.append(obj)
        library = Path(tmp) / out.name
        run(toolchain.archive_argv(objects, library))
        args.write("library", library.read_bytes())
