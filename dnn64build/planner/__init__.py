"""The memory planner: schedule the ops, group aliases, place buffers in one arena.

Entry points: ``plan_graph`` (IR graph -> plan.json dict, planned as a ``PlanParams``
says), ``plan_buffers_csv``
(standalone problem files), ``allocate`` (the abstract problem), ``check_plan``
(the independent checker), ``render_ascii`` / ``render_svg`` (pictures).
See docs/planner.md.
"""

from dnn64build.planner.allocate import ALGORITHMS, Allocation, Trial, allocate
from dnn64build.planner.checker import Violation, check_intervals, check_plan
from dnn64build.planner.csvio import CsvPlanResult, plan_buffers_csv, read_problem_csv
from dnn64build.planner.dagplan import PlanParams, plan_dag
from dnn64build.planner.exact import ExactOutcome, ExactParams, ExactResult, solve_exact
from dnn64build.planner.graph_plan import plan_graph
from dnn64build.planner.problem import Buffer, Problem, lower_bound
from dnn64build.planner.report import render_ascii, render_svg
from dnn64build.planner.schedule import SCHEDULERS, Dag, Op, Schedule, schedule

__all__ = [
    "ALGORITHMS", "SCHEDULERS", "Allocation", "Buffer", "CsvPlanResult", "Dag", "ExactOutcome",
    "ExactParams", "ExactResult", "Op", "PlanParams", "Problem", "Schedule", "Trial", "Violation",
    "allocate",
    "check_intervals", "check_plan", "lower_bound", "plan_buffers_csv", "plan_dag", "plan_graph",
    "read_problem_csv", "render_ascii", "render_svg", "schedule", "solve_exact",
]
