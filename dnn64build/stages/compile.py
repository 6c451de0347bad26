"""Compile stage: one model's generated C -> an object file for one toolchain."""

from __future__ import annotations

import tempfile
from pathlib import Path

from dnn64build.stages.io import StageArgs
from dnn64build.toolchains import find_toolchain
from dnn64build.toolchains.base import KERNELS_DIR, run


def main(args: StageArgs) -> None:
    toolchain = find_toolchain(args.config["toolchain"])
    source = args.input("source")
    out = args.outputs["object"]
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".compile") as tmp:
        obj = Path(tmp) / out.name
        run(toolchain.compile_argv(source, obj, include_dirs=[KERNELS_DIR, source.parent]))
        args.write("object", obj.read_bytes())
