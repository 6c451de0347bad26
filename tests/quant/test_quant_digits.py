"""The committed digits model: int8 (run_int8) test accuracy within 1 point of fp32."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from dnn64build.frontend import import_onnx
from dnn64build.passes import optimize
from dnn64build.quant import load_calibration, quantize_graph, run_int8

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"


def _accuracy(predict, x: np.ndarray, labels: np.ndarray) -> float:
    hits = [int(np.argmax(predict(row[None])) == label) for row, label in zip(x, labels,
                                                                             strict=True)]
    return float(np.mean(hits))


def test_digits_int8_accuracy_within_one_point_of_fp32() -> None:
    test = np.load(MODELS / "digits_test.npz")
    x, labels = test["input"], test["labels"]
    session = ort.InferenceSession(str(MODELS / "digits.onnx"),
                                   providers=["CPUExecutionProvider"])
    fp32 = _accuracy(lambda v: session.run(["logits"], {"input": v})[0], x, labels)

    graph = optimize(import_onnx(MODELS / "digits.onnx"))
    calibration = load_calibration(MODELS / "digits_calib.npz", graph.inputs)
    quantized, report = quantize_graph(graph, calibration)
    int8 = _accuracy(lambda v: run_int8(quantized, {"input": v})["logits"], x, labels)

    assert fp32 >= 0.95, fp32
    assert int8 >= fp32 - 0.01, (fp32, int8)
    assert report["fp32_nodes"] == []
    assert report["outputs"]["logits"]["top1_agreement"] >= 0.99


def test_digits_calibration_comes_from_the_training_split() -> None:
    calibration = np.load(MODELS / "digits_calib.npz")["input"]
    test_rows = {row.tobytes() for row in np.load(MODELS / "digits_test.npz")["input"]}
    assert len(calibration) >= 100
    assert not any(row.tobytes() in test_rows for row in calibration)


@pytest.mark.slow
def test_digits_training_reproduces_the_committed_model(tmp_path) -> None:
    subprocess.run([sys.executable, str(ROOT / "tools" / "digits" / "train.py"),
                    "--out", str(tmp_path)], check=True, capture_output=True)
    for name in ("digits_test.npz", "digits_calib.npz"):
        fresh, committed = np.load(tmp_path / name), np.load(MODELS / name)
        for key in committed.files:
            np.testing.assert_array_equal(fresh[key], committed[key])
    session_new = ort.InferenceSession(str(tmp_path / "digits.onnx"),
                                       providers=["CPUExecutionProvider"])
    session_old = ort.InferenceSession(str(MODELS / "digits.onnx"),
                                       providers=["CPUExecutionProvider"])
    x = np.load(MODELS / "digits_test.npz")["input"][:50]
    for row in x:
        np.testing.assert_allclose(session_new.run(None, {"input": row[None]})[0],
                                   session_old.run(None, {"input": row[None]})[0], atol=1e-4)
