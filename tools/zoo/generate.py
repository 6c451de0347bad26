"""Write every zoo model to OUTDIR/<name>.onnx (or only the names given)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from dnn64build.atomic_write import write_if_changed  # noqa: E402
from tools.zoo import ALL_NAMES, NAMES, build  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("outdir", type=Path)
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"models to write (default the test zoo: {', '.join(NAMES)}; "
                             f"also: {', '.join(n for n in ALL_NAMES if n not in NAMES)})")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(ALL_NAMES))
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; models: {', '.join(ALL_NAMES)}")
    args.outdir.mkdir(parents=True, exist_ok=True)
    for name in args.names or NAMES:
        path = args.outdir / f"{name}.onnx"
        write_if_changed(path, build(name).SerializeToString())
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
