"""Wrong results from odd data, third round (issue 25): NaN in an output read as a match,
integer inputs wrapped into int8, calibration data of zeros or complex numbers. Each is a
mismatch, or one clean error naming the input."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from dnn64build.commands.run import load_inputs
from dnn64build.errors import UserError
from dnn64build.quant import quantize_graph
from tests.build.conftest import MODEL, Workspace, tiny_mlp
from tests.quant.quant_testlib import to_graph

# What the NaN output was compared with when it was called "match (bit-exact)".
_GOT = [{"y": np.array([[np.nan, -2.12, 0.46, -0.64]], np.float32)}]


def _compare(got: list[dict], want: list[dict], exact: set[str] = frozenset()) -> str:
    from dnn64build.commands.compare import compare_outputs  # run and test both use it

    return compare_outputs(got, want, 1e-4, set(exact))


@pytest.mark.parametrize("exact", [set(), {"y"}])
def test_nan_in_an_output_is_a_mismatch(exact: set[str]) -> None:
    verdict = _compare(_GOT, [{"y": np.array([[1, 2, 3, 4]], np.float32)}], exact)
    assert verdict.startswith("MISMATCH (output 'y': 1 value(s) NaN or infinite on one side "
                              "only, first at [0, 0]: nan vs 1)")


@pytest.mark.parametrize("got, want", [
    ([np.inf, 1.0], [1.0, 1.0]),
    ([-np.inf, 1.0], [np.inf, 1.0]),
    ([1.0, 2.0], [np.nan, 2.0]),  # a NaN in the reference scaled the error to NaN
])
def test_an_infinity_or_nan_on_one_side_is_a_mismatch(got: list[float],
                                                      want: list[float]) -> None:
    verdict = _compare([{"y": np.array(got, np.float32)}], [{"y": np.array(want)}])
    assert verdict.startswith("MISMATCH (output 'y': 1 value(s) NaN or infinite")


def test_the_same_nan_and_infinity_on_both_sides_match() -> None:
    values = np.array([np.nan, np.inf, -np.inf, 0.5], np.float32)
    assert _compare([{"y": values}], [{"y": values.copy()}], {"y"}) == "match (bit-exact)"


def test_an_integer_output_is_compared_by_value_not_wrapped() -> None:
    """An expected 300 is no int8 44 (the old bit-exact check cast the reference first)."""
    got = [{"y": np.array([44, 1], np.int8)}]
    assert _compare(got, [{"y": np.array([300, 1])}], {"y"}).startswith(
        "MISMATCH (output 'y' is not bit-exact: differs by up to 256)")
    assert _compare(got, [{"y": np.array([44, 1])}], {"y"}) == "match (bit-exact)"


def test_test_finds_a_nan_against_expected_outputs(ws_a: Workspace) -> None:
    """End to end: ``test`` on the host, with expected outputs holding a NaN: the program
    matches the reference executor, not the expected outputs (exit status 1)."""
    np.savez(ws_a.root / "models" / "t.npz", input=np.ones((1, 1, 4), np.float32))
    np.savez(ws_a.root / "models" / "want.npz",
             output=np.array([[[np.nan, 1.0, 1.0]]], np.float32))
    ws_a.write("models/BUILD.yaml", MODEL + "    test: {inputs: t.npz, outputs: want.npz}\n")
    proc = ws_a.run("test", "//models:a", "--platform", "host", check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAILED //models:a (host): reference executor: match" in proc.stdout
    assert "expected outputs: MISMATCH (output 'output': 1 value(s) NaN or infinite on one " \
        "side only, first at [0, 0]:" in proc.stdout


_INT8_INPUT = {"name": "x", "shape": [1, 4], "dtype": "int8", "scale": 0.5, "zero_point": 3}


def _inputs(tmp_path: Path, value: np.ndarray) -> np.ndarray:
    np.savez(tmp_path / "in.npz", x=value)
    return load_inputs(tmp_path / "in.npz", [{"symbol": "m", "inputs": [_INT8_INPUT]}],
                        ["//:m"])["m"][0]


@pytest.mark.parametrize("value, shown", [
    (np.array([[300, 0, 0, 0]], np.int32), "from 0 to 300"),
    (np.array([[200, 0, 0, 0]], np.uint8), "from 0 to 200"),
    (np.array([[-129, 0, 0, 127]], np.int64), "from -129 to 127"),
])
def test_integers_outside_int8_are_refused_for_an_int8_input(tmp_path: Path, value: np.ndarray,
                                                             shown: str) -> None:
    """``quantize: {io: int8}`` takes int8 data as it is: 300 became 44, 200 became -56."""
    with pytest.raises(UserError) as refused:
        _inputs(tmp_path, value)
    assert f"input 'x' holds values {shown}, outside int8's -128..127" in str(refused.value)


def test_floats_beyond_float32_are_refused_for_a_float_input(tmp_path: Path) -> None:
    """1e300 as float32 is infinity (with numpy's raw overflow warning)."""
    np.savez(tmp_path / "in.npz", x=np.array([[1e300, 0, 0, 0]]))
    spec = {"name": "x", "shape": [1, 4], "dtype": "float32"}
    with warnings.catch_warnings(), pytest.raises(UserError, match="beyond float32's range"):
        warnings.simplefilter("error")
        load_inputs(tmp_path / "in.npz", [{"symbol": "m", "inputs": [spec]}], ["//:m"])


def test_integers_that_fit_and_floats_reach_an_int8_input(tmp_path: Path) -> None:
    fits = _inputs(tmp_path, np.array([[-128, 0, 5, 127]], np.int32))
    assert fits.dtype == np.int8 and fits.tolist() == [[[-128, 0, 5, 127]]]
    # floats are quantised: round(x / 0.5) + 3, clamped
    assert _inputs(tmp_path, np.array([[1.0, -1.0, 100.0, 0.0]], np.float32)).tolist() == \
        [[[5, 1, 127, 3]]]


@pytest.mark.parametrize("samples, wanted", [
    (np.zeros((8, 1, 4), np.float32), "input 'input' is zero in all 8 sample(s)"),
    (np.ones((8, 1, 4), np.complex64), "array 'input' holds complex64 values, not real numbers"),
])
def test_calibration_of_zeros_or_complex_numbers_is_refused(
    tmp_path: Path, samples: np.ndarray, wanted: str
) -> None:
    """All-zero data calibrated every range to nothing (88% output error on real inputs);
    complex data printed numpy's ComplexWarning and was cast to its real part."""
    graph = to_graph(tiny_mlp(1), tmp_path)
    with warnings.catch_warnings(), pytest.raises(UserError, match=re.escape(wanted)):
        warnings.simplefilter("error")  # numpy's ComplexWarning among them
        quantize_graph(graph, [{"input": s} for s in samples])
