"""The n64_model rule's enums (restated: the manifest layer does not import the compiler)
are the compiler's own choices."""

from __future__ import annotations

from dnn64build.planner.allocate import ALGORITHMS
from dnn64build.planner.fusion.records import FUSION_MODES, INPUT_MODES, OUTPUT_MODES
from dnn64build.planner.resident import WEIGHT_MODES
from dnn64build.planner.schedule import SCHEDULERS
from dnn64build.quant.calibrate import METHODS
from rules import n64_model


def test_planner_choices_match_the_planner() -> None:
    assert sorted(n64_model.ALGORITHMS) == sorted(ALGORITHMS)
    assert sorted(n64_model.FUSION_MODES) == sorted(FUSION_MODES)
    assert sorted(n64_model.INPUT_MODES) == sorted(INPUT_MODES)
    assert sorted(n64_model.OUTPUT_MODES) == sorted(OUTPUT_MODES)
    assert sorted(n64_model.WEIGHT_MODES) == sorted(WEIGHT_MODES)
    # The manifest leaves out "search" (the searched order even where the ONNX order
    # peaks lower): auto already takes the better of the two.
    assert sorted(n64_model.SCHEDULERS) == sorted(set(SCHEDULERS) - {"search"})


def test_calibration_methods_match_the_quantiser() -> None:
    assert sorted(n64_model.CALIBRATION_METHODS) == sorted(METHODS)
