"""Memory of the sixteen benchmark architectures, fp32 and int8, through `dnn64build plan`.

For every model of tools.zoo.BENCHMARK_NAMES the script writes a throw-away workspace
(one n64_model per model, mode and planner setting; int8 calibrated on synthetic inputs)
and runs the real CLI, ``dnn64build plan //:<target> --json``, exactly as a user would:
first for the memory the mode must fit (``memory: 4MiB`` fp32, ``2MiB`` int8, so ``auto``
weighs the memory as it does for a user), and only where that plan is refused, again for
``memory: 512MiB`` to have the figures of a model that does not fit. Each plan is verified
by the independent plan checker. Columns:

- op bound: ``op_bound_bytes``, the whole-tensor (operator-level) bound;
- peak: ``arena_bytes`` of the chosen plan (activations only);
- extra MACs: ``extra_macs`` of the plan (0 where nothing is recomputed), in % of the
  model's MACs (Conv, ConvTranspose, Gemm, MatMul);
- needs: what the plan stage checks against the target: low memory, arena, weight
  staging, the program estimate and the stack (dnn64build.planner.fit.needed_bytes), at
  the minimum staging (``staging_bytes: auto`` grows it only into memory left free, so
  the grown figure would say "fills the target", not "needs");
- fits: needs <= 4 MiB (fp32) or 2 MiB (int8).

Modes: fp32; int8 with float32 graph inputs and outputs (the default); "int8 io", int8
with ``io: int8`` (int8 graph inputs and outputs).

A planner setting is one entry of SETTINGS (its ``planner:`` attributes); each adds a
group of columns, so a new setting (a fusion mode, say) is one line.

    python tools/bench/bench_memory.py [--models resnet18 unet4 ...] [--settings default]
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from dnn64build.ir import Graph  # noqa: E402
from dnn64build.planner.checker import check_plan  # noqa: E402
from dnn64build.planner.fit import needed_bytes  # noqa: E402
from tools.bench.bench_planner_zoo import load  # noqa: E402
from tools.zoo import BENCHMARK_NAMES, build  # noqa: E402

MIB = 1024 * 1024
TARGET = {"fp32": 4 * MIB, "int8": 2 * MIB, "int8 io": 2 * MIB}  # what each mode must fit
ROOMY = 512 * MIB  # the memory of the figures of a model that does not fit its target
QUANTIZE = {"fp32": {"mode": "none"}, "int8": {"mode": "int8", "synthetic": True},
            "int8 io": {"mode": "int8", "synthetic": True, "io": "int8"}}


def macs(graph: Graph) -> int:
    """Multiply-accumulates of the Conv, ConvTranspose, Gemm and MatMul nodes of the
    imported graph (static shapes, unlike ONNX shape inference after a computed reshape)."""
    total = 0
    for node in graph.nodes:
        if node.op not in ("Conv", "ConvTranspose", "Gemm", "MatMul"):
            continue
        x, w = (graph.tensors[t].shape for t in node.inputs[:2])
        out = graph.tensors[node.outputs[0]].shape
        if node.op == "Conv":  # w: [Cout, Cin / group, k...]
            total += math.prod(out) * math.prod(w[1:])
        elif node.op == "ConvTranspose":  # w: [Cin, Cout / group, k...], per input element
            total += math.prod(x) * math.prod(w[1:])
        else:
            total += math.prod(out) * (x[-2] if node.attrs.get("transA") else x[-1])
    return total


def default_setting() -> dict:
    """The planner as a new user gets it."""
    return {"algorithm": "auto", "scheduler": "auto"}


SETTINGS: dict[str, Callable[[], dict]] = {
    "default": default_setting,  # fusion: auto (docs/planner.md, "Fused groups")
    "no fusion": lambda: {**default_setting(), "fusion": "none"},
    "patch": lambda: {**default_setting(), "fusion": "patch"},
    "dag": lambda: {**default_setting(), "fusion": "dag"},  # what auto picks when it must
    # the graph input read row by row into the first dag group (docs/planner.md)
    "dag stream input": lambda: {**default_setting(), "fusion": "dag", "input": "stream"},
    # and the graph output handed out row by row by the last one
    "dag stream io": lambda: {**default_setting(), "fusion": "dag", "input": "stream",
                              "output": "stream"},
}


def write_workspace(root: Path, models: list[str], settings: list[str]) -> None:
    lines = ["workspace:", "  name: bench_memory", "  defaults: {toolchain: host}",
             "targets:"]
    for name in models:
        onnx.save(build(name), root / f"{name}.onnx")
        for mode, quantize in QUANTIZE.items():
            for setting in settings:
                for memory in (TARGET[mode], ROOMY):
                    lines += [
                        "  - rule: n64_model",
                        f"    name: {target(name, mode, setting, memory)}",
                        f"    src: {name}.onnx",
                        f"    quantize: {json.dumps(quantize)}",
                        f"    planner: {json.dumps(SETTINGS[setting]())}",
                        f"    memory: {memory // MIB}MiB",
                        "    title: bench_memory",  # target names pass the 20-character title
                    ]
    (root / "BUILD.yaml").write_text("\n".join(lines) + "\n")


def target(name: str, mode: str, setting: str, memory: int) -> str:
    return f"{name}_{mode.replace(' ', '_')}_{setting.replace(' ', '_')}_{memory // MIB}m"


def plan(root: Path, name: str, mode: str, setting: str) -> dict:
    """The plan for the mode's memory or, where the plan stage refuses that (the model
    does not fit), the plan for ROOMY."""
    for memory in (TARGET[mode], ROOMY):
        label = target(name, mode, setting, memory)
        proc = subprocess.run(
            [sys.executable, "-m", "dnn64build", "plan", f"//:{label}", "--json"], cwd=root,
            capture_output=True, text=True,
            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        )
        if proc.returncode == 0:
            break
        if memory == ROOMY or "does not fit" not in proc.stderr + proc.stdout:
            raise SystemExit(f"plan //:{label} failed:\n{proc.stdout}{proc.stderr}")
    result = json.loads(proc.stdout)
    violation = check_plan(result)
    if violation is not None:
        raise SystemExit(f"plan //:{label} fails the checker: {violation}")
    return result


def cells(result: dict, mode: str, total_macs: int) -> list[str]:
    extra = result.get("extra_macs", 0)
    # With `staging_bytes: auto` the staging may grow into memory the model leaves free;
    # what it needs is the plan at the minimum staging.
    needed = result["staging"].get("minimum_needs_bytes") or needed_bytes(
        result, program_bytes=result["program"]["estimate_bytes"],
        staging_bytes=result["staging"]["bytes"])
    return [f"{result['arena_bytes']:,}", f"{100 * extra / total_macs:.1f}%",
            f"{needed / MIB:.2f} MiB", "yes" if needed <= TARGET[mode] else "no"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=list(BENCHMARK_NAMES),
                        choices=BENCHMARK_NAMES)
    parser.add_argument("--settings", nargs="*", default=list(SETTINGS), choices=SETTINGS)
    args = parser.parse_args()
    header = ["model", "mode", "M MACs", "op bound"]
    for setting in args.settings:
        header += [f"{setting} peak", f"{setting} extra MACs", f"{setting} needs",
                   f"{setting} fits"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    fits = {(mode, s): 0 for mode in QUANTIZE for s in args.settings}
    with tempfile.TemporaryDirectory(prefix="bench_memory") as tmp:
        root = Path(tmp)
        write_workspace(root, args.models, args.settings)
        for name in args.models:
            total = macs(load(name))
            for mode in QUANTIZE:
                row = [name, mode, f"{total / 1e6:.0f}", ""]
                for setting in args.settings:
                    result = plan(root, name, mode, setting)
                    row[3] = row[3] or f"{result['op_bound_bytes']:,}"
                    row += cells(result, mode, total)
                    fits[mode, setting] += row[-1] == "yes"
                print("| " + " | ".join(row) + " |", flush=True)
    for (mode, setting), count in fits.items():
        print(f"\n{setting}: {mode} fits {TARGET[mode] // MIB} MiB for {count} of "
              f"{len(args.models)} models", end="")
    print()


if __name__ == "__main__":
    main()
