"""CPU cycles per inference in cen64, the cycle-accurate emulator, through the real CLI.

    python -m tools.bench.bench_cycles [--models digits,small_cnn,shufflenet,mobilenetv3]
        [--modes int8,fp32] [--baseline REV] [--baseline-models a,b] [--timeout 600]
        [--jobs 2] [--kernels cpu|rsp|auto|default] [--parallel 1] [--write]

Each model (a zoo name, or ``digits`` from models/) gets an ``n64_model`` target per mode in
a temporary workspace (toolchain: bare; int8 calibrated on seeded random inputs, digits on
its own calibration set), built and run with ``dnn64build run --platform cen64`` on one
seeded sample (bench_emulator.Bench does the building). cen64 models the VR4300's caches
and latencies, so CP0 Count x 2 is CPU cycles. With ``--baseline REV`` every row is also
measured with the kernels (kernels/) of git revision REV in an otherwise identical copy of
this tree: the same code generator and platform layer, the old kernels
(``--baseline-models``: only for those models). ``--kernels`` sets the targets'
``kernels:`` (cpu unless given; ``default`` sets none: auto on bare). ``--parallel N``
measures N models (each in a workspace of its own) at a time. ``--write`` replaces this
benchmark's section of docs/benchmarks.md.

Beside each row, the physical limits: the RSP's peak (8 lanes x 62.5 MHz = 500 M
multiply-accumulates/s) and the time to stream the model's weights from the cartridge at
the PI's average 5 MB/s (Nintendo's N64 introductory manual, "2-6 PI": "average 5
MByte/sec", peak about 50).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tools.bench.bench_emulator import Bench, Row, macs  # noqa: E402
from tools.bench.benchmarks_doc import write_section  # noqa: E402
from tools.zoo import build  # noqa: E402

CPU_HZ = 93.75e6
RSP_PEAK_MACS = 500e6  # 8 lanes x 62.5 MHz (N64-NOTES.md, "The RSP")
PI_BYTES_PER_S = 5e6  # cartridge average (N64 introductory manual, 2-6 PI)
DEFAULT_MODELS = "digits,small_cnn,shufflenet,mobilenetv3"
SECTION = "## CPU cycles per inference (N64, in cen64)"


class CycleBench(Bench):
    platform = "cen64"
    target_attrs = ", kernels: cpu"  # CPU-only figures, whatever the default becomes

    def add_model(self, name: str) -> None:
        if name != "digits":
            super().add_model(name)
            return
        shutil.copy(ROOT / "models" / "digits.onnx", self.root / "models" / "digits.onnx")
        shutil.copy(ROOT / "models" / "digits_calib.npz",
                    self.root / "models" / "digits_calib.npz")
        with np.load(ROOT / "models" / "digits_test.npz") as test:
            np.savez(self.root / "digits_in.npz", input=test["input"][:1])

    def ticks(self, out: str) -> float | None:
        found = re.search(r"(\d+) CPU cycles \(CP0 Count x 2\) per inference", out)
        return int(found[1]) / 2 if found else None


def model_macs(name: str) -> int:
    return macs(onnx.load(ROOT / "models" / "digits.onnx") if name == "digits" else build(name))


@dataclass
class Measured:
    row: Row
    kernels: str  # "this tree" or the baseline revision

    @property
    def cycles(self) -> float | None:
        return None if self.row.ticks is None else self.row.ticks * 2


def tree_with_kernels_of(rev: str, into: Path) -> Path:
    """A copy of this tree (tracked files as they are now) whose kernels/ is that of
    ``rev``, except the platform layer (kernels/platform/, which this tree's code generator
    and toolchains call)."""
    tool = into / "tool"
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    for rel in files:
        if (ROOT / rel).is_file() and (not rel.startswith("kernels/")
                                       or rel.startswith("kernels/platform/")):
            (tool / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, tool / rel)
    old = subprocess.run(["git", "archive", rev, "kernels"], cwd=ROOT, capture_output=True,
                         check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tool), "--exclude=kernels/platform"], input=old,
                   check=True)
    return tool


def measure(name: str, modes: list[str], tool: Path, kernels: str, args: argparse.Namespace,
            workdir: Path) -> list[Measured]:
    """Every mode of one model, built and run with the dnn64build of ``tool``."""
    bench = CycleBench(workdir, args.timeout, args.jobs, env={"PYTHONPATH": str(tool)})
    if args.kernels != "cpu":  # "default": the toolchain's own (auto on bare)
        bench.target_attrs = "" if args.kernels == "default" else f", kernels: {args.kernels}"
    bench.add_model(name)
    results = []
    for mode in modes:
        started = time.monotonic()
        row = bench.measure(name, mode, model_macs(name))
        print(f"{name} {mode} ({kernels}): {row.ticks} ticks, {row.outcome}, "
              f"{time.monotonic() - started:.0f} s", file=sys.stderr)
        if row.log:
            print(row.log, file=sys.stderr)
        results.append(Measured(row, kernels))
    return results


COLUMNS = ("model", "mode", "M MACs", "kernels", "CPU cycles / inference", "cycles / MAC",
           "ms @93.75 MHz", "vs reference", "vs host", "RSP peak ms", "weight bytes streamed",
           "PI stream ms @5 MB/s")


def cells(m: Measured) -> tuple[str, ...]:
    row = m.row
    rsp_ms = row.macs / RSP_PEAK_MACS * 1e3
    pi_ms = ("-" if row.streamed == "-" else f"{int(row.streamed) / PI_BYTES_PER_S * 1e3:.1f}")
    if m.cycles is None:
        timing = (row.outcome, "-", "-")
    else:
        timing = (f"{m.cycles:.0f}", f"{m.cycles / row.macs:.1f}",
                  f"{m.cycles / CPU_HZ * 1e3:.1f}")
    return (row.model, row.mode, f"{row.macs / 1e6:.2f}", m.kernels, *timing, row.reference,
            row.host, f"{rsp_ms:.2f}", row.streamed, pi_ms)


def table(results: list[Measured]) -> str:
    order = {id(m): i for i, m in enumerate(results)}
    ranked = sorted(results, key=lambda m: (m.row.macs, m.row.model, m.row.mode, order[id(m)]))
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(cells(m)) + " |" for m in ranked]
    return "\n".join(lines)


def section(results: list[Measured], command: str, kernels: str = "cpu") -> str:
    setting = {"cpu": "`kernels: cpu` (no RSP)", "default": "the default `kernels:` (auto)"}.get(
        kernels, f"`kernels: {kernels}`")
    return f"""{SECTION}

