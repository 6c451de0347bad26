"""int8 models with their Conv layers on the CPU or on the RSP, in CPU cycles measured in cen64.

    python -m tools.bench.bench_rsp [--models small_cnn,shufflenet,mobilenetv3]
        [--kernels cpu,rsp,auto] [--timeout 900] [--write]

A model may name its own kernel choices: ``--models mobilenet_v3_small,resnet18:auto``
(``+`` between several: ``resnet18:cpu+auto``).

Each zoo model gets three int8 ``n64_model`` targets in a temporary workspace (toolchain
bare, memory 8MiB, no fused groups (their Convs would stay on the CPU), calibrated on
seeded random inputs), ``kernels: cpu``, ``rsp`` and ``auto`` (docs/rsp.md), each built
and run with ``dnn64build run --platform cen64`` (the cycle-accurate emulator: its RSP
runs the real microcode) on one seeded sample. The CLI
also checks each output against the integer reference executor. ``--write`` replaces this
benchmark's section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tools.bench.bench_emulator import macs  # noqa: E402
from tools.bench.benchmarks_doc import write_section  # noqa: E402
from tools.zoo import build  # noqa: E402

CPU_HZ = 93.75e6
KERNELS = ("cpu", "rsp", "auto")
SECTION = "## int8 Conv on the RSP: CPU cycles per inference (N64, in cen64)"
NOTES = """\
- Targets plan with `fusion: none`: a Conv in a fused group runs its CPU region kernel.
  "nodes on the RSP" counts the nodes whose kernel call goes to the RSP (Gemm included
  with `rsp`).
- On the RSP a layer's multiply-accumulates and its requantisation run there (docs/rsp.md).
  Depthwise 3x3/5x5 Convs, 1x1 Convs, squeeze-excite channel Muls and one-row Gemms run
  kernels whose microcode fetches its own inputs, weights and outputs by SP DMA; for other
  k x k layers the CPU packs the im2col block (an input block resident in DMEM serves every
  output-channel group of a batch), queues the jobs and copies the int8 outputs out.
  `auto` takes each RSP kernel where it measured faster than the CPU's.
- The RSP's time is cen64's model of it (62.5 MHz beside the CPU's 93.75); how closely it
  follows the console's RSP (which can issue a vector and a scalar instruction together)
  is not checked here.
- A change of code size alone moves CPU-only figures by up to ~10% (I-cache layout).
"""
COLUMNS = ("model", "MACs", "kernels", "nodes on the RSP", "CPU cycles", "cycles/MAC",
           "ms at 93.75 MHz", "vs cpu", "vs the integer reference")


def target(name: str, kernels: str) -> str:
    """The target's name: at most 20 characters (a ROM title, and the model's C symbol
    m_models_<name> must leave room for its asset names)."""
    return f"{name[:15]}_{kernels}"


def workspace(root: Path, names: list[str], staging: int | None = None, *,
              ws_name: str = "bench_rsp", model: Callable[[str], onnx.ModelProto] = build,
              kernels_list: Sequence[str] = KERNELS, calib_samples: int = 8) -> None:
    """A bare-toolchain workspace at ``root``: per model name ``model(name)`` as
    models/<name>.onnx with ``calib_samples`` calibration inputs and one input, and an
    int8 n64_model target per kernels choice."""
    (root / "models").mkdir(parents=True)
    (root / "BUILD.yaml").write_text(
        f"workspace:\n  name: {ws_name}\n  defaults: {{toolchain: bare}}\n")
    targets = ["targets:"]
    staging_opt = f", staging_bytes: {staging}" if staging else ""
    rng = np.random.default_rng(20261123)
    for name in names:
        proto = model(name)
        onnx.save(proto, root / "models" / f"{name}.onnx")
        shape = [d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim]
        np.savez(root / "models" / f"{name}_calib.npz",
                 input=rng.standard_normal([calib_samples, *shape]).astype(np.float32))
        np.savez(root / f"{name}_in.npz", input=rng.standard_normal([1, *shape]).astype(np.float32))
        for kernels in kernels_list:
            targets.append(
                f"  - {{rule: n64_model, name: {target(name, kernels)}, src: {name}.onnx, "
                f"kernels: {kernels}, memory: 8MiB, planner: {{fusion: none{staging_opt}}}, "
                f"quantize: {{mode: int8, calibration: {name}_calib.npz}}}}")
    (root / "models" / "BUILD.yaml").write_text("\n".join(targets) + "\n")


def measure(root: Path, name: str, kernels: str, timeout: float) -> dict[str, object]:
    label = f"//models:{target(name, kernels)}"
    proc = subprocess.run(
        [sys.executable, "-m", "dnn64build", "run", label, "--platform", "cen64",
         "--input", f"{name}_in.npz", "--timeout", str(timeout)],
        cwd=root, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    out = proc.stdout + proc.stderr
    cycles = re.search(r"(\d+) CPU cycles", out)
    verdict = re.search(r"vs the reference executor: (.*)", out)
    meta = root / "dnn64-out" / "bin" / "models" / target(name, kernels) / "codegen" / "meta.json"
    rsp_nodes = len(json.loads(meta.read_text())["rsp_nodes"]) if meta.is_file() else None
    if cycles is None:
        print(out[-3000:], file=sys.stderr)
    return {"cycles": int(cycles[1]) if cycles else None, "rsp_nodes": rsp_nodes,
            "verdict": verdict[1].strip() if verdict else "did not run"}


def table(rows: list[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)



def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="small_cnn,shufflenet,mobilenetv3")
    parser.add_argument("--kernels", default=",".join(KERNELS),
                        help="which of cpu, rsp, auto to run (the first given is the 'vs' base)")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--staging", type=int, default=None,
                        help="the targets' planner staging_bytes (weight tiles of half of it); "
                             "default: the planner's (staging_bytes: auto)")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    names = [m.split(":")[0] for m in args.models.split(",")]
    per_model = [m.split(":")[1].split("+") if ":" in m else None
                 for m in args.models.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_rsp") as tmp:
        root = Path(tmp)
        workspace(root, names, args.staging)
        for name, choices in zip(names, per_model, strict=True):
            kernel_choices = choices or args.kernels.split(",")
            count = macs(onnx.load(root / "models" / f"{name}.onnx"))
            base = None
            for kernels in kernel_choices:
                r = measure(root, name, kernels, args.timeout)
                cycles = r["cycles"]
                if kernels == "cpu":
                    base = cycles
                cells = (name, f"{count / 1e6:.2f} M", kernels, str(r["rsp_nodes"]),
                         f"{cycles:,}" if cycles else "-",
                         f"{cycles / count:.1f}" if cycles else "-",
                         f"{cycles / CPU_HZ * 1e3:.1f}" if cycles else "-",
                         f"{base / cycles:.2f}x" if cycles and base else "-", r["verdict"])
                rows.append(cells)
                print(" | ".join(cells), flush=True)
    intro = textwrap.fill(
        f"`python -m tools.bench.bench_rsp --models {args.models} --kernels {args.kernels} "
        "--write`: one int8 inference of each model (whole inference, wall time), its Conv "
        "layers on the CPU (`kernels: cpu`), every int8 Conv and Gemm on the RSP (`rsp`), "
        "or the Convs whose groups have at least 8 output channels (`auto`); MACs of "
        "Conv/Gemm/MatMul. CPU cycles are CP0 Count x 2 in cen64 (docs/rsp.md).",
        width=90, break_on_hyphens=False)
    text = f"{SECTION}\n\n{intro}\n\n{table(rows)}\n\n{NOTES}"
    print(text)
    if args.write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
