"""Random shapes and dims thrown at the importer (issue 25): one operator over a graph
input and constants whose dims are drawn from small, zero, negative, huge and symbolic
ones, with or without an ``inputs`` binding. The import and the optimisation passes either
give a graph that verifies or fail with one UserError; any other exception is a bug. The
default tier tries a bounded number of examples; ``-m slow`` many."""

from __future__ import annotations

import datetime
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from dnn64build.errors import UserError
from dnn64build.frontend import import_onnx
from dnn64build.ir.verify import verify
from dnn64build.passes import optimize

# Dims a model may declare: ordinary, empty, negative, too big for int32, symbolic.
_ODD_DIMS = [0, -1, -3, 2**31, 2**62]
input_dims = st.one_of(st.integers(1, 6), st.integers(1, 6), st.sampled_from(_ODD_DIMS),
                       st.just("N"))
input_shapes = st.lists(input_dims, max_size=5)
# Constants are real arrays: small dims, zero among them.
constant_shapes = st.lists(st.integers(0, 4), max_size=4)
bound_shapes = st.lists(st.one_of(st.integers(1, 6), st.sampled_from([0, -2])), max_size=5)

# op -> (how many constant inputs follow the graph input, attributes to draw)
_OPS: dict[str, tuple[int, dict[str, st.SearchStrategy[Any]]]] = {
    "Relu": (0, {}),
    "Softmax": (0, {"axis": st.integers(-5, 4)}),
    "Flatten": (0, {"axis": st.integers(-5, 5)}),
    "Transpose": (0, {"perm": st.lists(st.integers(-1, 4), min_size=1, max_size=5)}),
    "GlobalAveragePool": (0, {}),
    "MaxPool": (0, {"kernel_shape": st.lists(st.integers(0, 3), min_size=1, max_size=3),
                    "strides": st.lists(st.integers(0, 2), min_size=1, max_size=3)}),
    "Conv": (2, {"pads": st.lists(st.integers(-1, 2), min_size=4, max_size=4),
                 "group": st.integers(0, 3)}),
    "Gemm": (2, {"transB": st.integers(0, 1)}),
    "MatMul": (1, {}),
    "Add": (1, {}),
    "Concat": (1, {"axis": st.integers(-5, 4)}),
    "Reshape": (1, {}),
}


@st.composite
def models(draw: st.DrawFn) -> tuple[onnx.ModelProto, dict[str, list[int]] | None]:
    op = draw(st.sampled_from(sorted(_OPS)))
    constants, attr_strategies = _OPS[op]
    attrs = {name: draw(strategy) for name, strategy in attr_strategies.items()
             if draw(st.booleans())}
    inits = []
    for k in range(constants):
        if op == "Reshape":  # the target shape: int64 values, odd ones included
            value = np.array(draw(st.lists(st.integers(-2, 6), max_size=5)), np.int64)
        else:
            value = np.ones(draw(constant_shapes), np.float32)
        inits.append(numpy_helper.from_array(value, f"c{k}"))
    graph = helper.make_graph(
        [helper.make_node(op, ["x", *(i.name for i in inits)], ["y"], **attrs)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, draw(input_shapes))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=10)
    binding = draw(st.one_of(st.none(), bound_shapes.map(lambda s: {"x": s})))
    return model, binding


def _import(model: onnx.ModelProto, binding: dict[str, list[int]] | None) -> None:
    with tempfile.TemporaryDirectory(prefix="dnn64dims") as tmp:
        path = Path(tmp) / "m.onnx"
        onnx.save(model, path)
        try:
            graph = optimize(import_onnx(path, binding))
        except UserError as e:
            assert str(e).strip(), "an empty error message"
            event("refused: " + e.message[:40])
            return
    verify(graph)
    assert all(d >= 1 for t in graph.tensors.values() for d in t.shape), graph.tensors
    event("imported")


def _model(op: str, x: list[int | str], inits: dict[str, np.ndarray], **attrs: Any
           ) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node(op, ["x", *inits], ["y"], **attrs)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])],
        initializer=[numpy_helper.from_array(v, n) for n, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             ir_version=10)


@pytest.mark.parametrize("model, wanted", [
    (_model("Gemm", [1, 8], {"w": np.zeros((0, 8), np.float32)}, transB=1),
     "constant 'w' has shape [0, 8]: every dimension must be at least 1"),
    (_model("Relu", [1, 0, 4, 4], {}), "input 'x' has shape [1, 0, 4, 4]: every dimension"),
    (_model("Relu", [1, -3], {}), "input 'x' has shape [1, -3]: every dimension"),
    (_model("Add", [], {"e": np.zeros(0, np.float32)}),
     "node 'y' (op Add) computes 'y' of shape [0]: empty tensors are not supported"),
])
def test_empty_and_negative_dims_are_refused_at_import(tmp_path: Path, model: onnx.ModelProto,
                                                       wanted: str) -> None:
    """Issue 25: the empty Gemm built and crashed ``run``, the empty input built and failed
    in the ROM, the negative dim crashed the import."""
    onnx.save(model, tmp_path / "m.onnx")
    with pytest.raises(UserError) as refused:
        import_onnx(tmp_path / "m.onnx")
    assert wanted in str(refused.value)


_SETTINGS = dict(suppress_health_check=[HealthCheck.too_slow], derandomize=True)


@settings(max_examples=80, deadline=datetime.timedelta(seconds=10), **_SETTINGS)
@given(models())
# The three of issue 25: an empty Gemm weight, an empty input, a negative dim.
@example((_model("Gemm", [1, 8], {"w": np.zeros((0, 8), np.float32)}, transB=1), None))
@example((_model("Relu", [1, 0, 4, 4], {}), None))
@example((_model("Relu", [1, -3], {}), None))
def test_random_dims_give_a_graph_or_one_clean_error(
    case: tuple[onnx.ModelProto, dict[str, list[int]] | None]
) -> None:
    _import(*case)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models())
def test_random_dims_many(case: tuple[onnx.ModelProto, dict[str, list[int]] | None]) -> None:
    _import(*case)
