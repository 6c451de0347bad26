"""Standalone problem files: read ``id,lower,upper,size[,alignment]`` CSV (half-open
lifetimes), plan it, write the same rows with an ``offset`` column added.

``plan_buffers_csv`` is what ``dnn64build plan-buffers`` calls.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, replace
from pathlib import Path

from dnn64build.atomic_write import write_text_if_changed
from dnn64build.errors import UserError
from dnn64build.planner.allocate import ALGORITHMS, Trial, allocate
from dnn64build.planner.exact import ExactParams
from dnn64build.planner.problem import DEFAULT_ALIGNMENT, Buffer, Problem, lower_bound

REQUIRED = ("id", "lower", "upper", "size")
OPTIONAL = ("alignment", "offset")  # an input "offset" column is ignored and rewritten


@dataclass(frozen=True)
class CsvPlanResult:
    algorithm: str  # the strategy whose plan was written
    arena_bytes: int
    lower_bound_bytes: int
    outcome: str
    trials: tuple[Trial, ...]

    def search_report(self) -> str:
        """What the search did, for stderr: nodes, bound, outcome, time."""
        seconds = sum(t.seconds for t in self.trials)
        nodes = sum(t.nodes or 0 for t in self.trials)
        note = {
            "optimal": "proven optimal",
            "budget_exhausted": "stopped short of a proof: work budget spent (raise --budget)",
            "deadline_exceeded": "stopped short of a proof: --timeout reached",
            "fits": "within --capacity; --first-fit: not minimised",
        }.get(self.outcome, self.outcome)
        return (f"{self.algorithm}: {nodes} search nodes, lower bound {self.lower_bound_bytes} "
                f"bytes, arena {self.arena_bytes} bytes, {self.outcome} ({note}), "
                f"{seconds:.2f} s")

    def summary(self) -> str:
        lines = [
            f"arena {self.arena_bytes} bytes (lower bound {self.lower_bound_bytes}), "
            f"{self.algorithm}, {self.outcome}"
        ]
        for t in self.trials:
            arena = "-" if t.arena_bytes is None else str(t.arena_bytes)
            lines.append(f"  {t.algorithm:<20} {arena:>12} bytes {t.seconds:8.3f} s  {t.outcome}")
        return "\n".join(lines)


def read_problem_csv(path: str | os.PathLike[str]) -> Problem:
    """Parse a problem CSV; UserError with ``file:line`` for anything wrong."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read problem file: {exc}", where=str(path)) from exc
    rows = csv.reader(io.StringIO(text))
    header = next(rows, None)
    if header is None:
        raise UserError("empty file; expected a header id,lower,upper,size[,alignment]",
                        where=f"{path}:1")
    header = [h.strip() for h in header]
    unknown = [h for h in header if h not in REQUIRED + OPTIONAL]
    missing = [h for h in REQUIRED if h not in header]
    if unknown or missing or len(set(header)) != len(header):
        raise UserError(
            f"bad header {','.join(header)!r}"
            + (f": missing {', '.join(missing)}" if missing else "")
            + (f": unknown {', '.join(unknown)}" if unknown else ""),
            where=f"{path}:1",
            hint="the header must be id,lower,upper,size with an optional alignment column",
        )
    buffers: list[Buffer] = []
    seen: dict[str, int] = {}
    for row in rows:
        line = rows.line_num
        where = f"{path}:{line}"
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise UserError(f"expected {len(header)} fields, found {len(row)}", where=where)
        cells = {h: cell.strip() for h, cell in zip(header, row, strict=True)}
        name = cells["id"]
        if not name:
            raise UserError("empty id", where=where)
        if name in seen:
            raise UserError(f"duplicate id {name!r} (first on line {seen[name]})", where=where)
        seen[name] = line
        values = {}
        for key in ("lower", "upper", "size", "alignment"):
            if key not in cells:
                continue
            try:
                values[key] = int(cells[key])
            except ValueError:
                raise UserError(f"{key} {cells[key]!r} is not an integer", where=where) from None
            if values[key] < 0:
                raise UserError(f"{key} {values[key]} is negative", where=where)
        alignment = values.get("alignment", DEFAULT_ALIGNMENT)
        if alignment == 0 or alignment & (alignment - 1):
            raise UserError(f"alignment {alignment} is not a power of two", where=where)
        if values["lower"] >= values["upper"]:
            raise UserError(
                f"empty lifetime [{values['lower']}, {values['upper']})", where=where,
                hint="lifetimes are half-open: upper must be greater than lower",
            )
        buffers.append(Buffer(name, values["lower"], values["upper"], values["size"], alignment))
    return Problem.of(buffers)


