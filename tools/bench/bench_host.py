"""Host inference time and weight bytes streamed per inference of every zoo model.

    python -m tools.bench.bench_host [--models a,b] [--runs N] [--int8]

Each model goes through the real pipeline (import, optimise, plan, codegen), is
built natively with -O2 and run ``--runs`` times; the table shows the best run's
milliseconds (dnn64_ticks on the host: nanoseconds), the weight bytes read from
the asset area per inference, the staging size and the arena (plan + staging),
and the worst scaled error against onnxruntime. ``--int8`` quantises each model first
(synthetic calibration) and reports the error against the fp32 onnxruntime output
(quantisation error, not a codegen check: tests/codegen holds int8 to run_int8 exactly).
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import onnx

from dnn64build.codegen.model import generate_model
from dnn64build.frontend import import_onnx
from dnn64build.passes import optimize
from dnn64build.planner.graph_plan import plan_graph
from dnn64build.quant import quantize_graph
from tools.host_run import run_on_host
from tools.zoo import NAMES, build
from tools.zoo.compare import random_inputs, run_onnxruntime, scaled_error

COLUMNS = ("model", "host ms", "weights streamed (bytes)", "weight tiles", "staging (bytes)",
           "arena (bytes)", "max scaled error vs ORT")


def bench(name: str, workdir: Path, runs: int, int8: bool) -> tuple:
    model = build(name)
    path = workdir / f"{name}.onnx"
    onnx.save(model, path)
    graph = optimize(import_onnx(path))
    if int8:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # synthetic calibration: expected here
            graph = quantize_graph(graph, None, synthetic=True)[0]
    plan = plan_graph(graph)
    generated = generate_model(graph, plan, symbol=name)
    inputs = random_inputs(graph)
    result = run_on_host([(generated, [inputs[n] for n in graph.inputs])], workdir / name,
                         runs=runs, cache_dir=workdir / "runtime")
    expected = run_onnxruntime(model, inputs)
    error = max(scaled_error(expected[n], result.outputs[name][n]) for n in graph.outputs)
    ms = min(result.ticks[name]) * 1000 / result.ticks_per_second
    meta = generated.metadata
    return (name, f"{ms:.3f}", meta["weight_bytes_streamed"], meta["weight_tiles"],
            meta["staging_bytes"], meta["arena_bytes"], f"{error:.1e}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(NAMES))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--int8", action="store_true", help="quantise to int8 first")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            started = time.monotonic()
            rows.append(bench(name, Path(tmp), args.runs, args.int8))
            print(f"# {name}: {time.monotonic() - started:.0f} s wall", flush=True)
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS))
    for row in rows:
        print("| " + " | ".join(str(v) for v in row) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
