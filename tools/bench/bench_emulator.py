"""Emulated CPU ticks per inference of every zoo model in mupen64plus, through the real CLI.

    python -m tools.bench.bench_emulator [--models a,b] [--modes int8,fp32] [--timeout 600]
        [--max-macs N] [--budget SECONDS] [--jobs 2] [--workdir DIR]

A temporary workspace (toolchain: bare) gets one n64_model target per model and mode
(``NAME_int8`` with calibration data, ``NAME_fp32``). Each target is built with
``dnn64build build -j JOBS`` at ``memory: 4MiB`` and, when the plan stage says it
"does not fit", again at ``8MiB`` (Expansion Pak). Then ``dnn64build run --platform
emulator`` runs one seeded random sample; the table shows the CP0 Count ticks it printed,
the match verdicts against the reference executor and the host build, and the arena from
``codegen/meta.json``. Models run smallest (fewest MACs) first; rows not started once
``--budget`` seconds have passed are marked "not run: time".

The ROM reads the 32-bit CP0 Count only around the whole run, so runs over 2^32 ticks
print their ticks modulo 2^32: such rows are flagged, and get an estimate from their wall
time and the emulator's speed, measured per mode with a multi-sample run of the largest
exact model (the notes under the table explain both).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import shape_inference

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tools.zoo import NAMES, build  # noqa: E402

COUNT_HZ = 46.875e6  # CP0 Count rate on hardware: half the 93.75 MHz VR4300 clock
WRAP = 2**32  # the ROM reads the 32-bit Count only before and after a run
WRAP_MS = WRAP / COUNT_HZ * 1e3
# Count ticks per MAC at least: 2 per instruction, and >= 2 instructions per MAC (the VR4300,
# MIPS III, has no fused multiply-add: mul.s + add.s, or mult + mflo + addu).
MIN_TICKS_PER_MAC = 4
# Faster than mupen64plus's dynarec emulates here (N64-NOTES.md: ~250 M instructions/s;
# the calibration prints the measured rate): a run shorter than 2^32 ticks at this rate
# cannot have wrapped.
MAX_INSTRUCTIONS_PER_S = 600e6
MEMORIES = ("4MiB", "8MiB")
CALIBRATION_SAMPLES = 8  # quantisation calibration samples
RATE_TICKS = 4e9  # ticks the emulator-speed calibration run aims for (its samples x ticks)
COLUMNS = ("model", "mode", "M MACs", "memory needed", "arena bytes", "weight bytes streamed",
           "ticks / inference (printed)", "emulated ms @46.875 MHz",
           "ticks estimated from wall time", "emulator wall s", "vs reference", "vs host")
NOTES = """\
Notes:
- ticks: CP0 Count printed by the ROM ("N ticks (CP0 Count) per inference"), one sample.
  mupen64plus advances Count by 2 per executed instruction (CountPerOp), so it counts
  instructions (instructions = ticks / 2), not cycles: "emulated ms" = ticks / 46.875 MHz
  is the time at one instruction per cycle, ignoring cache misses, stalls and multi-cycle
  multiply/FPU ops; real hardware is slower.
- wrapping: the generated program reads dnn64_ticks() only before and after the run, so
  a run over 2^32 ticks (91.6 s emulated, ~2.1 G instructions) prints its ticks modulo
  2^32. "+ k·2^32 (k >= 0)": the emulator ran long enough for that to be possible (wall
  time x {max_ips:.0f} M instructions/s >= 2^32 ticks); "(k >= 1)": the printed value is
  below {min_tpm} ticks per MAC, so it certainly wrapped. Rows without either are exact.
- emulator wall s: from starting `dnn64build run` until it printed the ticks line (a no-op
  build check, ROM repack, mupen64plus boot and run); the reference executor and host
  build comparisons that follow are not included.
