"""The run-length coding of a dag group's firings (codegen/firings.py): it stands for
exactly the firings the planner made, and its size does not grow with the image."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx

from dnn64build.codegen.firings import code_firings
from dnn64build.frontend import import_onnx
from dnn64build.passes import optimize
from dnn64build.planner.dagstream import dag_program

sys.path.insert(0, str(Path(__file__).resolve().parent))
from codegen_cases import node, onnx_model, rand  # noqa: E402


def _firings(height: int, tmp: Path) -> list[tuple[int, ...]]:
    """The planner's firings of a Conv 3x3 / stride-2 Conv 3x3 / MaxPool chain streamed
    from its input, on a height x 16 image."""
    model = onnx_model(
        [node("Conv", ["x", "w0"], ["a"], pads=[1, 1, 1, 1]),
         node("Relu", ["a"], ["b"]),
         node("Conv", ["b", "w1"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
         node("MaxPool", ["c"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
        {"x": [1, 2, height, 16]}, ["y"], {"w0": rand(4, 2, 3, 3), "w1": rand(4, 4, 3, 3)})
    path = tmp / f"m{height}.onnx"
    onnx.save(model, path)
    graph = optimize(import_onnx(path))
    program = dag_program(graph, list(graph.nodes), streamed="x")
    return [(f.stage, *f.rows, *(f.before or (0, 0)), *(f.after or (0, 0)))
            for f in program.firings]


def test_the_coding_stands_for_the_firings_and_stays_the_same_size(tmp_path: Path) -> None:
    small, large = _firings(32, tmp_path), _firings(512, tmp_path)
    assert len(large) > 10 * len(small) // 2  # firings grow with the height
    coded = [code_firings(f) for f in (small, large)]
    assert coded[0].decode() == small
    assert coded[1].decode() == large
    assert len(coded[1].templates) == len(coded[0].templates) < len(small)


def test_firings_without_a_pattern_are_kept_as_they_are() -> None:
    rows = [tuple(int(v) for v in r)
            for r in np.random.default_rng(1).integers(-50, 50, size=(40, 7))]
    coded = code_firings(rows)
    assert coded.decode() == rows
    assert len(coded.templates) == len(rows)
    assert code_firings([]).decode() == []
