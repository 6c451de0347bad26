"""Workspaces for the ROM tests: one ONNX model with seeded calibration data and input
samples, built for `bare`; and a target's outputs on a platform through `dnn64build run`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx

from tests.build.conftest import Workspace


def model_workspace(root: Path, name: str, model: onnx.ModelProto, *, onnx_name: str,
                    seed: int, input_shape: tuple[int, ...], samples: int,
                    root_targets: str = "[]") -> Workspace:
    """Workspace ``name`` (toolchain bare, ``root_targets`` in its root BUILD.yaml) with
    ``model`` as models/``onnx_name``, 16 calibration samples as models/calib.npz and
    ``samples`` inputs as in.npz, all of ``input_shape`` and drawn from ``seed``. The
    caller writes models/BUILD.yaml."""
    ws = Workspace(root)
    ws.write("BUILD.yaml", f"workspace:\n  name: {name}\n  defaults: {{toolchain: bare}}\n"
                           f"targets: {root_targets}\n")
    (ws.root / "models").mkdir()
    onnx.save(model, ws.root / "models" / onnx_name)
    rng = np.random.default_rng(seed)
    np.savez(ws.root / "models" / "calib.npz",
             input=rng.standard_normal((16, *input_shape)).astype(np.float32))
    np.savez(ws.root / "in.npz",
             input=rng.standard_normal((samples, *input_shape)).astype(np.float32))
    return ws


def run_outputs(ws: Workspace, target: str, platform: str) -> tuple[dict[str, np.ndarray], str]:
    """``target``'s outputs for in.npz on ``platform``, and what `run` printed."""
    out = ws.root / f"{target.replace('/', '_').replace(':', '_')}-{platform}.npz"
    proc = ws.run("run", target, "--platform", platform, "--input", "in.npz", "--output",
                  str(out))
    with np.load(out) as data:
        return {k: data[k] for k in data.files}, proc.stdout


def assert_rom_equals_host(ws: Workspace, target: str) -> None:
    """``target`` run on the emulator and on the host: `run` finds each matching the
    reference executor, and the ROM's outputs equal the host build's bit for bit."""
    outputs = {}
    for platform in ("emulator", "host"):
        outputs[platform], stdout = run_outputs(ws, target, platform)
        assert "vs the reference executor: match" in stdout
    assert outputs["emulator"].keys() == outputs["host"].keys()
    for name, value in outputs["emulator"].items():
        assert value.tobytes() == outputs["host"][name].tobytes(), name