- memory needed: the first of 4MiB / 8MiB (Expansion Pak) whose plan-stage fit check passed.
- ticks estimated from wall time (only for rows that may have wrapped): the emulator's
  speed, measured per mode on the largest exact model run with several samples, times the
  row's wall time less the fixed overhead; k is rounded to the nearest wrap (not below the
  least). A rough figure: the dynarec's speed depends on the code it runs.
{calibration}"""


@dataclass
class Rate:
    """Emulator speed for one mode: Count ticks per wall second, and the fixed seconds a
    `dnn64build run` takes before its ticks line besides emulating (build check, boot)."""

    ticks_per_s: float
    overhead_s: float
    source: str


@dataclass
class Row:
    model: str
    mode: str
    macs: int
    memory: str = "-"
    arena: str = "-"
    streamed: str = "-"
    ticks: float | None = None  # as printed: modulo 2^32
    wall: float | None = None  # seconds until the ticks line
    outcome: str = "-"  # without ticks: why ("timeout", "run failed: ...", "not run: time")
    reference: str = "-"
    host: str = "-"
    log: str = ""  # the full error output of a failed build or run, printed after the table

    def least_wraps(self) -> int | None:
        """The fewest 2^32 wraps the printed ticks may hide (enough to reach
        MIN_TICKS_PER_MAC per MAC), or None when they must be exact."""
        if self.ticks is None or self.wall is None:
            return None
        least = max(0, -int(-(MIN_TICKS_PER_MAC * self.macs - self.ticks) // WRAP))
        if least == 0 and self.wall * MAX_INSTRUCTIONS_PER_S * 2 < WRAP:
            return None
        return least

    def estimate(self, rate: Rate | None) -> str:
        least = self.least_wraps()
        if self.ticks is None or self.wall is None:
            return "-"
        if least is None:
            return "exact"
        if rate is None:
            return "no calibration"
        seen = rate.ticks_per_s * max(self.wall - rate.overhead_s, 0.0)
        wraps = max(least, round((seen - self.ticks) / WRAP))
        ticks = self.ticks + wraps * WRAP
        return f"~{ticks:.2e} (k = {wraps}; ~{ticks / COUNT_HZ:.0f} s)"

    def cells(self, rate: Rate | None = None) -> tuple[str, ...]:
        ticks = ms = self.outcome
        if self.ticks is not None:
            ticks, ms = f"{self.ticks:.0f}", f"{self.ticks / COUNT_HZ * 1e3:.1f}"
            least = self.least_wraps()
            if least is not None:
                ticks += f" + k·2^32 (k >= {least})"
                ms += f" + k·{WRAP_MS:.0f}"
        wall = "-" if self.wall is None else f"{self.wall:.1f}"
        return (self.model, self.mode, f"{self.macs / 1e6:.1f}", self.memory, self.arena,
                self.streamed, ticks, ms, self.estimate(rate), wall, self.reference,
                self.host)


def macs(model: onnx.ModelProto) -> int:
    """Multiply-accumulates of the Conv, ConvTranspose, Gemm and MatMul nodes (for ordering)."""
    graph = shape_inference.infer_shapes(model).graph
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in [*graph.input, *graph.value_info, *graph.output]}
    shapes.update({t.name: list(t.dims) for t in graph.initializer})
    total = 0
    for node in graph.node:
        if node.op_type in ("Conv", "ConvTranspose"):
            weight = shapes[node.input[1]]  # Conv: [Cout, Cin/g, k...]; ConvT: [Cin, Cout/g, k...]
            per_point = int(np.prod(weight[1:]))
            counted = node.output[0] if node.op_type == "Conv" else node.input[0]
            total += int(np.prod(shapes[counted])) * per_point
        elif node.op_type in ("Gemm", "MatMul"):
            a, out = shapes[node.input[0]], shapes[node.output[0]]
            k = a[0] if node.op_type == "Gemm" and any(
                at.name == "transA" and at.i for at in node.attribute) else a[-1]
            total += int(np.prod(out)) * k
    return total


class Bench:
    def __init__(self, root: Path, timeout: float, jobs: int) -> None:
        self.root = root
        self.timeout = timeout
        self.jobs = jobs
        self.targets: dict[str, str] = {}  # target name -> its n64_model entry (YAML flow map)
        (root / "models").mkdir(parents=True, exist_ok=True)
        (root / "BUILD.yaml").write_text(
            "workspace:\n  name: bench_emulator\n  defaults: {toolchain: bare}\ntargets: []\n")

    def add_model(self, name: str) -> None:
        model = build(name)
        onnx.save(model, self.root / "models" / f"{name}.onnx")
        rng = np.random.default_rng(sum(map(ord, name)))
        np.savez(self.root / "models" / f"{name}_calib.npz",
                 **_samples(model, rng, CALIBRATION_SAMPLES))
        np.savez(self.root / f"{name}_in.npz", **_samples(model, rng, None))

    def _set_target(self, name: str, mode: str, memory: str) -> str:
        target = f"{name}_{mode}"
        quantize = (f"{{mode: int8, calibration: {name}_calib.npz}}" if mode == "int8"
                    else "{mode: none}")
        self.targets[target] = (f"{{rule: n64_model, name: {target}, src: {name}.onnx, "
                                f"memory: {memory}, quantize: {quantize}}}")
        (self.root / "models" / "BUILD.yaml").write_text(
            "targets:\n" + "".join(f"  - {e}\n" for e in self.targets.values()))
        return target

    def cli(self, *args: str, limit: float) -> tuple[int, str, float | None]:
        """Run dnn64build; return its exit status (-1 when killed after ``limit`` s), its
        output, and the seconds until it printed the ticks line (None if it did not)."""
        start = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "dnn64build", *args], cwd=self.root, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        lines: list[str] = []
        ticks_at = None
        timer = _Killer(proc, limit)
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                lines.append(line)
                if ticks_at is None and "per inference" in line:
                    ticks_at = time.monotonic() - start
            status = proc.wait()
        finally:
            timer.cancel()
            if proc.poll() is None:  # interrupted: its own session would outlive us
                _stop(proc)
        return (-1 if timer.fired else status), "".join(lines), ticks_at

    def measure(self, name: str, mode: str, count: int) -> Row:
        row = Row(name, mode, count)
        target = ""
        for memory in MEMORIES:
            target = self._set_target(name, mode, memory)
            status, out, _ = self.cli("build", f"//models:{target}", "-j", str(self.jobs),
                                      limit=3600)
            if status == 0:
                row.memory = memory
                break
            if "does not fit in" not in out:
                row.memory = f"build failed: {_error(out, status)}"
                row.log = _tail(out)
                return row
        else:
            row.memory = "does not fit 8 MiB"
            return row
        meta_path = self.root / "dnn64-out" / "bin" / "models" / target / "codegen" / "meta.json"
        meta = json.loads(meta_path.read_text())
        row.arena, row.streamed = str(meta["arena_bytes"]), str(meta["weight_bytes_streamed"])
        status, out, row.wall = self.run(target, self.root / f"{name}_in.npz")
        found = _ticks(out)
        if found is not None:
            row.ticks = found
        elif "time limit" in out:
            row.outcome = f"timeout ({self.timeout:g} s)"
        else:
            row.outcome = f"run failed: {_error(out, status)}"
        if status != 0:
            row.log = _tail(out)
        row.reference = _verdict(out, "vs the reference executor: ")
        row.host = _verdict(out, "vs the host build: ")
        if status != 0 and found is not None:
            row.host = f"{row.host}; run failed after: {_error(out, status)}"
        return row

    def run(self, target: str, inputs: Path) -> tuple[int, str, float | None]:
        return self.cli("run", f"//models:{target}", "--platform", "emulator", "--input",
                        str(inputs), "--timeout", str(self.timeout),
                        limit=self.timeout + 3600)

    def calibrate(self, rows: list[Row], mode: str) -> Rate | None:
        """The emulator's speed on the ``mode`` row with the most exact ticks, from a run
        over enough samples for RATE_TICKS: the extra ticks over the extra wall time."""
        exact = [r for r in rows if r.mode == mode and r.ticks and r.wall is not None
                 and r.least_wraps() is None]
        if not exact:
            return None
        row = max(exact, key=lambda r: r.ticks or 0.0)
        assert row.ticks is not None and row.wall is not None
        samples = min(max(2, round(RATE_TICKS / row.ticks)), 64)
        inputs = self.root / f"{row.model}_rate.npz"
        np.savez(inputs, **_samples(build(row.model), np.random.default_rng(1), samples))
        _, out, wall = self.run(f"{row.model}_{mode}", inputs)
        mean = _ticks(out)
        if mean is None or wall is None or wall <= row.wall:
            return None
        rate = (samples * mean - row.ticks) / (wall - row.wall)
        return Rate(rate, max(row.wall - row.ticks / rate, 0.0),
                    f"{row.model}_{mode}, {samples} samples in {wall:.1f} s vs 1 in "
                    f"{row.wall:.1f} s")


def _stop(proc: subprocess.Popen[str]) -> None:
    """Interrupt a dnn64build process group: SIGINT lets it stop the emulator (which runs in
    a session of its own) and ninja lets go of its stages; SIGKILL if that takes too long."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


