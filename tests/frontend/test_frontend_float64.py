"""float64 models import as float32 with a note naming the float64 graph inputs and
outputs; the results match onnxruntime running the float64 model."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnn64build.frontend import import_onnx
from dnn64build.ir import reference
from tools.zoo.compare import run_onnxruntime


def test_float64_model_runs_in_float32_with_a_note(tmp_path) -> None:
    rng = np.random.default_rng(3)
    c = rng.standard_normal((1, 3))
    nodes = [helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(
                 np.array([0.5, -2.0, 3.0]), "k")),
             helper.make_node("Mul", ["x", "k"], ["xk"]),
             helper.make_node("Add", ["xk", "c"], ["s"]),
             helper.make_node("Cast", ["s"], ["y"], to=TensorProto.DOUBLE)]
    graph = helper.make_graph(
        nodes, "f64", [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [2, 3])],
        [numpy_helper.from_array(c, "c")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=10)
    onnx.save(model, tmp_path / "m.onnx")
    with pytest.warns(UserWarning, match=r"computes in float64 .*'x', 'y'.* runs in float32"):
        g = import_onnx(tmp_path / "m.onnx")
    assert {t.dtype for t in g.tensors.values()} == {"float32"}
    x = rng.standard_normal((2, 3))
    want = run_onnxruntime(model, {"x": x})["y"]
    got = reference.run(g, {"x": x.astype(np.float32)})["y"]
    assert want.dtype == np.float64 and got.dtype == np.float32
    assert np.abs(got - want).max() <= 1e-6 * np.abs(want).max()


def test_float64_input_outside_float32_range_is_refused() -> None:
    from dnn64build.array_files import fitting
    from dnn64build.errors import UserError

    ok = fitting(np.array([1e-3, -2.5, 1e30]), np.float32, "x", where="in.npz")
    assert ok.dtype == np.float32 and np.allclose(ok, [1e-3, -2.5, 1e30], rtol=1e-7)
    with pytest.raises(UserError, match=r"input 'x' holds values beyond float32's range"):
        fitting(np.array([1.0, -1e200]), np.float32, "x", where="in.npz")
