"""docs/operators.md is what tools/op_coverage.py generates from the op tables."""

from __future__ import annotations

from dnn64build.codegen.ops_int8 import INT8_EMITTERS
from dnn64build.codegen.rsp_routes import RSP_ROUTES
from dnn64build.frontend.limits import LIMITS
from dnn64build.frontend.normalize import NORMALISERS
from tools.op_coverage import DOC, coverage_markdown


def test_operators_doc_is_generated() -> None:
    assert DOC.read_text() == coverage_markdown(), "run: python -m tools.op_coverage"


def test_limits_and_rsp_routes_name_supported_ops() -> None:
    assert set(LIMITS) <= set(NORMALISERS)
    assert set(RSP_ROUTES) <= set(INT8_EMITTERS)
