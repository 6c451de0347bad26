"""Footprint: the smallest memory each model plans in with the default planner settings,
and what it is made of.

For each model (a zoo architecture at an input resolution, int8 from synthetic
calibration, ``toolchain: bare``, ``kernels`` as given: ``auto``, the default on bare, links
the RSP kernels' objects besides the CPU ones) the script runs the plan stage's search with memory 0
(``stages.plan.fit_search``: every option planned), whose least needs is the smallest
memory the tool reaches: the search is monotonic in the memory (planner/fusion/ladder.py), so
this is what a bisection over ``memory:`` finds. It then checks that as a user would:
``plan_model`` at that memory plans (the plan passes the independent checker) and one
byte less is refused. Columns:

- smallest: the least ``memory:`` that plans (low memory 1 KiB + arena + weight staging
  + program estimate + stack 64 KiB, fit.needed_bytes), and its parts;
- extra MACs: what the plan recomputes (patch halos), in % of the model's MACs;
- option: the option of the smallest plan (ladder.Option);
- plan time: the search over every option (seconds, this machine).

Weight bytes re-read from the cartridge per inference (dag groups) are not counted yet.

    python tools/bench/bench_footprint.py [--models mobilenetv2:224 ...] [--kernels cpu]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from dnn64build.errors import UserError  # noqa: E402
from dnn64build.frontend import import_onnx  # noqa: E402
from dnn64build.ir import Graph  # noqa: E402
from dnn64build.passes import optimize  # noqa: E402
from dnn64build.planner.checker import check_plan  # noqa: E402
from dnn64build.planner.fit import LOW_MEMORY_BYTES, STACK_BYTES  # noqa: E402
from dnn64build.quant import quantize_graph  # noqa: E402
from dnn64build.stages.plan import fit_search, plan_model  # noqa: E402
from tools.zoo import build  # noqa: E402

MODELS = ("mobilenetv2:224", "resnet18:224", "mobilenetv2:512")


def load(name: str, size: int) -> Graph:
    """Zoo model ``name`` with a ``size`` x ``size`` input, int8 (synthetic calibration)."""
    model = build(name)
    for axis in (2, 3):
        model.graph.input[0].type.tensor_type.shape.dim[axis].dim_value = size
    del model.graph.value_info[:]  # the shapes inferred for the zoo's own size
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.onnx"
        onnx.save(model, path)
        graph = optimize(import_onnx(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # synthetic calibration warns
        return quantize_graph(graph, None, synthetic=True)[0]


def row(spec: str, kernels: str) -> str:
    name, size = spec.split(":")
    graph = load(name, int(size))
    config = {"label": spec, "memory": 0, "kernels": kernels, "toolchain": "bare"}
    start = time.perf_counter()
    found = fit_search(graph, config)
    seconds = time.perf_counter() - start
    smallest = found.smallest
    needs = min(t.needs for t in found.tried if t.needs is not None)
    option = next(t.option for t in found.tried if t.needs == needs)
    plan = plan_model(graph, {**config, "memory": needs})
    if check_plan(plan) is not None:
        raise SystemExit(f"{spec}: the plan fails the checker: {check_plan(plan)}")
    try:
        plan_model(graph, {**config, "memory": needs - 1})
        raise SystemExit(f"{spec}: planned in {needs - 1} bytes, below the search's smallest")
    except UserError:
        pass
    share = smallest["extra_macs"] / max(smallest["fusion"]["model_macs"], 1)
    return (f"| {name} | {size}x{size} | {kernels} | {needs:,} | {smallest['arena_bytes']:,} "
            f"| {smallest['staging']['bytes']:,} | {smallest['program']['estimate_bytes']:,} "
            f"| {LOW_MEMORY_BYTES + STACK_BYTES:,} | {share:.1%} | {option.describe()} "
            f"| {seconds:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=list(MODELS),
                        help="zoo name:resolution")
    parser.add_argument("--kernels", default="auto", choices=("cpu", "auto", "rsp"))
    args = parser.parse_args()
    print("| model | input | kernels | smallest memory (B) | arena | weight staging "
          "| program estimate | stack + low | extra MACs | option | plan time (s) |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|")
    for spec in args.models:
        print(row(spec, args.kernels), flush=True)


if __name__ == "__main__":
    main()
