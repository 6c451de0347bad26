"""The weight staging area is sized in one place (codegen's rules, used by the plan stage):
models whose tiles the plan stage used to under-size build and match onnxruntime."""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.build.conftest import Workspace


def _model(nodes: list, x_shape: list[int], y_shape: list[int], weights: dict) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "staging",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
        initializer=[numpy_helper.from_array(a, n) for n, a in weights.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)


def _gemm(k: int, n: int) -> onnx.ModelProto:
    rng = np.random.default_rng(k + n)
    return _model(
        [helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1)], [1, k], [1, n],
        {"w": (rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32),
         "b": rng.standard_normal(n).astype(np.float32)},
    )


def _segmentation_head() -> onnx.ModelProto:
    """A DeepLabV3-style head on a 224x224 image's stride-16 features (960 x 14 x 14): one
    output channel of its 3x3 convolution needs 34 KiB of weights, more than half the
    default staging cap."""
    rng = np.random.default_rng(3)
    return _model(
        [helper.make_node("Conv", ["x", "w1", "b1"], ["h"], kernel_shape=[3, 3],
                          pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["h"], ["hr"]),
         helper.make_node("Conv", ["hr", "w2", "b2"], ["y"], kernel_shape=[1, 1])],
        [1, 960, 14, 14], [1, 21, 14, 14],
        {"w1": (rng.standard_normal((16, 960, 3, 3)) / 90).astype(np.float32),
         "b1": rng.standard_normal(16).astype(np.float32),
         "w2": rng.standard_normal((21, 16, 1, 1)).astype(np.float32) / 4,
         "b2": rng.standard_normal(21).astype(np.float32)},
    )


CASES = {
    "int8_gemm_64_to_1": (_gemm(64, 1), "int8"),
    "fp32_gemm_k10000": (_gemm(10000, 4), "none"),
    "segmentation_head": (_segmentation_head(), "none"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_builds_and_matches_onnxruntime_on_the_host(workspace: Workspace, case: str) -> None:
    model, mode = CASES[case]
    models = workspace.root / "models"
    models.mkdir()
    onnx.save(model, models / "m.onnx")
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    rng = np.random.default_rng(11)
    np.savez(models / "calib.npz", x=rng.standard_normal((16, *shape)).astype(np.float32))
    quantize = "{mode: int8, calibration: calib.npz}" if mode == "int8" else "{mode: none}"
    workspace.write("models/BUILD.yaml", f"targets:\n  - {{rule: n64_model, name: m, "
                    f"src: m.onnx, quantize: {quantize}}}\n")
    x = rng.standard_normal(shape).astype(np.float32)
    np.savez(workspace.root / "in.npz", x=x)
    proc = workspace.run("run", "//models:m", "--platform", "host", "--input", "in.npz",
                         "--output", "out.npz")
    assert "vs the reference executor: match" in proc.stdout
    got = np.load(workspace.root / "out.npz")["y"]
    (want,) = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    tolerance = 0.05 if mode == "int8" else 1e-4  # int8: quantisation error, not exactness
    assert np.abs(got - want).max() <= tolerance * max(np.abs(want).max(), 1.0)


def test_only_the_bare_toolchain_grows_the_staging(workspace: Workspace) -> None:
    """`staging_bytes: auto` grows the staging for the RSP kernels, which only the bare
    platform runs: a libdragon target of the same model keeps the minimum."""
    rng = np.random.default_rng(5)  # a 3x3 Conv of 147 KiB int8 weights: tiled at the minimum
    model = _model([helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])],
                   [1, 128, 8, 8], [1, 128, 8, 8],
                   {"w": (rng.standard_normal((128, 128, 3, 3)) / 30).astype(np.float32)})
    (workspace.root / "models").mkdir()
    onnx.save(model, workspace.root / "models" / "m.onnx")
    workspace.write("models/BUILD.yaml", "targets:\n" + "".join(
        f"  - {{rule: n64_model, name: {tc}, src: m.onnx, toolchain: {tc}, memory: 8MiB,\n"
        "     kernels: rsp, quantize: {mode: int8, synthetic: true}}\n"
        for tc in ("bare", "libdragon")))
    staging = {tc: json.loads(workspace.run("plan", f"//models:{tc}", "--json").stdout)["staging"]
               for tc in ("bare", "libdragon")}
    assert staging["bare"]["chosen"] == "grown"
    assert staging["libdragon"]["chosen"] == "minimum"
    assert staging["libdragon"]["bytes"] == staging["bare"]["minimum_bytes"]
