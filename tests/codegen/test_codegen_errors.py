"""What code generation refuses, and the exactness of the C literals it prints."""

from __future__ import annotations

import numpy as np
import pytest
from codegen_cases import Case, compile_case, node, onnx_model
from hypothesis import given
from hypothesis import strategies as st

from dnn64build.codegen.cfmt import c_float, c_int
from dnn64build.errors import UserError

UNSUPPORTED = {
    "strided slice": (onnx_model([node("Slice", ["x", "s", "e", "a", "t"])], {"x": [4, 6]},
                                 ["y"], {"s": np.array([0], np.int64),
                                         "e": np.array([6], np.int64),
                                         "a": np.array([1], np.int64),
                                         "t": np.array([2], np.int64)}), "step"),
    "floor": (onnx_model([node("Floor", ["x"])], {"x": [4]}, ["y"]), "Floor"),
    "pad wrap": (onnx_model([node("Pad", ["x", "p"], mode="wrap")], {"x": [2, 3]}, ["y"],
                            {"p": np.array([0, 1, 0, 1], np.int64)}), "wrap"),
}


@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
def test_unsupported_node_is_a_user_error_naming_it(name: str, tmp_path) -> None:
    model, words = UNSUPPORTED[name]
    with pytest.raises(UserError, match=words) as info:
        compile_case(Case(name, model), tmp_path, "m")
    assert info.value.where is not None and "node" in info.value.where


@given(st.floats(width=32, allow_nan=False))
def test_float_literals_are_exact(value: float) -> None:
    text = c_float(value)
    assert text.endswith("f")
    expected = np.float32(value)
    if np.isinf(expected):  # printed as +-FLT_MAX (clamp bounds only)
        expected = np.copysign(np.finfo(np.float32).max, expected)
    parsed = np.float32(float(text[:-1]))
    assert parsed.tobytes() == expected.tobytes()


def test_int_literals() -> None:
    assert c_int(-(2**31)) == "(-2147483647 - 1)"
    assert c_int(2**31 - 1) == "2147483647"
    with pytest.raises(ValueError):
        c_int(2**31)
