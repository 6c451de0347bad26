"""A model saved with ``save_as_external_data``: its data file is an input of the import,
so editing only the data file rebuilds the model with the new weights."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

from tests.build.conftest import Workspace, tiny_mlp


def _save_external(model: onnx.ModelProto, path: Path) -> None:
    model.graph.name = "mlp"  # the same .onnx file for every seed: only the data differs
    onnx.save(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
              location=f"{path.name}.data", size_threshold=0)


def _run_host(ws: Workspace, x: np.ndarray) -> np.ndarray:
    np.savez(ws.root / "in.npz", input=x)
    ws.run("run", "//models:a", "--platform", "host", "--input", "in.npz", "--output", "out.npz")
    return np.load(ws.root / "out.npz")["output"]


def _reference(seed: int, x: np.ndarray) -> np.ndarray:
    return ort.InferenceSession(tiny_mlp(seed).SerializeToString()).run(None, {"input": x})[0]


def test_editing_only_the_external_data_file_rebuilds_with_the_new_weights(
    workspace: Workspace, tmp_path: Path
) -> None:
    models = workspace.root / "models"
    models.mkdir()
    _save_external(tiny_mlp(1), models / "a.onnx")
    workspace.write("models/BUILD.yaml", "targets:\n  - {rule: n64_model, name: a, src: a.onnx}\n")
    x = np.random.default_rng(7).standard_normal((1, 4)).astype(np.float32)
    np.testing.assert_allclose(_run_host(workspace, x), _reference(1, x), rtol=1e-4, atol=1e-5)

    other = tmp_path / "other"
    other.mkdir()
    _save_external(tiny_mlp(2), other / "a.onnx")
    assert (other / "a.onnx").read_bytes() == (models / "a.onnx").read_bytes()
    shutil.copy(other / "a.onnx.data", models / "a.onnx.data")  # only the weights change
    ran = {mnemonic for mnemonic, _ in workspace.build("//models:a")}
    assert "Import" in ran
    np.testing.assert_allclose(_run_host(workspace, x), _reference(2, x), rtol=1e-4, atol=1e-5)


def test_a_missing_external_data_file_is_named_with_the_target(workspace: Workspace) -> None:
    models = workspace.root / "models"
    models.mkdir()
    _save_external(tiny_mlp(1), models / "a.onnx")
    (models / "a.onnx.data").unlink()
    workspace.write("models/BUILD.yaml", "targets:\n  - {rule: n64_model, name: a, src: a.onnx}\n")
    proc = workspace.run("build", "//models:a", check=False)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert "//models:a: tensor 'w1': external data file 'a.onnx.data' not found" in proc.stderr
    assert "../models" not in proc.stderr
