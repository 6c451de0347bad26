"""``dnn64build plan`` (a model's memory plan) and ``plan-buffers`` (a standalone problem)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from dnn64build.commands.build import build
from dnn64build.errors import UserError
from dnn64build.rules_api import OFFER_PLAN
from dnn64build.workspace.root import OUTPUT_BASE


def plan_command(target: str, *, as_json: bool) -> int:
    """Build and show the memory plan of a target whose rule offers one (build says so
    when it does not: it has no plan outputs)."""
    outcome = build([target], group=OFFER_PLAN, quiet_summary=as_json, one_for="plan")
    entry = outcome.index["targets"][outcome.labels[0]]
    files = {k: outcome.root / OUTPUT_BASE / p for k, p in entry["info"][OFFER_PLAN].items()}
    if as_json:
        print(files["plan"].read_text(), end="")
    else:
        print(files["report"].read_text(), end="")
        print(f"memory timeline: {os.path.normpath(files['timeline'])}")
    return 0


def plan_buffers_command(
    problem: Path, algorithm: str, capacity: int | None, output: Path | None, *,
    budget: int | None = None, timeout: float | None = None, first_fit: bool = False,
) -> int:
    from dnn64build.planner.csvio import plan_buffers_csv

    if not problem.is_file():
        raise UserError(f"no such problem file: {problem}")
    if budget is not None and budget <= 0:
        raise UserError(f"--budget {budget} must be positive")
    if timeout is not None and timeout <= 0:
        raise UserError(f"--timeout {timeout} must be positive")
    if first_fit and (capacity is None or algorithm not in ("exact", "auto")):
        raise UserError("--first-fit needs --capacity and --algorithm exact or auto",
                        hint="it stops the exact search at the first plan within the capacity")
    out = output or problem.with_suffix(".out.csv")
    result = plan_buffers_csv(problem, out, algorithm, capacity, work_budget=budget,
                              deadline_s=timeout, first_fit=first_fit)
    print(result.summary())
    print(f"wrote {out}")
    print(result.search_report(), file=sys.stderr)
    return 0

