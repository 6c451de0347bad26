"""Every zoo model through import, optimise, plan and codegen, run on the host and
compared with onnxruntime."""

from __future__ import annotations

import pytest
from codegen_cases import TOLERANCE, Case, errors_vs_onnxruntime

from tools.zoo import NAMES, build

SLOW = {"resnet18", "resnet50"}


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in NAMES])
def test_zoo_model_matches_onnxruntime(name: str, tmp_path, runtime_cache) -> None:
    error = errors_vs_onnxruntime([Case(name, build(name))], tmp_path, runtime_cache)[name]
    assert error <= TOLERANCE
