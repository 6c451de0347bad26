"""Build a test program directly (no ninja) with a toolchain's own argv lists."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from dnn64build.toolchains.base import Defines, Toolchain, run


def compile_and_link(
    toolchain: Toolchain,
    sources: Sequence[Path],
    include_dirs: Sequence[Path],
    out: Path,
    defines: Defines | None = None,
    libraries: Sequence[Path] = (),
) -> Path:
    """Compile ``sources`` + the platform layer and link them (and ``libraries``, static
    libraries searched after them) into ``out``."""
    out = Path(out)
    objdir = out.parent / f"{out.name}.objs"
    objdir.mkdir(parents=True, exist_ok=True)
    all_sources = [Path(s) for s in sources] + toolchain.platform_sources()
    objects = []
    for i, source in enumerate(all_sources):
        obj = objdir / f"{i:03d}_{source.name}.o"
        run(toolchain.compile_argv(source, obj, include_dirs=include_dirs, defines=defines))
        objects.append(obj)
    run(toolchain.link_argv([*objects, *map(Path, libraries)], out))
    for argv in toolchain.finish_argvs(out):
        run(argv)
    return out
