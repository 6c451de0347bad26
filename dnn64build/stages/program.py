"""Program stage: main.c, the program running a ROM's models in order (compiled and linked
by ninja commands, one per toolchain)."""

from __future__ import annotations

import json

from dnn64build.codegen.program import generate_main
from dnn64build.stages.io import StageArgs


def main(args: StageArgs) -> None:
    metas = [json.loads(p.read_text()) for p in args.inputs["metas"]]
    # Headers by name (their directories are -I flags): main.c holds no machine's paths.
    args.write_text("source", generate_main([
        (m["symbol"], h.name, m["arena_bytes"], m)
        for m, h in zip(metas, args.inputs["headers"], strict=True)
    ]))
