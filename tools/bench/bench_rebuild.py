"""Benchmark: no-op rebuild and graph generation time of a 20-model workspace.

    python tools/bench/bench_rebuild.py [--models 20] [--repeat 7]

Builds a temporary workspace of tiny models (toolchain: host) once, then times
(median of --repeat runs, each a fresh `dnn64build` process as a user would
start it): the no-op `dnn64build build //...`, a bare `ninja -n` on the same
graph for comparison, and graph regeneration (`dnn64build query //...` after
touching a BUILD.yaml, plus the in-process `generate()` alone). Prints a
markdown table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.build.conftest import ROOT_MANIFEST, tiny_mlp  # noqa: E402


def _timed(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    cli = [sys.executable, "-m", "dnn64build"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "BUILD.yaml").write_text(ROOT_MANIFEST)
        (root / "models").mkdir()
        entries = []
        for i in range(args.models):
            onnx.save(tiny_mlp(seed=i), root / "models" / f"m{i}.onnx")
            entries.append(f"  - {{rule: n64_model, name: m{i}, src: m{i}.onnx}}\n")
        (root / "models" / "BUILD.yaml").write_text("targets:\n" + "".join(entries))
        full = _timed([*cli, "build", "//..."], root)
        noop = [_timed([*cli, "build", "//..."], root) for _ in range(args.repeat)]
        import ninja

        ninja_bin = str(Path(ninja.BIN_DIR) / "ninja")
        ninja_only = [_timed([ninja_bin, "-C", "dnn64-out", "-n"], root)
                      for _ in range(args.repeat)]
        regen = []
        for _ in range(args.repeat):
            os.utime(root / "models" / "BUILD.yaml")
            regen.append(_timed([*cli, "query", "//..."], root))
        from dnn64build.graph.generate import generate

        gen = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            generate(root)
            gen.append(time.perf_counter() - start)
    n_actions = args.models * 7 + 1
    print(f"| measure ({args.models} models, {n_actions} actions, median of {args.repeat}) "
          "| seconds |")
    print("|---|---|")
    print(f"| full build from scratch (once) | {full:.2f} |")
    print(f"| no-op `dnn64build build //...` (whole command) | {statistics.median(noop):.3f} |")
    print(f"| no-op `ninja -n` alone (for scale) | {statistics.median(ninja_only):.3f} |")
    print(f"| `dnn64build query //...` after touching a BUILD.yaml (regenerates) "
          f"| {statistics.median(regen):.3f} |")
    print(f"| graph generation in-process (`generate()`) | {statistics.median(gen):.3f} |")


if __name__ == "__main__":
    main()
