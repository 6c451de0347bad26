"""Run-length coding of a dag group's firing table, so the table's size does not grow with
the image (codegen/fused_dag.py; kernels: dnn64_next_firing).

A firing is a row of integers: its stage, then fields (rows, held rows) that advance by a
fixed step from one period of the streaming to the next. The coded table is a list of
runs ``(first, count, times)`` over template rows: run k stands for template rows
[first, first + count) repeated ``times`` times, repetition r adding r times each row's
step to every field but the stage. A steady state of any length is one run; what is
left is the start and the end of the image, whose length depends on the kernels, not on
the image's height.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

MAX_PERIOD = 128  # the longest repeated block looked for (firings)
RUN_BYTES = 12  # a run: three int32
FIELD_BYTES = 2  # a template field or step: int16


@dataclass(frozen=True)
class CodedFirings:
    """``templates``: per template row the stage, the fields, then each field's step;
    ``runs``: (first template, count, times)."""

    templates: tuple[tuple[int, ...], ...]
    runs: tuple[tuple[int, int, int], ...]

    def decode(self) -> list[tuple[int, ...]]:
        """The firing rows the runs stand for (what dnn64_next_firing walks)."""
        out = []
        for first, count, times in self.runs:
            for r in range(times):
                for row in self.templates[first:first + count]:
                    half = (len(row) + 1) // 2
                    out.append((row[0], *(v + r * s for v, s in
                                          zip(row[1:half], row[half:], strict=True))))
        return out


def code_firings(rows: Sequence[Sequence[int]]) -> CodedFirings:
    """The smallest coding (in bytes, RUN_BYTES a run and FIELD_BYTES a template field)
    of ``rows``, each its stage then its fields."""
    return _code(tuple(tuple(int(v) for v in row) for row in rows))


@lru_cache(maxsize=256)
def _code(rows: tuple[tuple[int, ...], ...]) -> CodedFirings:
    n = len(rows)
    if n == 0:
        return CodedFirings((), ())
    a = np.asarray(rows, dtype=np.int64)
    row_bytes = FIELD_BYTES * (2 * a.shape[1] - 1)
    periods = np.arange(1, min(MAX_PERIOD, n // 2) + 1)
    repeats = np.array([_most_repeats(a, int(p)) for p in periods]).reshape(len(periods), n)
    # best[i]: bytes of the best coding of rows[i:]; literal[i]: the same, given that a run
    # of rows as they are (times 1) is open at i and its RUN_BYTES already paid
    best = np.zeros(n + 1, dtype=np.int64)
    literal = np.zeros(n + 1, dtype=np.int64)
    go_on = [False] * n  # the open run of rows as they are takes row i + 1 too
    pick: list[tuple[int, int]] = [(1, 1)] * n  # a run at i: (count, times); times 1: open
    for i in range(n - 1, -1, -1):
        go_on[i] = i + 1 < n and literal[i + 1] < best[i + 1]
        literal[i] = row_bytes + (literal[i + 1] if go_on[i] else best[i + 1])
        best[i] = RUN_BYTES + literal[i]
        times = repeats[:, i]
        ok = times >= 2
        if ok.any():
            p, t = periods[ok], times[ok]
            costs = RUN_BYTES + row_bytes * p + best[i + p * t]
            k = int(np.argmin(costs))
            if costs[k] < best[i]:
                best[i], pick[i] = costs[k], (int(p[k]), int(t[k]))
    templates: list[tuple[int, ...]] = []
    runs = []
    i = 0
    while i < n:
        count, times = pick[i]
        if times == 1:  # rows as they are, as long as the open run goes on
            while go_on[i + count - 1]:
                count += 1
        step = a[i + count:i + 2 * count, 1:] - a[i:i + count, 1:] if times > 1 else (
            np.zeros((count, a.shape[1] - 1), dtype=np.int64))
        runs.append((len(templates), count, times))
        templates += [(*rows[i + j], *(int(s) for s in step[j])) for j in range(count)]
        i += count * times
    return CodedFirings(tuple(templates), tuple(runs))


def _most_repeats(a: np.ndarray, p: int) -> np.ndarray:
    """Per start row i, the most times rows [i, i + p) repeat from i with a constant step
    (the same stages, every field advancing by the same amount each period)."""
    n = len(a)
    same_stage = a[p:, 0] == a[:-p, 0]  # row k and row k + p, k < n - p
    step = a[p:, 1:] - a[:-p, 1:]
    same_step = np.all(step[p:] == step[:-p], axis=1)  # k < n - 2p
    start = np.arange(n)
    # times t needs same_stage over [i, i + (t - 1)p) and same_step over [i, i + (t - 2)p)
    by_stage = (_next_false(same_stage, n) - start) // p + 1
    by_step = (_next_false(same_step, n) - start) // p + 2
    return np.minimum.reduce([by_stage, by_step, (n - start) // p])


def _next_false(ok: np.ndarray, n: int) -> np.ndarray:
    """Per i < n, the first k >= i where ``ok[k]`` is false (len(ok) past its end)."""
    bad = np.append(np.flatnonzero(~ok), len(ok))
    at = np.minimum(np.searchsorted(bad, np.arange(n)), len(bad) - 1)
    return np.maximum(bad[at], np.arange(n))
