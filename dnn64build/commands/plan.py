"""``dnn64build plan`` (a model's memory plan) and ``plan-buffers`` (a standalone problem)."""

from __future__ import annotations

import sys
from pathlib import Path

from dnn64build.commands.build import build
from dnn64build.errors import UserError
from dnn64build.workspace.labels import parse_label
from dnn64build.workspace.root import OUTPUT_BASE


def plan_command(target: str, *, as_json: bool) -> int:
    outcome = build([target], group="plan", quiet_summary=as_json, one_for="plan")
    index = outcome.index["targets"][outcome.labels[0]]
    if index["rule"] != "n64_model":
        raise UserError(f"{outcome.labels[0]} is an {index['rule']}, not an n64_model")
    plan_dir = _plan_dir(outcome.root, outcome.labels[0])
    if as_json:
        print((plan_dir / "plan.json").read_text(), end="")
    else:
        print((plan_dir / "report.txt").read_text(), end="")
        print(f"memory timeline: {plan_dir / 'timeline.svg'}")
    return 0


def plan_buffers_command(
    problem: Path, algorithm: str, capacity: int | None, output: Path | None, *,
    budget: int | None = None, timeout: float | None = None,
) -> int:
    from dnn64build.planner.csvio import plan_buffers_csv

    if not problem.is_file():
        raise UserError(f"no such problem file: {problem}")
    if budget is not None and budget <= 0:
        raise UserError(f"--budget {budget} must be positive")
    if timeout is not None and timeout <= 0:
        raise UserError(f"--timeout {timeout} must be positive")
    out = output or problem.with_suffix(".out.csv")
    result = plan_buffers_csv(problem, out, algorithm, capacity, work_budget=budget,
                              deadline_s=timeout)
    print(result.summary())
    print(f"wrote {out}")
    print(result.search_report(), file=sys.stderr)
    return 0


def _plan_dir(root: Path, label: str) -> Path:
    return root / OUTPUT_BASE / "bin" / parse_label(label).path / "plan"
