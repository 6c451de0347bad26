"""Benchmark: builds of a 20-model workspace and of the example workspace; no-op rebuild;
warm remote cache; graph generation; optionally side by side with another revision.

    python tools/bench/bench_rebuild.py [--models 20] [--repeat 7] [--full-repeat 3]
                                        [--baseline REV] [--no-example] [--no-cache]

Builds a temporary workspace of tiny models (toolchain: host) and times (each a fresh
`dnn64build` process as a user would start it): the full build, the no-op
`dnn64build build //...`, a bare `ninja -n` on the same graph for comparison, graph
regeneration; then, where the CLI has `--remote-cache`, a full build that populates an
in-process HTTP cache and the build of a fresh copy at another path from that warm
cache. With the example workspace (this repository's models/ and BUILD.yaml, toolchain
auto), its full build too, and (with a cache) the build of a fresh copy of it from a warm
cache.

With ``--baseline REV`` every measure runs for that revision of this repository (``git
archive`` into a temporary directory) and for this checkout, alternately, so that both
columns see the same load on a shared machine. Each figure is the minimum over its
repetitions: wall-clock seconds, and CPU seconds (user + sys of every process of the
build: the CLI, ninja, the stage worker and its children, the compilers), which a busy
machine inflates far less. CPU time is counted with ``perf stat -e task-clock`` (Debian's
linux-perf; without it only wall-clock times are shown): resource usage as the kernel
reports it to a parent misses the worker, which is not the CLI's child. Both trees get
their bytecode compiled first, as an installed package has it. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import onnx

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from tests.build.cache_servers import FaultyCache  # noqa: E402
from tests.build.conftest import ROOT_MANIFEST, tiny_mlp  # noqa: E402

CLI = [sys.executable, "-m", "dnn64build"]
PERF = shutil.which("perf")


class Timing:
    """Minimum wall-clock and CPU seconds over the runs of one measure on one tree."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def cell(self, digits: int) -> str:
        if not self.wall:
            return "-"
        text = f"{min(self.wall):.{digits}f}"
        return text + (f" ({min(self.cpu):.{digits}f})" if self.cpu else "")


class Tree:
    """A dnn64build source tree the CLI runs from (``PYTHONPATH``)."""

    def __init__(self, name: str, path: Path) -> None:
        self.name = name
        self.path = path
        self.env = {**os.environ, "PYTHONPATH": str(path)}
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(path / "dnn64build"),
                        str(path / "rules")], check=True, stdout=subprocess.DEVNULL)

    def run(self, argv: list[str], cwd: Path, into: Timing) -> None:
        """Run ``argv`` (it must succeed), adding its wall-clock and CPU time to ``into``."""
        if not PERF:
            start = time.perf_counter()
            subprocess.run(argv, cwd=cwd, env=self.env, check=True, capture_output=True)
            into.wall.append(time.perf_counter() - start)
            return
        with tempfile.NamedTemporaryFile("r", suffix=".perf") as stats:
            subprocess.run([PERF, "stat", "-x", ",", "-o", stats.name, "-e",
                            "task-clock,duration_time", "--", *argv], cwd=cwd, env=self.env,
                           check=True, capture_output=True)
            counts = {line.split(",")[2]: float(line.split(",")[0])
                      for line in stats.read().splitlines() if line.count(",") >= 2}
        into.cpu.append(counts["task-clock"] / 1e3)  # milliseconds
        into.wall.append(counts["duration_time"] / 1e9)  # nanoseconds

    def has_remote_cache(self, cwd: Path) -> bool:
        help_text = subprocess.run([*CLI, "build", "--help"], capture_output=True, text=True,
                                   cwd=cwd, env=self.env).stdout
        return "--remote-cache" in help_text


def _tiny_workspace(root: Path, models: int) -> None:
    (root / "models").mkdir(parents=True)
    (root / "BUILD.yaml").write_text(ROOT_MANIFEST)
    entries = []
    for i in range(models):
        onnx.save(tiny_mlp(seed=i), root / "models" / f"m{i}.onnx")
        entries.append(f"  - {{rule: n64_model, name: m{i}, src: m{i}.onnx}}\n")
    (root / "models" / "BUILD.yaml").write_text("targets:\n" + "".join(entries))


def _example_workspace(root: Path) -> None:
    root.mkdir(parents=True)
    shutil.copytree(REPO / "models", root / "models")
    shutil.copy(REPO / "BUILD.yaml", root / "BUILD.yaml")


def _fresh_copy(source: Path, copy: Path) -> Path:
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("dnn64-out"))
    return copy


