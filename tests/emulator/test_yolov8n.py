"""YOLOv8n (tools/zoo/yolo_models.py: the graph Ultralytics exports, random weights): the
import against onnxruntime at the exporter's opsets, with the anchor grid as constants or
as the sub-graph an unfolded trace writes; then end to end through the CLI: fp32 on the
host against onnxruntime, int8 calibrated on images against fp32 (boxes and class scores
each, since one SNR over both would hide scores lost next to pixel-sized boxes), the int8
ROM against the host build in mupen64plus."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import onnx
import pytest

from tests.build.conftest import Workspace
from tests.emulator.rom_workspace import assert_rom_equals_host, run_outputs
from tools.zoo.compare import import_and_compare, run_onnxruntime, scaled_error
from tools.zoo.yolo_models import yolov8n

MIN_SNR_DB = 20.0  # issue 22: int8 against fp32


def yolo_workspace(root: Path, size: int, *, calibration: int, int8_attrs: str = "") -> tuple[
        Workspace, onnx.ModelProto]:
    """//models:fp32 and //models:int8 (calibrated on ``calibration`` random images with
    values in [0, 1], as Ultralytics feeds them) of YOLOv8n at ``size`` x ``size``, and
    one input image as in.npz; the model is returned too."""
    ws = Workspace(root)
    ws.write("BUILD.yaml", "workspace:\n  name: yolo\n  defaults: {toolchain: bare}\n"
                           "targets: []\n")
    (ws.root / "models").mkdir()
    model = yolov8n(size)
    onnx.save(model, ws.root / "models" / "yolo.onnx")
    rng = np.random.default_rng(size)
    shape = (1, 3, size, size)
    np.savez(ws.root / "models" / "calib.npz",
             images=rng.random((calibration, *shape)).astype(np.float32))
    np.savez(ws.root / "in.npz", images=rng.random((1, *shape)).astype(np.float32))
    extra = f", {int8_attrs}" if int8_attrs else ""
    ws.write("models/BUILD.yaml", f"""\
        targets:
          - {{rule: n64_model, name: fp32, src: yolo.onnx}}
          - {{rule: n64_model, name: int8, src: yolo.onnx,
             quantize: {{mode: int8, calibration: calib.npz}}{extra}}}
        """)
    return ws, model


def onnxruntime_output(ws: Workspace, model: onnx.ModelProto) -> np.ndarray:
    with np.load(ws.root / "in.npz") as data:
        return run_onnxruntime(model, {"images": data["images"][0]})["output0"]


def snr_db(expected: np.ndarray, actual: np.ndarray) -> float:
    expected, actual = expected.astype(np.float64), actual.astype(np.float64)
    return 10 * math.log10(np.sum(expected ** 2) / np.sum((expected - actual) ** 2))


def assert_int8_tracks_fp32(ws: Workspace, expected: np.ndarray) -> None:
    """The int8 host build matches its integer reference bit for bit, and its boxes (rows
    0..3) and class scores (rows 4..83) are each within MIN_SNR_DB of ``expected``."""
    outputs, printed = run_outputs(ws, "//models:int8", "host")
    assert "vs the reference executor: match (bit-exact)" in printed
    got = outputs["output0"].reshape(expected.shape)
    for rows, what in ((slice(0, 4), "boxes"), (slice(4, 84), "class scores")):
        snr = snr_db(expected[:, rows], got[:, rows])
        assert snr >= MIN_SNR_DB, f"{what}: {snr:.1f} dB"


@pytest.mark.zoo  # seconds of CPU: not in the unit tier
@pytest.mark.parametrize("opset", [12, 17])
def test_yolov8n_imports_and_folds_its_anchor_grid(opset: int, tmp_path: Path) -> None:
    """The Range/Expand/... sub-graph of the anchors and strides folds at import into the
    constants the exporter's constant folding writes: the same IR, matching onnxruntime."""
    folded, error = import_and_compare(yolov8n(64, opset), tmp_path)
    assert error <= 1e-5
    traced, error = import_and_compare(yolov8n(64, opset, traced_anchors=True), tmp_path)
    assert error <= 1e-5
    assert [node.op for node in traced.nodes] == [node.op for node in folded.nodes]


@pytest.fixture(scope="module")
def yolo64(tmp_path_factory: pytest.TempPathFactory) -> tuple[Workspace, onnx.ModelProto]:
    """At 64x64: the three levels are 8x8, 4x4 and 2x2 (84 anchors), every op as at 640."""
    return yolo_workspace(tmp_path_factory.mktemp("yolo64") / "ws", 64, calibration=8)


@pytest.mark.usefixtures("host")
def test_yolov8n_fp32_on_the_host_matches_onnxruntime(yolo64) -> None:
    ws, model = yolo64
    outputs, printed = run_outputs(ws, "//models:fp32", "host")
    assert "vs the reference executor: match" in printed
    expected = onnxruntime_output(ws, model)
    assert expected.shape == (1, 84, 84)
    assert scaled_error(expected, outputs["output0"].reshape(expected.shape)) <= 1e-4


@pytest.mark.usefixtures("host")
def test_yolov8n_int8_on_the_host_tracks_fp32(yolo64) -> None:
    ws, model = yolo64
    assert_int8_tracks_fp32(ws, onnxruntime_output(ws, model))
    report = json.loads((ws.root / "dnn64-out/bin/models/int8/quantize/report.json")
                        .read_text())
    # Only the output Concat of boxes and scores stays float32 (after two dequantizes).
    assert [entry["op"] for entry in report["fp32_nodes"]] == ["Concat"]


@pytest.mark.slow
@pytest.mark.usefixtures("host", "bare", "mupen64plus")
def test_yolov8n_320_fp32_host_int8_rom_in_4mib(tmp_path: Path) -> None:
    """Issue 22 at 320x320: fp32 on the host within 1e-4 of onnxruntime; int8 (calibrated
    on 4 images) within 20 dB of it, planned for a stock 4 MiB console with the default
    settings, and its ROM in mupen64plus equal to the host build bit for bit."""
    ws, model = yolo_workspace(tmp_path / "ws", 320, calibration=4, int8_attrs="memory: 4MiB")
    expected = onnxruntime_output(ws, model)
    outputs, _ = run_outputs(ws, "//models:fp32", "host")
    assert scaled_error(expected, outputs["output0"].reshape(expected.shape)) <= 1e-4
    assert_int8_tracks_fp32(ws, expected)
    plan = json.loads(ws.run("plan", "//models:int8", "--json").stdout)
    assert plan["arena_bytes"] < 4 * 1024 * 1024
    assert_rom_equals_host(ws, "//models:int8", shape=(1, 84, 2100))
