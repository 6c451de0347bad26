"""Benchmark: builds of a 20-model workspace and of the example workspace; no-op rebuild;
warm remote cache; graph generation.

    python tools/bench/bench_rebuild.py [--models 20] [--repeat 7] [--no-example]

Builds a temporary workspace of tiny models (toolchain: host) and times (each a fresh
`dnn64build` process as a user would start it): the full build, the no-op
`dnn64build build //...` (median of --repeat), a bare `ninja -n` on the same graph for
comparison, graph regeneration; then, where the CLI has `--remote-cache`, a full build
that populates an in-process HTTP cache and the build of a fresh copy at another path
from that warm cache. With the example workspace (this repository's models/ and
BUILD.yaml, toolchain auto), its full build too, and (with a cache) the build of a fresh
copy of it from a warm cache. Run it with PYTHONPATH pointing at
another checkout to measure that one ("before"). Prints a markdown table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import onnx

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from tests.build.cache_servers import FaultyCache  # noqa: E402
from tests.build.conftest import ROOT_MANIFEST, tiny_mlp  # noqa: E402

CLI = [sys.executable, "-m", "dnn64build"]


def _timed(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def _has_remote_cache(cwd: Path) -> bool:
    """Whether the dnn64build being measured (PYTHONPATH, not this checkout) has a cache."""
    help_text = subprocess.run([*CLI, "build", "--help"], capture_output=True, text=True,
                               cwd=cwd).stdout
    return "--remote-cache" in help_text


def _tiny_workspace(root: Path, models: int) -> None:
    (root / "models").mkdir(parents=True)
    (root / "BUILD.yaml").write_text(ROOT_MANIFEST)
    entries = []
    for i in range(models):
        onnx.save(tiny_mlp(seed=i), root / "models" / f"m{i}.onnx")
        entries.append(f"  - {{rule: n64_model, name: m{i}, src: m{i}.onnx}}\n")
    (root / "models" / "BUILD.yaml").write_text("targets:\n" + "".join(entries))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--no-example", action="store_true")
    args = parser.parse_args()
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        _tiny_workspace(root, args.models)
        rows.append(("full build from scratch, 20 tiny models (once)",
                     f"{_timed([*CLI, 'build', '//...'], root):.2f}"))
        noop = [_timed([*CLI, "build", "//..."], root) for _ in range(args.repeat)]
        rows.append(("no-op `dnn64build build //...` (whole command, median)",
                     f"{statistics.median(noop):.3f}"))
        import ninja

        ninja_bin = str(Path(ninja.BIN_DIR) / "ninja")
        ninja_only = [_timed([ninja_bin, "-C", "dnn64-out", "-n"], root)
                      for _ in range(args.repeat)]
        rows.append(("no-op `ninja -n` alone (for scale, median)",
                     f"{statistics.median(ninja_only):.3f}"))
        regen = []
        for _ in range(args.repeat):
            os.utime(root / "models" / "BUILD.yaml")
            regen.append(_timed([*CLI, "query", "//..."], root))
        rows.append(("`dnn64build query //...` after touching a BUILD.yaml (regenerates)",
                     f"{statistics.median(regen):.3f}"))
        if _has_remote_cache(root):
            with FaultyCache() as cache:
                populate = Path(tmp) / "populate"
                shutil.copytree(root, populate, ignore=shutil.ignore_patterns("dnn64-out"))
                seconds = _timed([*CLI, "build", "--remote-cache", cache.url, "//..."], populate)
                rows.append(("full build that populates the remote cache (once)",
                             f"{seconds:.2f}"))
                fresh = Path(tmp) / "elsewhere" / "fresh"
                shutil.copytree(root, fresh, ignore=shutil.ignore_patterns("dnn64-out"))
                seconds = _timed([*CLI, "build", "--remote-cache", cache.url, "//..."], fresh)
                rows.append(("fresh checkout at another path, warm cache (once)",
                             f"{seconds:.2f}"))
        if not args.no_example:
            example = Path(tmp) / "example"
            example.mkdir()
            shutil.copytree(REPO / "models", example / "models")
            shutil.copy(REPO / "BUILD.yaml", example / "BUILD.yaml")
            rows.append(("full build of the example workspace (toolchain auto, once)",
                         f"{_timed([*CLI, 'build', '//...'], example):.2f}"))
            if _has_remote_cache(root):
                with FaultyCache() as cache:
                    _timed([*CLI, "build", "--remote-cache", cache.url, "//..."], example)
                    fresh = Path(tmp) / "elsewhere" / "example"
                    shutil.copytree(example, fresh, ignore=shutil.ignore_patterns("dnn64-out"))
                    seconds = _timed([*CLI, "build", "--remote-cache", cache.url, "//..."],
                                     fresh)
                rows.append(("example workspace: fresh checkout at another path, warm cache "
                             "(once)", f"{seconds:.2f}"))
    print(f"| measure ({args.models} tiny models, toolchain host; {os.cpu_count()} cores) "
          "| seconds |")
    print("|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()
