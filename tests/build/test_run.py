"""`dnn64build run` and the fit check, end to end on the host (fast tier)."""

from __future__ import annotations

import re

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from tests.build.conftest import MODEL, Workspace, tiny_mlp


def test_run_on_host_matches_onnxruntime(two_models: Workspace) -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 4)).astype(np.float32)
    np.savez(two_models.root / "in.npz", input=x)
    proc = two_models.run("run", "//models:a", "--platform", "host", "--input", "in.npz",
                          "--output", "out.npz")
    assert "vs the reference executor: match" in proc.stdout
    got = np.load(two_models.root / "out.npz")["output"]
    session = ort.InferenceSession(tiny_mlp(1).SerializeToString())
    (want,) = session.run(None, {"input": x})
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= 1e-4 * np.abs(want).max()


def test_run_with_several_samples(two_models: Workspace) -> None:
    x = np.random.default_rng(6).standard_normal((5, 1, 4)).astype(np.float32)
    np.savez(two_models.root / "in.npz", input=x)
    two_models.run("run", "//models:b", "--platform", "host", "--input", "in.npz",
                   "--output", "out.npz")
    got = np.load(two_models.root / "out.npz")["output"]
    session = ort.InferenceSession(tiny_mlp(2).SerializeToString())
    want = np.stack([session.run(None, {"input": sample})[0] for sample in x])
    assert got.shape == (5, 1, 3)
    assert np.abs(got - want).max() <= 1e-4 * np.abs(want).max()


def test_run_rejects_an_input_of_the_wrong_shape(two_models: Workspace) -> None:
    np.savez(two_models.root / "in.npz", input=np.zeros((1, 5), np.float32))
    proc = two_models.run("run", "//models:a", "--platform", "host", "--input", "in.npz",
                          check=False)
    assert proc.returncode == 1
    assert "'input' has shape [1, 5]; the model takes [1, 4]" in proc.stderr


def test_a_model_that_does_not_fit_stops_at_the_plan_stage(workspace: Workspace) -> None:
    # 16x256x256 float32 activations: 4 MiB each, two live at once.
    graph = helper.make_graph(
        [helper.make_node("Relu", ["input"], ["r"], name="relu"),
         helper.make_node("Add", ["r", "input"], ["output"], name="add")],
        "big",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 16, 256, 256])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 16, 256, 256])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)
    (workspace.root / "models").mkdir()
    onnx.save(model, workspace.root / "models" / "big.onnx")
    # fusion none: with its input and output streamed row by row (fusion auto) it fits
    workspace.write("models/BUILD.yaml", """\
        targets:
          - {rule: n64_model, name: big, src: big.onnx, toolchain: bare,
             planner: {fusion: none}}
        """)
    proc = workspace.run("build", "//models:big", check=False)
    assert proc.returncode == 1
    out = proc.stdout + proc.stderr
    assert "model //models:big does not fit in 4.00 MiB" in out
    assert "Peak at step 0 (node 'relu')" in out
    assert "input: 4.00 MiB" in out and "r: 4.00 MiB" in out
    assert "int8" in out and "8MiB" in out
    base = workspace.root / "dnn64-out" / "bin" / "models" / "big"
    assert not (base / "plan" / "plan.json").exists()
    assert not list(base.rglob("*.z64")) and not (base / "codegen").exists()


