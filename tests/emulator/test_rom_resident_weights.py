"""planner: {weights: resident} in a ROM: a model whose weights are loaded once into RDRAM
boots in mupen64plus and runs two inferences (two input samples in one boot: the second
reads its weights from RAM) with the same outputs as the host build of the same code (int8
bit-exact, fp32 within 1e-5 of the output scale) and the reference executor of its IR."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.emulator.rom_workspace import assert_rom_equals_host, model_workspace, tiny_fcn

pytestmark = [pytest.mark.emulator, pytest.mark.usefixtures("bare", "mupen64plus")]


def test_resident_weights_rom_equals_host(tmp_path: Path) -> None:
    ws = model_workspace(tmp_path / "ws", "resident", tiny_fcn(), onnx_name="fcn.onnx",
                         seed=7, input_shape=(1, 2, 16, 12), samples=2)
    # fusion dag: its groups re-read their tiles every firing, from RAM here
    ws.write("models/BUILD.yaml", """\
        targets:
          - {rule: n64_model, name: fp32, src: fcn.onnx,
             planner: {fusion: dag, weights: resident}}
          - {rule: n64_model, name: int8, src: fcn.onnx,
             quantize: {mode: int8, calibration: calib.npz},
             planner: {fusion: dag, weights: resident}}
        """)
    for target, tolerance in (("fp32", 1e-5), ("int8", 0.0)):
        assert_rom_equals_host(ws, f"//models:{target}", tolerance=tolerance)
        out = ws.root / "dnn64-out/bin/models" / target
        meta = json.loads((out / "codegen/meta.json").read_text())
        assert meta["weight_bytes_streamed"] == 0 < meta["resident_bytes"] == meta["weight_bytes"]
        source = next((out / "codegen").glob("*.c")).read_text()
        assert "resident + " in source and "dnn64_asset_read(stage" not in source