def plan_buffers_csv(
    in_path: str | os.PathLike[str],
    out_path: str | os.PathLike[str] | None = None,
    algorithm: str = "auto",
    capacity: int | None = None,
    *,
    work_budget: int | None = None,
    deadline_s: float | None = None,
    first_fit: bool = False,
) -> CsvPlanResult:
    """Plan a problem CSV and (if ``out_path``) write it with offsets, atomically.

    The exact search (``exact``, ``auto``) stops at its work budget
    (``work_budget`` units, default ``WORK_BUDGET``), so the output depends only
    on the input; ``deadline_s`` (opt-in) also stops it after that many seconds.
    ``first_fit`` (with a capacity): stop at the first plan within it.

    Raises UserError for a bad file, an unknown algorithm, or a capacity that
    the chosen algorithm cannot meet (nothing is written then).
    """
    if algorithm not in ALGORITHMS:
        raise UserError(
            f"unknown algorithm {algorithm!r}", hint=f"choose one of {', '.join(ALGORITHMS)}"
        )
    problem = read_problem_csv(in_path)
    if capacity is not None and capacity < 0:
        raise UserError(f"capacity {capacity} is negative")
    largest = max(problem.buffers, key=lambda b: b.footprint, default=None)
    if capacity is not None and largest is not None and largest.footprint > capacity:
        raise UserError(
            f"capacity {capacity} is below buffer {largest.id!r} alone "
            f"({largest.footprint} bytes with its alignment)",
            where=str(in_path),
            hint=f"raise the capacity to at least {lower_bound(problem).bytes}",
        )
    peak = lower_bound(problem)
    if capacity is not None and peak.bytes > capacity:
        raise UserError(
            f"no plan fits {capacity} bytes: {peak.bytes} bytes are live at step {peak.step}",
            where=str(in_path),
            hint=f"raise the capacity to at least {peak.bytes}",
        )
    params = ExactParams(first_fit=first_fit)
    if work_budget is not None:
        params = replace(params, work_budget=work_budget)
    allocation = allocate(problem, algorithm, capacity=capacity, exact_params=params,
                          deadline_s=deadline_s)
    if allocation.offsets is None:
        hint = "try --algorithm auto or exact, or raise the capacity"
        if algorithm in ("exact", "auto"):  # the outcome is the exact search's
            hint = {
                "budget_exhausted": "the search stopped short of an answer: raise --budget",
                "deadline_exceeded": "the search stopped short of an answer: raise --timeout",
                "infeasible": "proven: no plan fits; raise the capacity",
            }[allocation.outcome]
        raise UserError(
            f"{algorithm} found no plan within {capacity} bytes ({allocation.outcome})",
            where=str(in_path), hint=hint,
        )
    if out_path is not None:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["id", "lower", "upper", "size", "alignment", "offset"])
        for b in problem.buffers:
            writer.writerow([b.id, b.lower, b.upper, b.size, b.alignment,
                             allocation.offsets[b.id]])
        write_text_if_changed(Path(out_path), out.getvalue())
    return CsvPlanResult(
        allocation.algorithm, allocation.arena_bytes or 0, allocation.lower_bound_bytes,
        allocation.outcome, allocation.trials,
    )

