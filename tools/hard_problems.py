"""Hard allocation problems with a known optimum, for the exact planner's benchmark.

Every instance comes with a *planted* packing whose arena equals the live-bytes
lower bound at some step (the *witness* step, where the packing is full), so the
planted arena is the optimum: no plan is smaller, and one of that size exists.
Two families:

- ``planted_random``: a random skyline. The arena [0, capacity) starts cut into
  buffers; at each step some buffers end, each run of adjacent freed bytes is
  re-cut into new buffers starting there. Every step is full. Then buffers not
  live at the witness step are dropped at random (slack elsewhere), and the rest
  are perturbed (below).
- ``merged_traces``: real model activations (planned at their bound), several
  models stacked in address space with their peak steps lined up in time, so the
  merged peak is the sum of the arenas; then perturbed.

``perturb`` keeps the planted packing valid and the witness step full: it splits
buffers (in time at the same offset, or in two stacked halves) and grows
lifetimes and sizes into bytes the packing leaves free.

    python tools/hard_problems.py OUT_DIR [--count 8] [--buffers 100 500] [--seed 0] [--drop 0.3]

writes ``<family>-<n>-<seed>.<capacity>.csv`` files (id,lower,upper,size,alignment).
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dnn64build.planner.problem import Buffer, Problem, lower_bound  # noqa: E402

ALIGNMENT = 16
Block = tuple[int, int, int, int]  # (lower, upper, offset, size): one planted buffer


@dataclass(frozen=True)
class Planted:
    """A problem, a packing of it, and its optimum (the packing's arena, which
    equals the live-bytes lower bound)."""

    name: str
    problem: Problem
    offsets: dict[str, int]
    optimum: int


def _instance(name: str, blocks: Sequence[Block]) -> Planted:
    blocks = sorted(blocks)
    problem = Problem.of(
        Buffer(f"b{i}", lo, up, size, ALIGNMENT) for i, (lo, up, _, size) in enumerate(blocks)
    )
    offsets = {f"b{i}": off for i, (_, _, off, _) in enumerate(blocks)}
    optimum = max(off + size for _, _, off, size in blocks)
    if lower_bound(problem).bytes != optimum:
        raise AssertionError(f"{name}: the planted packing is not tight (a generator bug)")
    return Planted(name, problem, offsets, optimum)


def _cut(rng: random.Random, start: int, end: int, pieces: int) -> list[tuple[int, int]]:
    """[start, end) cut at up to ``pieces - 1`` aligned points: (offset, size) runs."""
    units = (end - start) // ALIGNMENT
    points = sorted(rng.sample(range(1, units), min(pieces - 1, units - 1))) if units > 1 else []
    edges = [start, *(start + p * ALIGNMENT for p in points), end]
    return [(a, b - a) for a, b in zip(edges, edges[1:], strict=False) if b > a]


def skyline(rng: random.Random, count: int, capacity: int) -> tuple[list[Block], int]:
    """About ``count`` buffers tiling [0, capacity) at every step; returns the
    blocks and the number of steps."""
    live = [(0, off, size) for off, size in _cut(rng, 0, capacity, rng.randint(2, 6))]
    blocks: list[Block] = []
    step = 0
    while len(blocks) + len(live) < count:
        step += 1
        ending = {k for k in range(len(live)) if rng.random() < 0.3} or {rng.randrange(len(live))}
        keep = []
        run: list[int] = []  # the offsets and sizes of adjacent ending buffers
        live.sort(key=lambda b: b[1])
        for k, (lo, off, size) in enumerate(live):
            if k in ending:
                blocks.append((lo, step, off, size))
                run = [run[0] if run else off, off + size]
                if k + 1 < len(live) and k + 1 in ending:
                    continue
                keep += [(step, o, s) for o, s in _cut(rng, run[0], run[1], rng.randint(1, 3))]
                run = []
            else:
                keep.append((lo, off, size))
        live = keep
    step += 1
    blocks += [(lo, step, off, size) for lo, off, size in live]
    return blocks, step


def planted_random(seed: int, count: int, capacity: int = 1 << 20, drop: float = 0.3) -> Planted:
    """A random skyline of about ``count`` buffers, a fraction ``drop`` of those
    not live at the witness step removed, then perturbed."""
    rng = random.Random(seed)
    blocks, steps = skyline(rng, int(count * 0.8), capacity)
    witness = rng.randrange(steps)
    blocks = [b for b in blocks if b[0] <= witness < b[1] or rng.random() >= drop]
    return _instance(f"random{round(100 * drop)}-{count}-{seed}", perturb(rng, blocks, count))


def merged_traces(seed: int, traces: Sequence[Planted], count: int) -> Planted:
    """Model traces stacked in address space, peaks lined up; then perturbed
    (split and grown) to about ``count`` buffers."""
    rng = random.Random(seed)
    picked: list[Planted] = []
    while sum(len(p.problem) for p in picked) < count * 0.6 or len(picked) < 2:
        picked.append(rng.choice(traces))
    peaks = [lower_bound(p.problem).step for p in picked]
    line = max(peaks)
    blocks: list[Block] = []
    base = 0
    for trace, peak in zip(picked, peaks, strict=True):
        shift = line - peak
        for b in trace.problem.buffers:
            blocks.append((b.lower + shift, b.upper + shift, base + trace.offsets[b.id],
                           b.footprint))
        base += trace.optimum
    return _instance(f"models-{count}-{seed}", perturb(rng, blocks, count))


def perturb(rng: random.Random, blocks: list[Block], count: int) -> list[Block]:
    """Split blocks until there are ``count``, then grow each one into free space."""
    blocks = list(blocks)
    while len(blocks) < count:
        k = rng.randrange(len(blocks))
        lo, up, off, size = blocks[k]
        if up - lo > 1 and rng.random() < 0.5:
            mid = rng.randint(lo + 1, up - 1)
            blocks[k:k + 1] = [(lo, mid, off, size), (mid, up, off, size)]
        elif size >= 2 * ALIGNMENT:
            low = rng.randint(1, size // ALIGNMENT - 1) * ALIGNMENT
            blocks[k:k + 1] = [(lo, up, off, low), (lo, up, off + low, size - low)]
    return grow(rng, blocks)


def grow(rng: random.Random, blocks: list[Block]) -> list[Block]:
    """Extend lifetimes and sizes at random as far as the packing leaves room
    (never past the arena, so the witness step, being full, is untouched)."""
    arena = max(off + size for _, _, off, size in blocks)
    end = max(up for _, up, _, _ in blocks)
    out = list(blocks)
    for k in rng.sample(range(len(out)), len(out)):
        lo, up, off, size = out[k]
        others = [b for j, b in enumerate(out) if j != k]
        in_bytes = [b for b in others if b[2] < off + size and off < b[2] + b[3]]
        # Earliest start and latest end that stay clear of blocks in our bytes.
        floor_t = max((b[1] for b in in_bytes if b[1] <= lo), default=0)
        ceil_t = min((b[0] for b in in_bytes if b[0] >= up), default=end)
        lo = rng.randint(floor_t, lo) if rng.random() < 0.5 else lo
        up = rng.randint(up, ceil_t) if rng.random() < 0.5 else up
        in_time = [b for b in others if b[0] < up and lo < b[1] and b[2] >= off + size]
        room = min([b[2] for b in in_time] + [arena]) - off
        if rng.random() < 0.5 and room > size:
            size = rng.randint(size // ALIGNMENT, room // ALIGNMENT) * ALIGNMENT
        out[k] = (lo, up, off, size)
    return out


def write_csv(path: Path, planted: Planted) -> None:
    lines = ["id,lower,upper,size,alignment"]
    lines += [f"{b.id},{b.lower},{b.upper},{b.size},{b.alignment}" for b in planted.problem.buffers]
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--count", type=int, default=8, help="instances per size")
    parser.add_argument("--buffers", type=int, nargs="+", default=[100, 500])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--drop", type=float, default=0.3,
                        help="fraction of the buffers away from the witness step removed")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for n in args.buffers:
        for k in range(args.count):
            planted = planted_random(args.seed + k, n, drop=args.drop)
            write_csv(args.out / f"{planted.name}.{planted.optimum}.csv", planted)


if __name__ == "__main__":
    main()
