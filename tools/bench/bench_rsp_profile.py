"""Where an int8 inference's CPU cycles go, node by node, measured in cen64.

    python -m tools.bench.bench_rsp_profile [--model mobilenet_v3_small] [--kernels auto]
        [--timeout 1800] [--write]

Builds the model as tools/bench/bench_rsp.py does (bare, 8 MiB, no fused groups,
calibrated on seeded random inputs) with an instrumented copy of this tree: the copy's
code generator adds, after every node of the generated C, a line printing CP0 Count
(``PROF <index> <op>``). The ROM runs in cen64; the differences between consecutive lines
are each node's cycles (Count x 2). The printing itself costs a few thousand cycles a node.
Output: cycles per operator kind (Conv on the RSP apart from Conv on the CPU) and the
heaviest nodes. ``--write`` replaces this benchmark's section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from dnn64build.emulator import run_rom_cen64  # noqa: E402
from tools.bench.bench_emulator import macs  # noqa: E402
from tools.bench.benchmarks_doc import write_section  # noqa: E402
from tools.zoo import build  # noqa: E402

SECTION = "## int8 on the RSP: CPU cycles per node (N64, in cen64)"
# The code generator's loop over nodes, and the line the instrumented copy adds after it.
HOOK = """            if prefetching:
                out.append("    dnn64_asset_read_wait();")
"""
PROBE = """        out.append(f'    dnn64_print_u64("PROF {index} {node.op}'
                   f'{"@rsp" if low.on_rsp else ""}", dnn64_ticks());')
"""


def instrumented_tree(into: Path) -> Path:
    """A copy of this tree's tracked files whose codegen prints Count after each node."""
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    for rel in files:
        if (ROOT / rel).is_file():
            (into / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, into / rel)
    model_py = into / "dnn64build" / "codegen" / "model.py"
    text = model_py.read_text()
    if HOOK not in text:
        raise SystemExit("bench_rsp_profile: codegen/model.py changed; update HOOK")
    model_py.write_text(text.replace(HOOK, HOOK + PROBE))
    return into


def build_rom(tree: Path, ws: Path, name: str, kernels: str) -> Path:
    (ws / "models").mkdir(parents=True)
    (ws / "BUILD.yaml").write_text("workspace:\n  name: prof\n  defaults: {toolchain: bare}\n")
    model = build(name)
    onnx.save(model, ws / "models" / f"{name}.onnx")
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    rng = np.random.default_rng(20261123)
    np.savez(ws / "models" / "calib.npz",
             input=rng.standard_normal([8, *shape]).astype(np.float32))
    (ws / "models" / "BUILD.yaml").write_text(
        f"targets:\n  - {{rule: n64_model, name: prof, src: {name}.onnx, kernels: {kernels}, "
        "memory: 8MiB, planner: {fusion: none}, "
        "quantize: {mode: int8, calibration: calib.npz}}\n")
    subprocess.run([sys.executable, "-m", "dnn64build", "build", "//models:prof"], cwd=ws,
                   check=True, capture_output=True, env={**os.environ, "PYTHONPATH": str(tree)})
    return next((ws / "dnn64-out").rglob("prof.z64"))


def node_cycles(lines: list[str]) -> list[tuple[int, str, int]]:
    """(index, op, CPU cycles) of every node after the first."""
    rows, before = [], None
    for line in lines:
        found = re.match(r"PROF (\d+) (\S+) (\d+)$", line)
        if found:
            count = int(found[3])
            if before is not None:
                rows.append((int(found[1]), found[2], 2 * (count - before)))
            before = count
    return rows


def section(name: str, kernels: str, rows: list[tuple[int, str, int]], total_macs: int,
            command: str) -> str:
    per_op: dict[str, int] = collections.defaultdict(int)
    for _, op, cycles in rows:
        per_op[op] += cycles
    total = sum(per_op.values())
    lines = [SECTION, "",
             f"`{command}`: {name} int8 (`kernels: {kernels}`), {total_macs / 1e6:.2f} M MACs, "
             f"{total:,} CPU cycles over the nodes after the first ({total / total_macs:.2f} "
             "per MAC); `@rsp`: the node's kernel runs on the RSP.", "",
             "| operator | CPU cycles | share |", "|---|---:|---:|"]
    lines += [f"| {op} | {cycles:,} | {100 * cycles / total:.1f}% |"
              for op, cycles in sorted(per_op.items(), key=lambda kv: -kv[1])]
    lines += ["", "The ten heaviest nodes:", "", "| node | operator | CPU cycles |",
              "|---:|---|---:|"]
    lines += [f"| {index} | {op} | {cycles:,} |"
              for index, op, cycles in sorted(rows, key=lambda r: -r[2])[:10]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="mobilenet_v3_small")
    parser.add_argument("--kernels", default="auto")
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_rsp_profile") as tmp:
        tree = instrumented_tree(Path(tmp) / "tree")
        rom = build_rom(tree, Path(tmp) / "ws", args.model, args.kernels)
        rows = node_cycles(run_rom_cen64(rom, timeout=args.timeout).lines)
    command = (f"python -m tools.bench.bench_rsp_profile --model {args.model} "
               f"--kernels {args.kernels}")
    text = section(args.model, args.kernels, rows, macs(build(args.model)), command)
    print(text)
    if args.write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
