"""The onnx package's backend test data through dnn64build on the host: a markdown table.

Usage: python tools/bench/bench_onnx_backend.py [--folders light,simple,...] [--failures]

Every case of onnx/backend/test/data/{light,simple,pytorch-converted,pytorch-operator} is
built as an fp32 host model and run once (tools/onnx_backend.py); each is classified pass,
wrong, refused (its one message) or internal error. Prints a table per case (``--failures``:
only the cases that do not pass) and the counts per folder; copy them into
docs/benchmarks.md by hand.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tools.onnx_backend import FOLDERS, STATUSES, backend_cases, classify  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folders", default=",".join(FOLDERS))
    parser.add_argument("--failures", action="store_true", help="list only cases not passing")
    args = parser.parse_args(argv)
    folders = args.folders.split(",")
    cases = [case for case in backend_cases() if case.folder in folders]
    with tempfile.TemporaryDirectory(prefix="onnx-backend-") as tmp:
        outcomes = classify(cases, Path(tmp))
    print("| case | outcome | detail |\n|---|---|---|")
    for key, outcome in outcomes.items():
        if outcome.status != "pass" or not args.failures:
            detail = outcome.detail.splitlines()[0] if outcome.detail else ""
            print(f"| {key} | {outcome.status} | {detail.replace('|', '/')} |")
    print("\n| folder | cases | " + " | ".join(STATUSES) + " |")
    print("|---|---|" + "---|" * len(STATUSES))
    for folder in [*folders, "all"]:
        counts = Counter(o.status for k, o in outcomes.items()
                         if folder == "all" or k.startswith(folder + "/"))
        print(f"| {folder} | {sum(counts.values())} | "
              + " | ".join(str(counts[s]) for s in STATUSES) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