class _Killer:
    """Stop a dnn64build process when ``limit`` s pass."""

    def __init__(self, proc: subprocess.Popen[str], limit: float) -> None:
        self.fired = False

        def stop() -> None:
            self.fired = True
            _stop(proc)

        self._timer = threading.Timer(limit, stop)
        self._timer.start()

    def cancel(self) -> None:
        self._timer.cancel()


def _samples(model: onnx.ModelProto, rng: np.random.Generator,
             count: int | None) -> dict[str, np.ndarray]:
    """Seeded normal inputs for every graph input: [count, *shape], or one [*shape]."""
    arrays = {}
    for value in model.graph.input:
        shape = [d.dim_value for d in value.type.tensor_type.shape.dim]
        size = shape if count is None else [count, *shape]
        arrays[value.name] = rng.standard_normal(size).astype(np.float32)
    return arrays


def _ticks(out: str) -> float | None:
    found = re.search(r"([\d.]+) ticks \(CP0 Count\) per inference", out)
    return float(found[1]) if found else None


def _error(out: str, status: int) -> str:
    """The ERROR message the CLI printed (its first line), else the output's last line."""
    if status == -1:
        return "killed: outer time limit"
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")]
    return errors[0] if errors else (lines[-1] if lines else f"exit status {status}")


