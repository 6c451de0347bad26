"""`dnn64build test` on an int8 model with an fp32 fallback node: outputs of int8 nodes
must match the integer reference bit for bit, outputs computed in fp32 within a tolerance
(C and numpy add float sums in different orders)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from dnn64build.ir import load_graph
from dnn64build.quant.execute import integer_outputs
from tests.build.conftest import Workspace


def _two_headed_model() -> onnx.ModelProto:
    """x -> fc1 -> relu -> {fc_int8 -> ya, fc_fp32 -> yf}; fc_fp32 is kept in fp32."""
    rng = np.random.default_rng(4)

    def init(name: str, *shape: int) -> onnx.TensorProto:
        scale = 1 / np.sqrt(shape[-1]) if len(shape) > 1 else 1.0
        return numpy_helper.from_array((rng.standard_normal(shape) * scale)
                                       .astype(np.float32), name)

    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], transB=1, name="fc1"),
         helper.make_node("Relu", ["h"], ["hr"], name="relu"),
         helper.make_node("Gemm", ["hr", "wa", "ba"], ["ya"], transB=1, name="fc_int8"),
         helper.make_node("Gemm", ["hr", "wf", "bf"], ["yf"], transB=1, name="fc_fp32")],
        "mixed",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("ya", TensorProto.FLOAT, [1, 8]),
         helper.make_tensor_value_info("yf", TensorProto.FLOAT, [1, 64])],
        initializer=[init("w1", 512, 64), init("b1", 512), init("wa", 8, 512), init("ba", 8),
                     init("wf", 64, 512), init("bf", 64)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)


def test_mixed_int8_fp32_model_passes_dnn64build_test(workspace: Workspace) -> None:
    models = workspace.root / "models"
    models.mkdir()
    onnx.save(_two_headed_model(), models / "m.onnx")
    rng = np.random.default_rng(9)
    np.savez(models / "calib.npz", x=rng.standard_normal((32, 1, 64)).astype(np.float32))
    np.savez(models / "test.npz", x=rng.standard_normal((6, 1, 64)).astype(np.float32))
    workspace.write("models/BUILD.yaml", """\
        targets:
          - rule: n64_model
            name: m
            src: m.onnx
            quantize: {mode: int8, calibration: calib.npz, fp32_nodes: [fc_fp32]}
            test: {inputs: test.npz}
        """)
    proc = workspace.run("test", "//models:m", "--platform", "host", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASSED //models:m" in proc.stdout

    out = workspace.root / "dnn64-out" / "bin" / "models" / "m" / "quantize"
    graph = load_graph(out / "graph.json", out / "weights.npz")
    assert {n.name for n in graph.nodes if n.op == "Gemm" and "int8" not in n.attrs} == {
        "fc_fp32"}
    assert integer_outputs(graph) == {"ya"}