`{command}`: every model built through the CLI for `bare` with {setting} and
run in cen64 (one seeded sample; int8 calibrated on seeded random inputs, digits on its
calibration set). cen64 models the VR4300's caches and latencies: CPU cycles = CP0 Count
x 2, ms = cycles / 93.75 MHz; M MACs counts Conv, ConvTranspose, Gemm and MatMul.
"kernels": this tree's CPU kernels, or those of the named git revision built by the same
code generator. A model that does not fit 8 MiB says so instead of a time.

{table(results)}

- Physical limits beside each row: "RSP peak ms" is the MACs at the RSP's 500 M
  multiply-accumulates/s (8 lanes x 62.5 MHz, 0.19 CPU cycles per MAC); "PI stream ms" is
  the weight bytes the ROM streams per inference at the cartridge's average PI DMA rate
  of 5 MB/s (Nintendo's N64 introductory manual, section 2-6 "PI": "average 5
  MByte/sec", peak about 50 MB/s).
- cen64 (Debian 0.3+git20200723) charges MULT no extra cycles (the VR4300 takes 5,
  unpipelined; N64-NOTES.md), so int8 figures here are optimistic for multiply-bound
  loops; it does model cache misses and DIV/DMULT latency.
- The caches are direct-mapped, so a change anywhere in the program that moves code or
  data can move a row by a few percent; compare kernel versions, not single digits.
- {verdicts(results)}
"""


def verdicts(results: list[Measured]) -> str:
    """One sentence on the outputs' checks over every row."""
    bad = [f"{m.row.model} {m.row.mode} ({m.kernels})" for m in results
           if not (m.row.reference.startswith("match") and m.row.host.startswith("match"))]
    if bad:
        return "Rows whose outputs did not match or did not run: " + ", ".join(bad) + "."
    return ("Every row's outputs matched the reference executor (int8 bit for bit, fp32 within "
            "1e-4 of the output scale) and the host build of the same C.")



def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=DEFAULT_MODELS,
                        help="comma-separated zoo names, or digits")
    parser.add_argument("--modes", default="int8,fp32")
    parser.add_argument("--baseline", default=None,
                        help="also measure the kernels of this git revision")
    parser.add_argument("--baseline-models", default=None,
                        help="comma-separated: measure the baseline for these models only")
    parser.add_argument("--parallel", type=int, default=1,
                        help="models measured at a time")
    parser.add_argument("--timeout", type=float, default=600.0, help="cen64 time limit (s)")
    parser.add_argument("--jobs", type=int, default=2, help="dnn64build build -j")
    parser.add_argument("--kernels", choices=("cpu", "rsp", "auto", "default"), default="cpu",
                        help="the targets' kernels: setting (default: none given)")
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args(argv)
    names, modes = args.models.split(","), args.modes.split(",")
    baseline_names = args.baseline_models.split(",") if args.baseline_models else names
    with tempfile.TemporaryDirectory(prefix="bench_cycles") as tmp:
        jobs = [(name, ROOT, "this tree", Path(tmp) / f"ws_{name}") for name in names]
        if args.baseline:
            tool = tree_with_kernels_of(args.baseline, Path(tmp))
            jobs += [(name, tool, args.baseline, Path(tmp) / f"base_{name}")
                     for name in baseline_names]
        with ThreadPoolExecutor(max_workers=args.parallel) as pool:
            done = pool.map(lambda job: measure(job[0], modes, job[1], job[2], args, job[3]),
                            jobs)
            results = [m for measured in done for m in measured]
    command = "python -m tools.bench.bench_cycles " + " ".join(
        a for a in (argv if argv is not None else sys.argv[1:]) if a != "--write")
    text = section(results, command.strip(), args.kernels)
    print(text)
    if args.write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
