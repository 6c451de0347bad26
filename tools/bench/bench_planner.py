"""Time every allocation strategy on a synthetic 1000-buffer problem.

The problem looks like a deep CNN's activations: a chain (each buffer read by
the next step), residual skips held for a few steps, and a few long-lived
buffers, with sizes from 256 bytes to 96 KiB. Prints a markdown table.

    python tools/bench/bench_planner.py [--buffers 1000] [--seed 0] [--work N] [--deadline S]
"""

from __future__ import annotations

import argparse
import random
import time

from dnn64build.planner.allocate import HEURISTICS, allocate
from dnn64build.planner.checker import check_intervals
from dnn64build.planner.exact import WORK_BUDGET, ExactParams
from dnn64build.planner.problem import Buffer, Problem, lower_bound


def synthetic_problem(count: int, seed: int) -> Problem:
    rng = random.Random(seed)
    buffers = []
    for i in range(count):
        kind = rng.random()
        if kind < 0.75:
            span = 2  # produced at step i, read at i + 1
        elif kind < 0.97:
            span = rng.randint(3, 12)  # a residual skip
        else:
            span = rng.randint(50, 300)  # long-lived (e.g. an encoder feature map)
        size = rng.choice([256, 1024, 4096, 16384, 32768, 65536, 98304]) + rng.randint(0, 64) * 16
        buffers.append(Buffer(f"t{i}", i, min(i + span, count + 1), size))
    return Problem.of(buffers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--buffers", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=int, default=WORK_BUDGET,
                        help="work budget of the exact search (exact and auto)")
    parser.add_argument("--deadline", type=float, default=None,
                        help="opt-in wall-clock limit for the exact search, in seconds")
    args = parser.parse_args()
    problem = synthetic_problem(args.buffers, args.seed)
    bound = lower_bound(problem).bytes
    print(f"{args.buffers} buffers (seed {args.seed}), lower bound {bound} bytes\n")
    print("| algorithm | arena bytes | over bound | seconds | outcome |")
    print("|---|---:|---:|---:|---|")
    for algorithm in (*HEURISTICS, "exact", "auto"):
        start = time.perf_counter()
        result = allocate(problem, algorithm, exact_params=ExactParams(work_budget=args.work),
                          deadline_s=args.deadline)
        seconds = time.perf_counter() - start
        rows = [(b.id, b.lower, b.upper, b.size, b.alignment, result.offsets[b.id])
                for b in problem.buffers]
        valid = check_intervals(rows) is None
        over = 100.0 * (result.arena_bytes - bound) / bound
        name = algorithm if algorithm != "auto" else f"auto (chose {result.algorithm})"
        print(f"| {name} | {result.arena_bytes} | {over:.2f}% | {seconds:.2f} | "
              f"{result.outcome}{'' if valid else ' INVALID'} |")


if __name__ == "__main__":
    main()
