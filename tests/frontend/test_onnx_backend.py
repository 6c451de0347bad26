"""The onnx package's backend test data through the tool on the host (tools/onnx_backend.py).

Every case passes (matches the expected outputs shipped with onnx, at the backend tests'
tolerance) or is refused with one message naming the node and its op, an input or a
feature; none is wrong, none is an internal error. data/onnx_backend_pass.txt lists the
cases checked to pass (each against its shipped outputs): none of them may regress.
The light/ classics (ONNX Model Zoo, up to 140 M weights) run in the slow tier.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tools.onnx_backend import Case, Outcome, backend_cases, classify

PASSING = frozenset((Path(__file__).parent / "data" / "onnx_backend_pass.txt")
                    .read_text().split())
CASES = backend_cases()
SMALL = [case for case in CASES if case.folder != "light"]
LIGHT = [case for case in CASES if case.folder == "light"]
# A refusal names the node with its op, the node's op alone, or the graph input at fault.
NAMED = re.compile(r"node '[^']*' \((op )?\w+[,)]|input '[^']*'")


@pytest.fixture(scope="module")
def small_outcomes(host_cc: str, tmp_path_factory: pytest.TempPathFactory
                   ) -> dict[str, Outcome]:
    return classify(SMALL, tmp_path_factory.mktemp("onnx-backend"))


def check(case: Case, outcome: Outcome) -> None:
    assert outcome.status in ("pass", "refused"), f"{case.key}: {outcome}"
    if outcome.status == "refused":
        first = outcome.detail.splitlines()[0]
        assert NAMED.search(first), f"{case.key}: refusal names no node/op/input: {first}"
        assert "Traceback" not in outcome.detail
    if case.key in PASSING:
        assert outcome.status == "pass", f"{case.key} passed before: {outcome}"


@pytest.mark.parametrize("case", SMALL, ids=lambda case: case.key)
def test_backend_case(case: Case, small_outcomes: dict[str, Outcome]) -> None:
    check(case, small_outcomes[case.key])


def test_pass_count_floor(small_outcomes: dict[str, Outcome]) -> None:
    passed = [key for key, outcome in small_outcomes.items() if outcome.status == "pass"]
    assert len(passed) >= len(PASSING - {case.key for case in LIGHT})


def test_pass_list_names_real_cases() -> None:
    assert {case.key for case in CASES} >= PASSING


@pytest.mark.slow
@pytest.mark.parametrize("case", LIGHT, ids=lambda case: case.key)
def test_light_classic(case: Case, host_cc: str, tmp_path: Path) -> None:
    check(case, classify([case], tmp_path)[case.key])
