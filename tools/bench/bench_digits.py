"""Benchmark: //models:digits test accuracy, fp32 and int8, on the host and on the ROM.

    python tools/bench/bench_digits.py

Runs `dnn64build test` (which also checks every output against the reference
executor) for both targets on both platforms in this workspace, and prints a
markdown table of top-1 accuracy on the 540-image test split.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGETS = {"//models:digits_fp32": "fp32", "//models:digits": "int8"}


def main() -> None:
    rows = []
    for platform in ("host", "emulator"):
        proc = subprocess.run(
            [sys.executable, "-m", "dnn64build", "test", *TARGETS, "--platform", platform],
            cwd=ROOT, capture_output=True, text=True, check=True,
        )
        for line in proc.stdout.splitlines():
            m = re.match(r"(PASSED|FAILED) (\S+) \(\w+\): (.*); top-1 accuracy ([\d.]+%)", line)
            if m:
                rows.append((TARGETS[m[2]], platform, m[4], m[3]))
    print("| model | platform | top-1 accuracy (540 test images) | outputs vs reference |")
    print("|---|---|---|---|")
    for mode, platform, accuracy, check in sorted(rows):
        print(f"| digits {mode} | {platform} | {accuracy} | {check} |")


if __name__ == "__main__":
    main()
