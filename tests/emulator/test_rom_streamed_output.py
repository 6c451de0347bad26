"""planner: {output: stream} in a ROM: a fully convolutional model whose last dag group
hands its output out row by row (printed as the rows are finished) boots in mupen64plus
and `run` collects the same outputs as the host build of the same code (int8 bit-exact,
fp32 within 1e-5 of the output scale), and the reference executor of its IR."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest

from tests.build.conftest import Workspace
from tests.emulator.rom_workspace import (
    assert_rom_equals_host,
    model_workspace,
    run_outputs,
    tiny_fcn,
    tiny_seg_head,
)

pytestmark = [pytest.mark.emulator, pytest.mark.usefixtures("bare", "mupen64plus")]


def _fp32_tolerance(target: str) -> float:
    """int8 bit-exact, fp32 within 1e-5 of the output scale."""
    return 0.0 if "int8" in target else 1e-5


@pytest.fixture(scope="module")
def fcn_workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    ws = model_workspace(tmp_path_factory.mktemp("rom") / "ws", "rows_out", tiny_fcn(),
                         onnx_name="fcn.onnx", seed=5, input_shape=(1, 2, 16, 12), samples=2)
    ws.write("models/BUILD.yaml", """\
        targets:
          - {rule: n64_model, name: out_fp32, src: fcn.onnx,
             planner: {fusion: dag, output: stream}}
          - rule: n64_model
            name: out_int8
            src: fcn.onnx
            quantize: {mode: int8, calibration: calib.npz}
            planner: {fusion: dag, output: stream}
          - rule: n64_model
            name: io_int8
            src: fcn.onnx
            quantize: {mode: int8, calibration: calib.npz}
            planner: {fusion: dag, input: stream, output: stream}
        """)
    return ws


@pytest.mark.parametrize("target", ["//models:out_fp32", "//models:out_int8",
                                    "//models:io_int8"])
def test_streamed_output_rom_equals_the_host_build(fcn_workspace: Workspace,
                                                   target: str) -> None:
    stdout = assert_rom_equals_host(fcn_workspace, target, tolerance=_fp32_tolerance(target),
                                    shape=(2, 1, 3, 8, 6))
    assert "MISMATCH" not in stdout
    plan = json.loads(fcn_workspace.run("plan", target, "--json").stdout)
    (y,) = plan["streamed_outputs"]
    assert y not in {b["name"] for b in plan["buffers"]}  # never whole in the arena
    assert plan["fusion"]["groups"][-1]["emits"] == y
    name = target.split(":")[1]
    main = (fcn_workspace.root / f"dnn64-out/bin/models/{name}/program/main.c").read_text()
    # printed row by row while the model runs, never from a whole output afterwards
    assert "print_output_rows, sinks" in main and "_hex(" not in main.split("int main")[1]


@pytest.fixture(scope="module")
def seg_workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    ws = model_workspace(tmp_path_factory.mktemp("rom") / "ws", "rows_seg", tiny_seg_head(),
                         onnx_name="seg.onnx", seed=6, input_shape=(1, 2, 6, 5), samples=2)
    ws.write("models/BUILD.yaml", """\
        targets:
          - {rule: n64_model, name: seg_fp32, src: seg.onnx,
             planner: {fusion: dag, output: stream}}
          - rule: n64_model
            name: seg_int8
            src: seg.onnx
            quantize: {mode: int8, calibration: calib.npz}
            planner: {fusion: dag, output: stream}
        """)
    return ws


@pytest.mark.parametrize("target", ["//models:seg_fp32", "//models:seg_int8"])
def test_a_streamed_upsample_rom_equals_the_host_build(seg_workspace: Workspace,
                                                       target: str) -> None:
    """The bilinear upsample runs row by row in the last dag group and hands its rows out
    in the ROM as on the host, and as the reference executor computes the whole Resize."""
    assert_rom_equals_host(seg_workspace, target, tolerance=_fp32_tolerance(target),
                           shape=(2, 1, 3, 24, 20))
    plan = json.loads(seg_workspace.run("plan", target, "--json").stdout)
    (group,) = [g for g in plan["fusion"]["groups"] if g.get("emits")]
    assert any(s["window"] and s["window"][0] == "resize" for s in group["program"]["stages"])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["lraspp", "deeplabv3"])
@pytest.mark.parametrize("mode", ["fp32", "int8"])
def test_segmentation_heads_fit_with_the_output_streamed(tmp_path: Path, name: str,
                                                         mode: str) -> None:
    """LR-ASPP and DeepLabV3 at 224x224: their 4,214,784-byte float32 output (plus, in
    int8, its 1 MiB int8 twin) does not fit 4 MiB fp32 / 2 MiB int8 whole; with the
    default planner (fusion, input, output: auto) the last dag group hands the upsampled
    output out row by row, the plan fits, and the host build matches onnxruntime (fp32)
    or the reference executor the run compares with (int8)."""
    from tools.zoo import build as zoo_model
    from tools.zoo.compare import run_onnxruntime, scaled_error

    ws = Workspace(tmp_path / "ws")
    ws.write("BUILD.yaml", "workspace:\n  name: seg\n  defaults: {toolchain: bare}\n"
                           "targets: []\n")
    (ws.root / "models").mkdir()
    model = zoo_model(name)
    onnx.save(model, ws.root / "models" / "seg.onnx")
    quantize = "{mode: int8, synthetic: true}" if mode == "int8" else "{mode: none}"
    memory = "2MiB" if mode == "int8" else "4MiB"
    ws.write("models/BUILD.yaml", f"""\
        targets:
          - {{rule: n64_model, name: seg, src: seg.onnx, memory: {memory},
              quantize: {quantize}}}
        """)
    plan = json.loads(ws.run("plan", "//models:seg", "--json").stdout)
    (y,) = plan["streamed_outputs"]
    assert y not in {b["name"] for b in plan["buffers"]} and plan["extra_macs"] == 0
    x = np.random.default_rng(0).standard_normal((1, 1, 3, 224, 224)).astype(np.float32)
    np.savez(ws.root / "in.npz", input=x)
    host, stdout = run_outputs(ws, "//models:seg", "host")
    assert "MISMATCH" not in stdout
    if mode == "fp32":
        expected = run_onnxruntime(model, {"input": x[0]})[y]
        assert scaled_error(expected, host[y].reshape(expected.shape)) <= 1e-4
    else:
        assert stdout.count("vs the reference executor: match") == 1