def _tail(out: str, count: int = 30) -> str:
    return "\n".join(out.rstrip().splitlines()[-count:])


def _verdict(out: str, prefix: str) -> str:
    found = [line.split(prefix, 1)[1].strip() for line in out.splitlines() if prefix in line]
    return "; ".join(found) or "-"


def table(rows: list[Row], rates: dict[str, Rate | None]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row.cells(rates.get(row.mode))) + " |" for row in rows]
    return "\n".join(lines)


def _calibration_notes(rates: dict[str, Rate | None]) -> str:
    lines = []
    for mode, rate in rates.items():
        if rate is None:
            lines.append(f"  {mode}: no calibration (no exact row, or its run failed)\n")
        else:
            lines.append(f"  {mode}: {rate.ticks_per_s / 2e6:.0f} M instructions/s, "
                         f"{rate.overhead_s:.1f} s overhead ({rate.source})\n")
    return "  emulator speed measured:\n" + "".join(lines) if lines else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(NAMES), help="comma-separated zoo names")
    parser.add_argument("--modes", default="int8,fp32", help="comma-separated: int8, fp32")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="emulator time limit per run (s)")
    parser.add_argument("--max-macs", type=float, default=None,
                        help="skip models with more multiply-accumulates than this")
    parser.add_argument("--budget", type=float, default=None,
                        help="start no new row after this many seconds")
    parser.add_argument("--jobs", type=int, default=2, help="dnn64build build -j")
    parser.add_argument("--workdir", type=Path, default=None,
                        help="workspace directory to use and keep (default: a temporary one)")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # clean up on kill PID too
    counts = {name: macs(build(name)) for name in args.models.split(",")}
    names = sorted(counts, key=counts.__getitem__)
    modes = args.modes.split(",")
    started = time.monotonic()
    rows: list[Row] = []
    reason = ""  # why the remaining rows do not run: "time" or "interrupted"
    with tempfile.TemporaryDirectory(prefix="bench_emulator") as tmp:
        bench = Bench(args.workdir or Path(tmp), args.timeout, args.jobs)
        for name in names:
            count = counts[name]
            if args.max_macs is not None and count > args.max_macs:
                rows += [Row(name, mode, count, outcome="skipped: --max-macs")
                         for mode in modes]
                continue
            added = False
            for mode in modes:
                if args.budget is not None and time.monotonic() - started > args.budget:
                    reason = reason or "time"
                if reason:
                    rows.append(Row(name, mode, count, outcome=f"not run: {reason}"))
                    continue
                row_start = time.monotonic()
                try:
                    if not added:
                        bench.add_model(name)
                        added = True
                    rows.append(bench.measure(name, mode, count))
                except KeyboardInterrupt:
                    reason = "interrupted"
                    rows.append(Row(name, mode, count, outcome=f"not run: {reason}"))
                    continue
                print(f"# {name} {mode} ({count / 1e6:.1f} M MACs): "
                      f"{time.monotonic() - row_start:.0f} s | " + " | ".join(rows[-1].cells()),
                      flush=True)
        rates: dict[str, Rate | None] = {}
        if not reason and any(r.least_wraps() is not None for r in rows):
            try:
                rates = {mode: bench.calibrate(rows, mode) for mode in modes}
            except KeyboardInterrupt:
                rates = {}
    print(table(rows, rates))
    print()
    print(NOTES.format(max_ips=MAX_INSTRUCTIONS_PER_S / 1e6, min_tpm=MIN_TICKS_PER_MAC,
                       calibration=_calibration_notes(rates)), end="")
    for row in rows:
        if row.log:
            print(f"\nOutput of the failed {row.model} {row.mode} step (last lines):\n{row.log}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
