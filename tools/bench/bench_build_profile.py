"""Benchmark: where a full build's CPU time goes, by kind of process.

    python tools/bench/bench_build_profile.py [--models 20]

Builds the 20-tiny-model workspace of bench_rebuild.py once under ``perf record -e
task-clock`` (Debian's linux-perf) and sorts the samples by process: the CLI, the
per-action clients (Python started by ninja's shell), the stage worker, the worker's
children (one fork per stage request), and every other program by its name (cc1, ld,
as, sh, ninja...). Set PYTHONPATH to measure another checkout. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_rebuild import CLI, _tiny_workspace  # noqa: E402

FREQUENCY = 2000  # samples per CPU second
_FORK = re.compile(r"PERF_RECORD_FORK\((\d+):(\d+)\):\((\d+):(\d+)\)")
_EXEC = re.compile(r"PERF_RECORD_COMM exec: (\S+):(\d+)/")
_SAMPLE = re.compile(r"\s*(\S+)\s+(\d+)/\d+\s+task-clock")


def kinds_of(script: str) -> dict[str, tuple[int, int]]:
    """``perf script --show-task-events`` text -> kind -> (processes, samples)."""
    parent: dict[int, int] = {}
    programs: dict[int, list[str]] = collections.defaultdict(list)  # what each pid exec'd
    samples: collections.Counter[tuple[int, str]] = collections.Counter()
    for line in script.splitlines():
        if m := _FORK.search(line):
            if m[1] == m[2]:  # a new process, not a thread
                parent[int(m[1])] = int(m[3])
        elif m := _EXEC.search(line):
            programs[int(m[2])].append(m[1])
        elif m := _SAMPLE.match(line):
            samples[(int(m[2]), m[1])] += 1

    def last_program(pid: int | None) -> str | None:
        return programs[pid][-1] if pid in programs and programs[pid] else None

    root = next(iter(programs), 0)  # the first program perf started: the CLI

    def kind(pid: int, comm: str) -> str:
        if comm != "python":
            return comm
        up = parent.get(pid)
        if pid not in programs:  # forked, never exec'd: one of the worker's children
            return "worker child (a stage)"
        if last_program(up) == "sh":
            return "client (one per action)"
        if last_program(up) == "python" and last_program(parent.get(up)) == "sh":
            return "stage worker"
        return "dnn64build CLI" if pid == root or up == root else "other python"

    processes: dict[str, set[int]] = collections.defaultdict(set)
    counts: collections.Counter[str] = collections.Counter()
    for (pid, comm), n in samples.items():
        processes[kind(pid, comm)].add(pid)
        counts[kind(pid, comm)] += n
    return {k: (len(processes[k]), n) for k, n in counts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        _tiny_workspace(root, args.models)
        data = Path(tmp) / "perf.data"
        subprocess.run(["perf", "record", "-q", "-e", "task-clock", "-F", str(FREQUENCY),
                        "-o", str(data), "--", *CLI, "build", "//..."],
                       cwd=root, check=True, capture_output=True)
        script = subprocess.run(["perf", "script", "-i", str(data), "--show-task-events",
                                 "-F", "comm,pid,tid,event"], check=True,
                                capture_output=True, text=True).stdout
    kinds = kinds_of(script)
    total = sum(n for _, n in kinds.values())
    print(f"Load average (1 min): {os.getloadavg()[0]:.2f}; CPU seconds of one full build "
          f"({args.models} tiny models): {total / FREQUENCY:.2f}\n")
    print("| process | processes | CPU s | share | CPU ms per process |")
    print("|---|---|---|---|---|")
    for name, (count, n) in sorted(kinds.items(), key=lambda item: -item[1][1]):
        if n * 200 < total:  # under 0.5 %
            continue
        print(f"| {name} | {count} | {n / FREQUENCY:.2f} | {100 * n / total:.0f} % | "
              f"{1000 * n / FREQUENCY / count:.1f} |")


if __name__ == "__main__":
    main()
