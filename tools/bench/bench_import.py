"""Time ONNX import, optimisation and IR save for zoo models; print a markdown table.

Usage: python tools/bench/bench_import.py [--repeat N] [NAME ...]   (default: resnet50,
the largest zoo model). Prints the table; copy it into docs/benchmarks.md by hand.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import onnx  # noqa: E402

from dnn64build.frontend import import_onnx  # noqa: E402
from dnn64build.ir import save_graph  # noqa: E402
from dnn64build.passes import optimize  # noqa: E402
from tools.zoo import NAMES, build  # noqa: E402


def _median_seconds(action, repeat: int):
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def bench(name: str, workdir: Path, repeat: int) -> str:
    model = build(name)
    path = workdir / f"{name}.onnx"
    onnx.save(model, path)
    weights_mb = sum(len(t.raw_data) for t in model.graph.initializer) / 2**20
    onnx_nodes = len(model.graph.node)
    del model  # time the import alone, not next to a second copy of the weights
    t_import, graph = _median_seconds(lambda: import_onnx(path), repeat)
    t_opt, optimised = _median_seconds(lambda: optimize(graph), repeat)
    t_save, _ = _median_seconds(
        lambda: save_graph(optimised, workdir / f"{name}.json", workdir / f"{name}.npz"), repeat)
    return (f"| {name} | {weights_mb:.1f} | {onnx_nodes} | {len(optimised.nodes)} | "
            f"{t_import:.3f} | {t_opt:.3f} | {t_save:.3f} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("names", nargs="*", default=["resnet50"], metavar="NAME",
                        help=f"zoo models ({', '.join(NAMES)})")
    parser.add_argument("--repeat", type=int, default=3, help="runs per step (median kept)")
    args = parser.parse_args(argv)
    print("| model | weights MiB | ONNX nodes | IR nodes (optimised) | import s | optimize s "
          "| save s |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.names:
            print(bench(name, Path(tmp), args.repeat), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
