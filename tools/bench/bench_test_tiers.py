"""Benchmark: the test tiers (docs/testing.md): how many tests each holds, and the wall and
CPU time of the unit tier and (with --full) of the whole default tier.

    python tools/bench/bench_test_tiers.py [--full] [--write]

Each run is a fresh `python -m pytest -q -p no:cacheprovider` from the repository root;
CPU time is user + system of it and of every child it waited for (compilers, emulators,
child dnn64build processes), so it stays comparable when other work shares the machine,
unlike the wall time (the load average before and after is printed next to it). With
--write the table replaces the "Test tiers" section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from tests.tool_required import HEAVY_MARKERS, TOOL_MARKERS  # noqa: E402
from tools.bench.benchmarks_doc import write_section  # noqa: E402

PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
HEADING = "## Test tiers"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _count(markexpr: str | None) -> int:
    """Tests the marker expression selects (None: pyproject's default, not slow)."""
    argv = [*PYTEST, "--collect-only", *(["-m", markexpr] if markexpr else [])]
    out = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=True).stdout
    match = re.search(r"^(\d+)(?:/\d+)? tests? collected", out, re.M)
    return int(match[1]) if match else 0


def _timed_run(markexpr: str | None) -> tuple[float, float, str, str]:
    """Wall seconds, CPU seconds, pytest's summary line, the load averages around it."""
    before_load, before_cpu, start = os.getloadavg()[0], _children_cpu(), time.perf_counter()
    argv = [*PYTEST, *(["-m", markexpr] if markexpr else [])]
    proc = subprocess.run([*argv, "-rfEs"], cwd=REPO, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - start, _children_cpu() - before_cpu
    for line in proc.stdout.splitlines():  # what failed or skipped, and why
        if line.startswith(("FAILED", "ERROR", "SKIPPED")):
            print(line, file=sys.stderr)
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr
    return wall, cpu, summary.strip("= "), f"{before_load:.1f} / {os.getloadavg()[0]:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="also time the whole default tier")
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args()

    tiers = [("`-m unit`", "unit"),
             *[(f"`-m '{m} and not slow'`", f"{m} and not slow")
               for m in {**HEAVY_MARKERS, **TOOL_MARKERS}],
             ("default (`not slow`, the README's command)", None), ("`-m slow`", "slow")]
    command = " ".join(["python tools/bench/bench_test_tiers.py", *sys.argv[1:]])
    lines = [HEADING, "",
             f"`{command}` (2 cores shared with other work: compare the CPU seconds, the wall "
             "time follows the load). A test with several markers counts in each.", "",
             "| tier | tests |", "|---|---:|"]
    lines += [f"| {name} | {_count(expr)} |" for name, expr in tiers]
    lines += ["", "| run | wall s | CPU s | load before / after | pytest says |",
              "|---|---:|---:|---|---|"]
    for name, expr in [("`-m unit`", "unit")] + ([("default tier", None)] if args.full else []):
        wall, cpu, summary, load = _timed_run(expr)
        lines.append(f"| {name} | {wall:.1f} | {cpu:.1f} | {load} | {summary} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        write_section(HEADING, text)


if __name__ == "__main__":
    main()
