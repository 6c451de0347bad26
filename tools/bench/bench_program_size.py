"""The plan stage's program-size estimate against the real linked program (bare toolchain).

For each model and mode the script writes a throw-away workspace (one n64_model and one
n64_rom per entry, ``toolchain: bare``, ``memory: 8MiB``, int8 calibrated on synthetic
inputs; mode ``int8rsp`` sets ``kernels: rsp``), runs the real CLI,
``dnn64build build //:<rom>``, and reads:

- the estimate: ``program.estimate_bytes`` of the model's plan.json (what the plan stage
  checked against the memory; dnn64build.codegen.program_size) and the code shape
  it came from (kernel calls, of them calls reading a weight tile, parameter lines);
- the real program: the linked ELF's allocated sections (.text, .rodata, .data, .bss)
  without the static arena, as the pack stage's post-link check counts them;
- estimate / real, which must be >= 1 (the estimate is an upper bound).

``--calibrate`` also prints the fixed part and the per-call, per-staged-call and
per-line bytes that fit the measured model objects (least squares; the constants in
fit.py are rounded up from them), and each model object's size.

    python tools/bench/bench_program_size.py [--models resnet18:fp32 unet4:int8 ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from dnn64build.toolchains.elf import program_size  # noqa: E402
from tools.zoo import BENCHMARK_NAMES, build  # noqa: E402

INT8 = {"mode": "int8", "synthetic": True}
# mode -> (quantize, kernels)
MODES = {"fp32": ({"mode": "none"}, "cpu"), "int8": (INT8, "cpu"),
         "int8io": ({**INT8, "io": "int8"}, "cpu"), "int8rsp": (INT8, "rsp")}
DEFAULT = ["mlp_mnist:fp32", "mlp_mnist:int8", "squeezenet:int8", "squeezenet:int8rsp",
           "mobilenet_v3_small:int8", "unet4:int8io", "resnet18:fp32", "resnet18:int8",
           "densenet121:int8"]


def write_workspace(root: Path, entries: list[tuple[str, str]]) -> None:
    lines = ["workspace:", "  name: bench_program_size", "  defaults: {toolchain: bare}",
             "targets:"]
    for name in sorted({name for name, _ in entries}):
        onnx.save(build(name), root / f"{name}.onnx")
    for name, mode in entries:
        lines += [
            "  - rule: n64_model", f"    name: {name}_{mode}", f"    src: {name}.onnx",
            f"    quantize: {json.dumps(MODES[mode][0])}", f"    kernels: {MODES[mode][1]}",
            "    memory: 8MiB",
            "    title: bench",  # target names pass the 20-character title
            "  - rule: n64_rom", f"    name: rom_{name}_{mode}",
            f"    models: ['//:{name}_{mode}']", "    title: bench",
        ]
    (root / "BUILD.yaml").write_text("\n".join(lines) + "\n")


def measure(root: Path, name: str, mode: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "dnn64build", "build", f"//:rom_{name}_{mode}"], cwd=root,
        capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    if proc.returncode != 0:
        raise SystemExit(f"build {name} {mode} failed:\n{proc.stdout}{proc.stderr}")
    out = root / "dnn64-out" / "bin"
    plan = json.loads((out / f"{name}_{mode}" / "plan" / "plan.json").read_text())
    meta = json.loads((out / f"{name}_{mode}" / "codegen" / "meta.json").read_text())
    size = program_size(out / f"rom_{name}_{mode}" / "program" / "bare" / "program.elf")
    model_obj = next((out / f"{name}_{mode}" / "compile" / "bare").glob("*.o"))
    return {
        **plan["program"],
        "real": size.text + size.rodata + size.data + size.bss - meta["arena_bytes"],
        "model_object": _object_bytes(model_obj),
    }


def _object_bytes(path: Path) -> int:
    """Allocated bytes of a relocatable object (``size``'s text + data + bss)."""
    line = subprocess.run(["mips-linux-gnu-size", str(path)], capture_output=True, text=True,
                          check=True).stdout.splitlines()[1]
    return int(line.split()[3])


def calibrate(rows: list[dict]) -> None:
    """Least-squares bytes per call, per staged call and per parameter line of the model
    objects, and the rest of the program (kernels, runtime, main) per row."""
    features = np.array([[r["calls"], r["staged_calls"], r["decl_lines"], 1] for r in rows],
                        float)
    objects = np.array([r["model_object"] for r in rows], float)
    coef, *_ = np.linalg.lstsq(features, objects, rcond=None)
    print(f"\nmodel object ~ {coef[0]:.1f} B/call + {coef[1]:.1f} B/staged call + "
          f"{coef[2]:.1f} B/line + {coef[3]:.0f} B")
    for r in rows:
        print(f"  {r['label']}: object {r['model_object']} B, predicted "
              f"{features[rows.index(r)] @ coef:.0f} B, rest of program "
              f"{r['real'] - r['model_object']} B")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=DEFAULT,
                        help="name:mode pairs (modes: " + ", ".join(MODES) + ")")
    parser.add_argument("--calibrate", action="store_true")
    args = parser.parse_args()
    entries = [tuple(item.split(":")) for item in args.models]
    for name, mode in entries:
        if name not in BENCHMARK_NAMES or mode not in MODES:
            raise SystemExit(f"unknown model or mode: {name}:{mode}")
    header = ["model", "mode", "calls", "staged calls", "parameter lines", "estimate",
              "real program", "estimate / real"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_program_size") as tmp:
        root = Path(tmp)
        write_workspace(root, entries)
        for name, mode in entries:
            row = measure(root, name, mode)
            row["label"] = f"{name} {mode}"
            rows.append(row)
            print(f"| {name} | {mode} | {row['calls']} | {row['staged_calls']} | "
                  f"{row['decl_lines']} | {row['estimate_bytes']:,} | {row['real']:,} | "
                  f"{row['estimate_bytes'] / row['real']:.2f} |", flush=True)
    ratios = [r["estimate_bytes"] / r["real"] for r in rows]
    print(f"\nestimate / real: min {min(ratios):.2f}, max {max(ratios):.2f}")
    if args.calibrate:
        calibrate(rows)


if __name__ == "__main__":
    main()
