"""Workspaces for the ROM tests: one ONNX model with seeded calibration data and input
samples, built for `bare`; a target's outputs on a platform through `dnn64build run`;
a tiny fully convolutional model and a tiny segmentation head (their outputs can be
streamed row by row)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx

from tests.build.conftest import Workspace
from tools.zoo.builder import NetBuilder


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



def auto_kernels_rom(root: Path, name: str, model: onnx.ModelProto, *, seed: int,
                     input_shape: tuple[int, ...]) -> tuple[Path, str]:
    """Builds //models:m, ``model`` quantized to int8 for `toolchain: bare` with the default
    `kernels` (auto there) and `fusion: none` (every node may take its RSP kernel), and
    asserts the ROM's outputs equal the host build's bit for bit (`run` checks each against
    the integer reference executor). Returns the target's output folder and its generated C."""
    ws = model_workspace(root, name, model, onnx_name="m.onnx", seed=seed,
                         input_shape=input_shape, samples=2)
    ws.write("models/BUILD.yaml", """\
        targets:
          - rule: n64_model
            name: m
            src: m.onnx
            quantize: {mode: int8, calibration: calib.npz}
            toolchain: bare
            planner: {fusion: none}
        """)
    assert_rom_equals_host(ws, "//models:m")
    out = ws.root / "dnn64-out/bin/models/m"
    return out, next((out / "codegen").glob("*.c")).read_text()

def fp32_and_int8_roms(root: Path, name: str, model: onnx.ModelProto, *,
                       input_shape: tuple[int, ...], int8_attrs: str = "") -> str:
    """``model`` as //models:fp32 and, quantized (``int8_attrs``: more attributes, such as
    "kernels: rsp"), //models:int8, each ROM run in the emulator equal to its host build
    (fp32 within 1e-5 of the largest output: float32 code compiled for two CPUs; int8 bit
    for bit) and matching the reference executor. Returns the int8 target's generated C."""
    ws = model_workspace(root, name, model, onnx_name="m.onnx", seed=22,
                         input_shape=input_shape, samples=2)
    extra = f", {int8_attrs}" if int8_attrs else ""
    ws.write("models/BUILD.yaml", f"""\
        targets:
          - {{rule: n64_model, name: fp32, src: m.onnx}}
          - {{rule: n64_model, name: int8, src: m.onnx,
             quantize: {{mode: int8, calibration: calib.npz}}{extra}}}
        """)
    assert_rom_equals_host(ws, "//models:fp32", tolerance=1e-5)
    assert_rom_equals_host(ws, "//models:int8")
    return next((ws.root / "dnn64-out/bin/models/int8/codegen").glob("*.c")).read_text()


def run_outputs(ws: Workspace, target: str, platform: str, *, inputs: str = "in.npz"
                ) -> tuple[dict[str, np.ndarray], str]:
    """``target``'s outputs for ``inputs`` on ``platform``, and what `run` printed."""
    out = ws.root / f"{target.replace('/', '_').replace(':', '_')}-{platform}.npz"
    proc = ws.run("run", target, "--platform", platform, "--input", inputs, "--output",
                  str(out))
    with np.load(out) as data:
        return {k: data[k] for k in data.files}, proc.stdout


def assert_rom_equals_host(ws: Workspace, target: str, *, tolerance: float = 0.0,
                           shape: tuple[int, ...] | None = None, emulator: str = "emulator",
                           inputs: str = "in.npz") -> str:
    """``target`` run on ``emulator`` (a `run --platform`) and on the host, each over
    ``inputs``: `run` finds each matching the reference executor, and the ROM's outputs
    (each of ``shape``, when given) equal the host build's: bit for bit, or with
    ``tolerance`` (float32 code compiled for two CPUs) within that share of the output's
    largest magnitude. Returns the ROM run's stdout."""
    outputs, printed = {}, {}
    for platform in (emulator, "host"):
        outputs[platform], printed[platform] = run_outputs(ws, target, platform,
                                                           inputs=inputs)
        assert "vs the reference executor: match" in printed[platform]
    rom, host = outputs[emulator], outputs["host"]
    assert rom.keys() == host.keys() and rom
    for name, value in rom.items():
        assert shape is None or value.shape == shape, name
        if tolerance:
            assert np.abs(value - host[name]).max() <= tolerance * np.abs(host[name]).max(), name
        else:
            assert value.tobytes() == host[name].tobytes(), name
    return printed[emulator]


def tiny_fcn() -> onnx.ModelProto:
    """Conv-BN-ReLU, MaxPool, Conv-BN-ReLU, a 1x1 classifier: 3 classes at 8x6 (a width
    whose int8 rows are no multiple of four values)."""
    b = NetBuilder("tiny_fcn", seed=31)
    x = b.input("input", [1, 2, 16, 12])
    x = b.maxpool(b.conv_bn(x, 2, 6, 3), 2, 2)
    x = b.conv(b.conv_bn(x, 6, 6, 3), 6, 3, 1, bias=True)
    return b.build({x: [1, 3, 8, 6]})


def tiny_seg_head() -> onnx.ModelProto:
    """Conv-BN-ReLU, a 1x1 classifier, a bilinear x4 upsample (pytorch_half_pixel): the
    tail of LR-ASPP and DeepLabV3 at 3 classes, 24x20."""
    b = NetBuilder("tiny_seg_head", seed=32)
    x = b.conv_bn(b.input("input", [1, 2, 6, 5]), 2, 4, 3)
    x = b.conv(x, 4, 3, 1, bias=True)
    return b.build({b.upsample(x, 4, "linear"): [1, 3, 24, 20]})
