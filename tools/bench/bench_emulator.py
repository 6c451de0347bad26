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
``--budget`` seconds have passed are marked "not run: time". A build that fails after its
plan fit keeps that memory in its row, next to the error.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
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

# Fewer Count ticks per MAC than this cannot be real: 2 ticks are one instruction in
# mupen64plus, and the VR4300 has no fused multiply-add (nor SIMD on the CPU).
MIN_TICKS_PER_MAC = 2
MEMORIES = ("4MiB", "8MiB")
CALIBRATION_SAMPLES = 8  # quantisation calibration samples
COLUMNS = ("model", "mode", "M MACs", "memory needed", "arena bytes", "weight bytes streamed",
           "ticks / inference", "M instructions (ticks / 2)", "emulator wall s", "vs reference",
           "vs host")
NOTES = f"""\
Notes:
- ticks: CP0 Count printed by the ROM ("N ticks (CP0 Count) per inference"), one sample.
  mupen64plus advances Count by 2 per executed instruction (CountPerOp), so it counts
  instructions (instructions = ticks / 2), not cycles: no time can be read from it (cache
  misses, stalls and multi-cycle multiply/FPU ops are not modelled). CPU cycles and ms
  come from cen64: tools/bench/bench_cycles.py. The platform layer extends the 32-bit
  Count to 64 bits on every weight-tile read, so ticks are exact unless one tile's
  compute alone runs over 2^32 ticks. "suspect (below {MIN_TICKS_PER_MAC} ticks per
  MAC)": fewer ticks than one instruction per multiply-accumulate, which the VR4300 (no
  fused multiply-add) cannot do; such a value is not to be trusted.
- emulator wall s: from starting `dnn64build run` until it printed the ticks line (a no-op
  build check, ROM repack, mupen64plus boot and run); the reference executor and host
  build comparisons that follow are not included.
- memory needed: the first of 4MiB / 8MiB (Expansion Pak) whose plan-stage fit check passed.
  When a later build step failed (the error is in the ticks column), the memory the plan
  fit is still shown, and the arena when code generation got that far; "-" when the build
  failed before the plan passed.
"""


@dataclass
class Row:
    model: str
    mode: str
    macs: int
    memory: str = "-"
    arena: str = "-"
    streamed: str = "-"
    ticks: float | None = None
    wall: float | None = None  # seconds until the ticks line
    # without ticks: why ("build failed: ...", "timeout", "run failed: ...", "not run: time")
    outcome: str = "-"
    reference: str = "-"
    host: str = "-"
    log: str = ""  # the full error output of a failed build or run, printed after the table

    def cells(self) -> tuple[str, ...]:
        ticks, instructions = self.outcome, "-"
        if self.ticks is not None:
            ticks, instructions = f"{self.ticks:.0f}", f"{self.ticks / 2e6:.1f}"
            if self.ticks < MIN_TICKS_PER_MAC * self.macs:
                ticks += f" suspect (below {MIN_TICKS_PER_MAC} ticks per MAC)"
        wall = "-" if self.wall is None else f"{self.wall:.1f}"
        return (self.model, self.mode, f"{self.macs / 1e6:.1f}", self.memory, self.arena,
                self.streamed, ticks, instructions, wall, self.reference, self.host)


def macs(model: onnx.ModelProto) -> int:
    """Multiply-accumulates of the Conv, ConvTranspose, Gemm and MatMul nodes (for ordering)."""
    # data_prop: the shapes after a Reshape to a computed shape (ShuffleNetV2's channel
    # shuffle), without which the Convs after it counted 0 (17.8 M MACs of its 144.9 M)
    graph = shape_inference.infer_shapes(model, data_prop=True).graph
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


def target_stem(name: str) -> str:
    """A model's target name without its mode: the model's name when short enough for the
    ROM title (20 characters with "_int8") and the C symbol (m_models_<target>, 31), else
    its first 9 characters and 5 hex digits of its SHA-1."""
    if len(name) <= 15:
        return name
    return f"{name[:9]}_{hashlib.sha1(name.encode()).hexdigest()[:5]}"


class Bench:
    platform = "emulator"  # dnn64build run --platform
    target_attrs = ""  # more attributes of every n64_model target (", kernels: cpu")

    def __init__(self, root: Path, timeout: float, jobs: int,
                 env: dict[str, str] | None = None) -> None:
        self.root = root
        self.timeout = timeout
        self.jobs = jobs
        self.env = env or {}  # added to the CLI's environment (e.g. PYTHONPATH)
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
        target = f"{target_stem(name)}_{mode}"
        quantize = (f"{{mode: int8, calibration: {name}_calib.npz}}" if mode == "int8"
                    else "{mode: none}")
        self.targets[target] = (f"{{rule: n64_model, name: {target}, src: {name}.onnx, "
                                f"memory: {memory}, quantize: {quantize}{self.target_attrs}}}")
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
            env={**os.environ, **self.env, "PYTHONUNBUFFERED": "1"},
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
            started = time.time()
            status, out, _ = self.cli("build", f"//models:{target}", "-j", str(self.jobs),
                                      limit=3600)
            if status == 0:
                row.memory = memory
                break
            if "does not fit in" not in out:
                row.outcome = f"build failed: {_error(out, status)}"
                row.log = _tail(out)
                if self._fresh(target, "plan/report.txt", started):
                    row.memory = memory
                    self._read_meta(row, target, started)
                return row
        else:
            row.memory = "does not fit 8 MiB"
            return row
        self._read_meta(row, target, None)
        status, out, row.wall = self.run(target, self.root / f"{name}_in.npz")
        found = self.ticks(out)
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

    def _fresh(self, target: str, output: str, since: float | None) -> Path | None:
        """A stage output of ``target`` (e.g. "plan/report.txt"), if it exists and, with
        ``since``, was written since then (the plan writes its outputs only when it fits)."""
        path = self.root / "dnn64-out" / "bin" / "models" / target / output
        if not path.exists() or (since is not None and path.stat().st_mtime < since):
            return None
        return path

    def _read_meta(self, row: Row, target: str, since: float | None) -> None:
        """Arena and streamed weight bytes from codegen's meta.json, when it is there."""
        path = self._fresh(target, "codegen/meta.json", since)
        if path is not None:
            meta = json.loads(path.read_text())
            row.arena = str(meta["arena_bytes"])
            row.streamed = str(meta["weight_bytes_streamed"])

    def ticks(self, out: str) -> float | None:
        """The CP0 Count ticks per inference that ``dnn64build run`` printed."""
        return _ticks(out)

    def run(self, target: str, inputs: Path) -> tuple[int, str, float | None]:
        return self.cli("run", f"//models:{target}", "--platform", self.platform, "--input",
                        str(inputs), "--timeout", str(self.timeout),
                        limit=self.timeout + 3600)


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


def table(rows: list[Row]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines)


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
    print(table(rows))
    print()
    print(NOTES, end="")
    for row in rows:
        if row.log:
            print(f"\nOutput of the failed {row.model} {row.mode} step (last lines):\n{row.log}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
