"""Where an inference's CPU cycles go: cycles per kind of layer, in cen64, through the real CLI.

    python -m tools.bench.bench_layers [--models mobilenet_v3_small,mnasnet0_5]
        [--mode int8] [--kernels cpu|rsp|auto] [--top 10] [--timeout 1800]

Each model is built as bench_cycles builds it (toolchain bare, ``kernels: cpu``, or the
``--kernels`` given, then planned without fused groups). Then every node's comment in the
generated C (``/* [i] Op "name": ... */``) gets a ``dnn64_print_u64("@P i Op ",
dnn64_ticks())`` before it (``Op@rsp`` for a node whose multiply-accumulates run on the
RSP), and the end of the run one more;
the program is rebuilt (the edited C is newer than its inputs, so only it and what follows
recompile) and the ROM runs in cen64 (cycles = Count x 2) and in mupen64plus, which
advances Count by 2 per instruction (instructions = ticks / 2). The deltas are summed per
kind of node; a Conv's kind gives its kernel size and stride, and whether it is depthwise
(one input channel per group). MACs are counted for Convs only. Each print costs a few
hundred cycles, charged to the node before it.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from dnn64build.emulator.cen64 import run_rom_cen64  # noqa: E402
from dnn64build.emulator.mupen64plus import run_rom  # noqa: E402
from tools.bench.bench_cycles import CycleBench  # noqa: E402

NODE = re.compile(r'^\s*/\* \[(\d+)\] (\w+)( \(on the RSP\))? "', re.M)
MARK = re.compile(r"@P (\S+) (\S+) +(\d+)")
GEOM = re.compile(r"static const dnn64_conv_geom (n\d+)_geom = \{([^}]*)\}")


def instrument(c_file: Path) -> None:
    """Insert the tick prints into a generated model C file (once)."""
    src = c_file.read_text()
    if "@P " in src:
        return
    src = NODE.sub(lambda m: f'    dnn64_print_u64("@P {m[1]} {m[2]}{"@rsp" if m[3] else ""} ", '
                   'dnn64_ticks());\n' + m[0], src)
    body_end = src.rstrip().rindex("}")
    c_file.write_text(src[:body_end] + '    dnn64_print_u64("@P end end ", dnn64_ticks());\n'
                      + src[body_end:])


def deltas(lines: tuple[str, ...]) -> dict[int, tuple[str, int]]:
    """Node index -> (op, Count ticks until the next mark)."""
    marks = [(m[1], m[2], int(m[3])) for m in map(MARK.search, lines) if m]
    return {int(i): (op, t2 - t)
            for (i, op, t), (_, _, t2) in zip(marks, marks[1:], strict=False)}


@dataclass
class Node:
    index: int
    kind: str
    cycles: int
    instructions: float
    macs: int


def conv_kind(fields: dict[str, int]) -> tuple[str, int]:
    """A Conv's kind and MACs from its dnn64_conv_geom initializer."""
    icpg = fields["c_in"] // fields["group"]
    k, s = fields["k_h"], fields["stride_h"]
    macs = (fields["n"] * fields["c_out"] * fields["h_out"] * fields["w_out"] * icpg * k
            * fields["k_w"])
    depthwise = "depthwise " if icpg == 1 and fields["c_in"] > 1 else ""
    return f"Conv {depthwise}{k}x{fields['k_w']} s{s}", macs


def profile(c_file: Path, cen64: tuple[str, ...], mupen: tuple[str, ...]) -> list[Node]:
    src = c_file.read_text()
    geoms = {name: dict((k, int(v)) for k, v in re.findall(r"\.(\w+) = (-?\d+)", body))
             for name, body in GEOM.findall(src)}
    counted = deltas(mupen)
    nodes = []
    for index, (op, ticks) in deltas(cen64).items():
        kind, macs = op, 0
        if f"n{index}" in geoms and op.startswith("Conv"):
            kind, macs = conv_kind(geoms[f"n{index}"])
            kind += op[len("Conv"):]  # "@rsp": its multiply-accumulates ran on the RSP
        nodes.append(Node(index, kind, ticks * 2, counted[index][1] / 2, macs))
    return nodes


def report(name: str, nodes: list[Node], top: int) -> str:
    total = sum(n.cycles for n in nodes)
    kinds: dict[str, list[Node]] = defaultdict(list)
    for n in nodes:
        kinds[n.kind].append(n)
    lines = [f"### {name}", "",
             "| kind | nodes | M cycles | share | M MACs | cycles / MAC | instructions / MAC "
             "| cycles / instruction |", "|---|---|---|---|---|---|---|---|"]
    for kind, group in sorted(kinds.items(), key=lambda kv: -sum(n.cycles for n in kv[1])):
        cycles = sum(n.cycles for n in group)
        instr = sum(n.instructions for n in group)
        macs = sum(n.macs for n in group)
        per_mac = (f"{cycles / macs:.1f}", f"{instr / macs:.1f}") if macs else ("-", "-")
        lines.append(f"| {kind} | {len(group)} | {cycles / 1e6:.1f} | {cycles / total:.1%} | "
                     f"{macs / 1e6:.2f} | {per_mac[0]} | {per_mac[1]} | {cycles / instr:.2f} |")
    lines.append(f"| all | {len(nodes)} | {total / 1e6:.1f} | 100% | "
                 f"{sum(n.macs for n in nodes) / 1e6:.2f} | | | |")
    lines += ["", f"Costliest {top} nodes:", ""]
    for n in sorted(nodes, key=lambda n: -n.cycles)[:top]:
        mac = f", {n.cycles / n.macs:.1f} cycles / MAC" if n.macs else ""
        lines.append(f"- [{n.index}] {n.kind}: {n.cycles / 1e6:.1f} M cycles{mac}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="mobilenet_v3_small,mnasnet0_5")
    parser.add_argument("--mode", default="int8")
    parser.add_argument("--kernels", choices=("cpu", "rsp", "auto"), default="cpu",
                        help="the model's kernels: setting (rsp/auto plan without fused groups, "
                             "whose Convs run their CPU region kernels)")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--timeout", type=float, default=1800.0, help="per emulator run (s)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_layers") as tmp:
        bench = CycleBench(Path(tmp), args.timeout, 2)
        if args.kernels != "cpu":
            bench.target_attrs = f", kernels: {args.kernels}, planner: {{fusion: none}}"
        for name in args.models.split(","):
            bench.add_model(name)
            target = bench._set_target(name, args.mode, "8MiB")
            status, out, _ = bench.cli("build", f"//models:{target}", limit=3600)
            if status != 0:
                print(f"{name}: build failed\n{out[-2000:]}", file=sys.stderr)
                return 1
            out_dir = Path(tmp) / "dnn64-out" / "bin" / "models" / target
            instrument(out_dir / "codegen" / f"m_models_{target}.c")
            status, out, _ = bench.cli("build", f"//models:{target}", limit=3600)
            if status != 0:
                print(f"{name}: rebuild failed\n{out[-2000:]}", file=sys.stderr)
                return 1
            rom = out_dir / f"{target}.z64"
            cen64 = run_rom_cen64(rom, timeout=args.timeout).lines
            mupen = run_rom(rom, timeout=args.timeout).lines
            print(report(f"{name} {args.mode}", profile(
                out_dir / "codegen" / f"m_models_{target}.c", cen64, mupen), args.top))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