def test_io_int8_exposes_scale_and_zero_point(workspace: Workspace) -> None:
    """`io: int8`: the header defines each boundary tensor's scale and zero point, run
    quantises float inputs with them and saves int8 outputs with them; the host program
    equals the integer reference bit for bit and, dequantised, tracks onnxruntime."""
    workspace.add_model("m", seed=3)
    calib = np.random.default_rng(7).standard_normal((16, 1, 4)).astype(np.float32)
    np.savez(workspace.root / "models" / "calib.npz", input=calib)
    workspace.write("models/BUILD.yaml", """\
        targets:
          - rule: n64_model
            name: m
            src: m.onnx
            quantize: {mode: int8, calibration: calib.npz, io: int8}
        """)
    x = calib[3]
    np.savez(workspace.root / "in.npz", input=x)
    proc = workspace.run("run", "//models:m", "--platform", "host", "--input", "in.npz",
                         "--output", "out.npz")
    assert "vs the reference executor: match (bit-exact)" in proc.stdout
    header = next((workspace.root / "dnn64-out").rglob("codegen/*.h")).read_text()
    defines = dict(re.findall(r"#define M_MODELS_M_(\w+) (.+)", header))
    out = np.load(workspace.root / "out.npz")
    assert out["output"].dtype == np.int8
    scale, zero_point = float(out["output.scale"]), int(out["output.zero_point"])
    assert np.float32(defines["OUT0_SCALE"].rstrip("f")) == np.float32(scale)
    assert defines["OUT0_ZERO_POINT"] == f"({zero_point})"
    assert "IN0_SCALE" in defines and "IN0_ZERO_POINT" in defines
    (want,) = ort.InferenceSession(tiny_mlp(3).SerializeToString()).run(None, {"input": x})
    real = (out["output"].astype(np.float32) - zero_point) * scale
    assert np.abs(real - want).max() <= 4 * scale  # input, hidden and output rounding


def test_io_int8_without_int8_quantisation_is_refused(workspace: Workspace) -> None:
    workspace.add_model("m", seed=3)
    workspace.write("models/BUILD.yaml", """\
        targets:
          - rule: n64_model
            name: m
            src: m.onnx
            quantize: {mode: none, io: int8}
        """)
    proc = workspace.run("plan", "//models:m", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "io: int8 needs quantize mode int8" in proc.stderr


def _embedding(workspace: Workspace, toolchain: str) -> tuple[onnx.ModelProto, np.ndarray]:
    """//models:a: a constant table read at int64 token ids (Gather), then Relu; and the ids
    in in.npz (int64, negative ones count from the end)."""
    table = np.random.default_rng(8).standard_normal((7, 5)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "ids"], ["e"]),
         helper.make_node("Relu", ["e"], ["y"])], "embed",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 5])],
        [onnx.numpy_helper.from_array(table, "table")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    workspace.write("models/BUILD.yaml", f"{MODEL}    toolchain: {toolchain}\n")
    onnx.save(model, workspace.root / "models" / "a.onnx")
    ids = np.array([[0, 6, -1], [3, 3, -7]], np.int64)
    np.savez(workspace.root / "in.npz", ids=ids)
    return model, ids


def _check_embedding(workspace: Workspace, model: onnx.ModelProto, ids: np.ndarray) -> None:
    got = np.load(workspace.root / "out.npz")["y"]
    (want,) = ort.InferenceSession(model.SerializeToString()).run(None, {"ids": ids})
    np.testing.assert_array_equal(got, want)


def test_run_an_embedding_at_int64_token_ids(workspace: Workspace) -> None:
    model, ids = _embedding(workspace, "host")
    proc = workspace.run("run", "//models:a", "--platform", "host", "--input", "in.npz",
                         "--output", "out.npz")
    assert "vs the reference executor: match" in proc.stdout
    _check_embedding(workspace, model, ids)
    np.savez(workspace.root / "in.npz", ids=np.array([[0, 1, 2], [3, 4, 2**40]], np.int64))
    proc = workspace.run("run", "//models:a", "--platform", "host", "--input", "in.npz",
                         check=False)
    assert proc.returncode == 1 and "input 'ids' holds values from 0 to 1099511627776" in (
        proc.stderr)


@pytest.mark.usefixtures("bare", "mupen64plus")
def test_run_an_embedding_in_the_emulator(workspace: Workspace) -> None:
    model, ids = _embedding(workspace, "bare")
    proc = workspace.run("run", "//models:a", "--platform", "emulator", "--input", "in.npz",
                         "--output", "out.npz")
    assert "ROM vs the host build: match" in proc.stdout
    _check_embedding(workspace, model, ids)
