"""Measure the bare toolchain's runtime objects for the plan stage's program-size estimate.

Compiles every kernel source (kernels/*.c, linked from the libdnn64.a archive, so a
program links only the objects it references) and the bare platform layer (always
linked) with the bare toolchain's own flags, and writes
dnn64build/codegen/kernel_sizes.json:

- ``platform_bytes``: the platform objects' allocated bytes (.text, .rodata, .data, .bss);
- ``kernels``: per kernel object its bytes, the functions it defines and the kernel
  objects it calls into (what the linker pulls from the archive with it).

Rerun it when the kernels or the cross compiler change; tests/codegen/test_program_size.py
fails when the table is below the objects the toolchain builds now.

    python tools/kernel_sizes.py
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dnn64build.codegen.program_size import KERNEL_SIZES_PATH  # noqa: E402
from dnn64build.toolchains.bare import BareToolchain  # noqa: E402
from dnn64build.toolchains.base import KERNELS_DIR, run  # noqa: E402
from dnn64build.toolchains.elf import program_size  # noqa: E402


def object_bytes(obj: Path) -> int:
    size = program_size(obj)
    return size.text + size.rodata + size.data + size.bss


def symbols(toolchain: BareToolchain, obj: Path) -> tuple[set[str], set[str]]:
    """(global functions and data defined, symbols left undefined) of an object."""
    table = subprocess.run([toolchain.objdump, "-t", str(obj)], capture_output=True,
                           text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in table.splitlines():
        fields = line.split()
        if len(fields) < 4 or not fields[-1].startswith("dnn64"):
            continue
        if "*UND*" in fields:
            undefined.add(fields[-1])
        elif " g " in line:
            defined.add(fields[-1])
    return defined, undefined


def measure(workdir: Path) -> dict:
    toolchain = BareToolchain()
    includes = [KERNELS_DIR]

    def compile_all(sources: list[Path]) -> dict[str, Path]:
        objects = {}
        for source in sources:
            obj = workdir / f"{source.name}.o"
            run(toolchain.compile_argv(source, obj, include_dirs=includes))
            objects[source.stem] = obj
        return objects

    platform = compile_all(toolchain.platform_sources())
    kernels = compile_all(sorted(KERNELS_DIR.glob("*.c")))
    tables = {name: symbols(toolchain, obj) for name, obj in kernels.items()}
    owner = {fn: name for name, (defined, _) in tables.items() for fn in defined}
    return {
        "toolchain": "bare",
        "compiler": subprocess.run([toolchain.cc, "-dumpversion"], capture_output=True,
                                   text=True, check=True).stdout.strip(),
        "platform_bytes": sum(object_bytes(obj) for obj in platform.values()),
        "kernels": {
            name: {
                "bytes": object_bytes(kernels[name]),
                "defines": sorted(defined),
                "needs": sorted({owner[s] for s in undefined if s in owner} - {name}),
            }
            for name, (defined, undefined) in sorted(tables.items())
        },
    }


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    with tempfile.TemporaryDirectory(prefix="kernel_sizes") as tmp:
        table = measure(Path(tmp))
    KERNEL_SIZES_PATH.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"wrote {KERNEL_SIZES_PATH}: platform {table['platform_bytes']} bytes, "
          f"{len(table['kernels'])} kernel objects")


if __name__ == "__main__":
    main()
