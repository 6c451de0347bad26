"""The output-line protocol, parsed from hand-written lines."""

from __future__ import annotations

import numpy as np
import pytest

from dnn64build.run_protocol import ProtocolError, parse_outputs

META = {"symbol": "m", "outputs": [
    {"name": "f", "shape": [2, 5], "dtype": "float32", "offset": 0, "bytes": 40},
    {"name": "q", "shape": [6], "dtype": "int8", "offset": 48, "bytes": 6}]}
# 1.0, -2.0, 0.5, +inf, -0.0, 3, 4, 5, 6, 7 as IEEE-754 bits; int8 1, -1, 127, -128, 0, 16
LINES = [
    "TICKRATE 1000000000",
    "OUT m 0 0 3f800000 c0000000 3f000000 7f800000 80000000 40400000 40800000 40a00000",
    "OUT m 0 8 40c00000 40e00000",
    "OUT m 1 0 01ff7f80 00100000",
    "OUT other 0 0 00000000",
    "TICKS m 1234",
]


def test_values_are_exact() -> None:
    out = parse_outputs(LINES, META)
    np.testing.assert_array_equal(
        out["f"], np.array([[1, -2, 0.5, np.inf, -0.0], [3, 4, 5, 6, 7]], np.float32))
    assert np.signbit(out["f"][0, 4])
    np.testing.assert_array_equal(out["q"], np.array([1, -1, 127, -128, 0, 16], np.int8))


def test_repeated_runs_must_agree() -> None:
    assert parse_outputs(LINES + LINES[1:], META)["f"][0, 0] == 1.0
    changed = [LINES[0], LINES[1].replace("3f800000", "3f800001"), *LINES[2:]]
    with pytest.raises(ProtocolError, match="differs"):
        parse_outputs(LINES + changed[1:], META)


@pytest.mark.parametrize("lines", [
    [line for line in LINES if not line.startswith("OUT m 0 8")],  # values missing
    [line for line in LINES if not line.startswith("OUT m 0 0")],  # a gap at the start
    ["DNN64-FAIL out of memory"],
    [],
])
def test_broken_output_is_an_error(lines: list[str]) -> None:
    with pytest.raises(ProtocolError):
        parse_outputs(lines, META)


# A streamed output's pieces (OUTN: exactly <count> values), out of index order as rows
# of two channels come: q's values 2..3 and 0..1 (words padded), then 4..5.
STREAMED = [
    "TICKRATE 1000000000",
    "OUTN m 1 2 2 7f800000",
    "OUTN m 1 0 2 01ff0000",
    "OUT m 0 0 3f800000 c0000000 3f000000 7f800000 80000000 40400000 40800000 40a00000",
    "OUT m 0 8 40c00000 40e00000",
    "OUTN m 1 4 2 00100000",
    "TICKS m 1234",
]


def test_streamed_pieces_are_put_together_exactly() -> None:
    out = parse_outputs(STREAMED, META)
    np.testing.assert_array_equal(out["q"], np.array([1, -1, 127, -128, 0, 16], np.int8))


@pytest.mark.parametrize("lines", [
    [*STREAMED[:2], "OUTN m 1 2 2 7f800000", *STREAMED[2:]],  # a piece printed twice
    [*STREAMED[:5], "OUTN m 1 3 3 80001000", "TICKS m 1234"],  # overlaps the one before
    [*STREAMED[:2], *STREAMED[3:]],  # values 0..1 missing
    [*STREAMED[:5], "OUTN m 1 4 7 00100000", "TICKS m 1234"],  # more announced than sent
    [*STREAMED[:5], "OUTN m 1 4 2 00100000 00000000", "TICKS m 1234"],  # a word too many
])
def test_broken_streamed_output_is_an_error(lines: list[str]) -> None:
    with pytest.raises(ProtocolError):
        parse_outputs(lines, META)