def _baseline_tree(revision: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", revision],
                             check=True, capture_output=True).stdout
    into.mkdir()
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


class Bench:
    def __init__(self, trees: list[Tree], tmp: Path, args: argparse.Namespace) -> None:
        self.trees = trees
        self.tmp = tmp
        self.args = args
        self.rows: list[tuple[str, list[Timing], int]] = []

    def measure(self, name: str, repeat: int, digits: int,
                once: Callable[[Tree, Path, Timing], None]) -> None:
        """``once(tree, workdir, timing)`` ``repeat`` times per tree, the trees taking turns;
        each tree keeps its own working directory."""
        timings = [Timing() for _ in self.trees]
        for _ in range(repeat):
            for number, (tree, timing) in enumerate(zip(self.trees, timings, strict=True)):
                once(tree, self.tmp / f"tree{number}", timing)
        self.rows.append((name, timings, digits))

    def table(self) -> str:
        header = " | ".join(t.name for t in self.trees)
        lines = [f"| measure ({self.args.models} tiny models, toolchain host, unless said; "
                 f"{os.cpu_count()} cores) | {header} |",
                 "|---|" + "---|" * len(self.trees)]
        for name, timings, digits in self.rows:
            lines.append(f"| {name} | " + " | ".join(t.cell(digits) for t in timings) + " |")
        return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=7, help="runs of each quick measure")
    parser.add_argument("--full-repeat", type=int, default=3, help="runs of each full build")
    parser.add_argument("--baseline", metavar="REV",
                        help="also measure this git revision, side by side")
    parser.add_argument("--no-example", action="store_true")
    parser.add_argument("--no-cache", action="store_true", help="skip the remote cache runs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        trees = [Tree("this checkout", REPO)]
        if args.baseline:
            trees.insert(0, Tree(args.baseline, _baseline_tree(args.baseline, tmp / "base")))
        source = tmp / "source"
        _tiny_workspace(source, args.models)
        bench = Bench(trees, tmp, args)
        load = os.getloadavg()[0]

        def full_build(tree: Tree, work: Path, timing: Timing) -> None:
            tree.run([*CLI, "build", "//..."], _fresh_copy(source, work / "ws"), timing)

        bench.measure("full build from scratch", args.full_repeat, 2, full_build)
        bench.measure("no-op `dnn64build build //...` (whole command)", args.repeat, 3,
                      lambda tree, work, timing: tree.run([*CLI, "build", "//..."],
                                                          work / "ws", timing))
        import ninja

        ninja_bin = str(Path(ninja.BIN_DIR) / "ninja")
        bench.measure("no-op `ninja -n` alone (for scale)", args.repeat, 3,
                      lambda tree, work, timing: tree.run([ninja_bin, "-C", "dnn64-out", "-n"],
                                                          work / "ws", timing))

        def regenerate(tree: Tree, work: Path, timing: Timing) -> None:
            os.utime(work / "ws" / "models" / "BUILD.yaml")
            tree.run([*CLI, "query", "//..."], work / "ws", timing)

        bench.measure("`dnn64build query //...` after touching a BUILD.yaml (regenerates)",
                      args.repeat, 3, regenerate)
        if not args.no_cache and all(t.has_remote_cache(source) for t in trees):
            with contextlib.ExitStack() as stack:
                # A cache per tree: the trees share many action keys (the same compiler
                # commands), and one's results must not make the other's build faster.
                remote = {tree.name: [*CLI, "build", "--remote-cache",
                                      stack.enter_context(FaultyCache()).url, "//..."]
                          for tree in trees}
                bench.measure("full build that populates the remote cache", 1, 2,
                              lambda tree, work, timing: tree.run(
                                  remote[tree.name], _fresh_copy(source, work / "populate"),
                                  timing))
                bench.measure("fresh checkout at another path, warm cache", 1, 2,
                              lambda tree, work, timing: tree.run(
                                  remote[tree.name],
                                  _fresh_copy(source, work / "elsewhere" / "ws"), timing))
        if not args.no_example:
            example = tmp / "example"
            _example_workspace(example)
            bench.measure("full build of the example workspace (toolchain auto)", 1, 2,
                          lambda tree, work, timing: tree.run(
                              [*CLI, "build", "//..."], _fresh_copy(example, work / "example"),
                              timing))
        print(f"Load average (1 min) before: {load:.2f}, after: {os.getloadavg()[0]:.2f}. "
              "Seconds, minimum over the runs"
              + (", CPU seconds (user+sys, every process) in parentheses" if PERF else "")
              + ".\n")
        print(bench.table())


if __name__ == "__main__":
    main()
