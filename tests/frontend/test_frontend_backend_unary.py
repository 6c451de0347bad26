"""The onnx package's own PyTorch-exported cases for issue 22's element-wise operators:
imported, optimised and run in the reference executor, they give the expected outputs
stored with each case (an independent reference: PyTorch's)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from dnn64build.frontend import import_onnx
from dnn64build.ir import reference
from dnn64build.passes import optimize

DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"
CASES = [
    *(f"pytorch-operator/test_operator_{name}" for name in (
        "exp", "pow", "sqrt", "max", "min", "selu")),
    *(f"pytorch-converted/test_{name}" for name in (
        "ELU", "SELU", "Softplus", "LogSoftmax", "log_softmax_dim3", "log_softmax_lastdim",
        "Softmin", "PoissonNLLLLoss_no_reduce", "PReLU_1d", "PReLU_2d", "PReLU_3d",
        "PReLU_1d_multiparam", "PReLU_2d_multiparam", "PReLU_3d_multiparam")),
]


def _tensors(folder: Path, kind: str) -> list[np.ndarray]:
    return [numpy_helper.to_array(onnx.load_tensor(str(p)))
            for p in sorted(folder.glob(f"{kind}_*.pb"))]


@pytest.mark.parametrize("case", CASES)
def test_backend_case_matches_its_stored_outputs(case: str) -> None:
    folder = DATA / case
    graph = optimize(import_onnx(folder / "model.onnx"))
    inputs = dict(zip(graph.inputs, _tensors(folder / "test_data_set_0", "input"), strict=True))
    got = reference.run(graph, inputs)
    for name, want in zip(graph.outputs, _tensors(folder / "test_data_set_0", "output"),
                          strict=True):
        np.testing.assert_allclose(got[name], want, rtol=1e-5, atol=1e-6, err_msg=name)
