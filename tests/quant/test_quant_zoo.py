"""Every zoo model quantised on random calibration inputs: the int8 reference executor
stays close to the fp32 reference executor on held-out random inputs."""

from __future__ import annotations

import pytest
from quant_testlib import to_graph

from dnn64build.quant import quantize_graph
from dnn64build.quant.calibrate import synthetic_samples
from tools.zoo import NAMES, build

pytestmark = pytest.mark.zoo  # seconds of CPU per model: not in the unit tier
SLOW = {"resnet18", "resnet50", "mobilenetv2", "squeezenet", "unet"}
MIN_SNR_DB = 20.0


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.slow) if name in SLOW else name for name in NAMES])
def test_zoo_model_int8_tracks_fp32(name: str, tmp_path) -> None:
    graph = to_graph(build(name), tmp_path)
    # Per-tensor ranges from few samples clip held-out outliers: the small models get more.
    calibration = synthetic_samples(graph, 8 if name in SLOW else 32, seed=11)
    held_out = synthetic_samples(graph, 2 if name in SLOW else 4, seed=12)
    quantized, report = quantize_graph(graph, calibration, eval_inputs=held_out)
    assert report["fp32_nodes"] == [], report["fp32_nodes"]  # every zoo op has an int8 kernel
    for output, stats in report["outputs"].items():
        assert stats["snr_db"] > MIN_SNR_DB, f"{name} {output}: {stats}"
    assert [t.dtype for t in (quantized.tensors[n] for n in quantized.inputs)] == ["float32"]
