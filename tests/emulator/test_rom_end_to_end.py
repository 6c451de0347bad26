"""Issue-level checks of the N64 targets, through the real CLI: ROMs built with Debian's
cross gcc boot in mupen64plus and print the same outputs as the host build of the same
generated code (int8 bit-exact, fp32 within 1e-5), and match the reference executors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest

from tests.build.conftest import Workspace
from tests.emulator.rom_workspace import model_workspace, run_outputs
from tools.zoo import build as zoo_model

REPO = Path(__file__).resolve().parents[2]

# The cross compiler and mupen64plus (conftest: a failure in CI, a skip elsewhere).
pytestmark = [pytest.mark.emulator, pytest.mark.usefixtures("bare", "mupen64plus")]


@pytest.fixture(scope="module")
def cnn_workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """small_cnn in int8 and fp32, and a ROM bundling both, built for `bare`."""
    ws = model_workspace(
        tmp_path_factory.mktemp("rom") / "ws", "roms", zoo_model("small_cnn"),
        onnx_name="cnn.onnx", seed=11, input_shape=(1, 1, 16, 16), samples=3,
        root_targets='[{rule: n64_rom, name: bundle, '
                     'models: ["//models:cnn_int8", "//models:cnn_fp32"]}]')
    ws.write("models/BUILD.yaml", """\
        targets:
          - rule: n64_model
            name: cnn_int8
            src: cnn.onnx
            quantize: {mode: int8, calibration: calib.npz}
          - {rule: n64_model, name: cnn_fp32, src: cnn.onnx}
          # Weights streamed in many small tiles: the asynchronous DMA prefetch path.
          - {rule: n64_model, name: cnn_tiled, src: cnn.onnx, planner: {staging_bytes: 2080}}
          # The conv/pool chain as one row-streamed fused group.
          - {rule: n64_model, name: cnn_stream, src: cnn.onnx, planner: {fusion: stream}}
          - rule: n64_model
            name: cnn_stream_int8
            src: cnn.onnx
            quantize: {mode: int8, calibration: calib.npz}
            planner: {fusion: stream}
          # Patch groups (MCUNetV2): the planner picks the chain sections and grids.
          - {rule: n64_model, name: cnn_patch, src: cnn.onnx, planner: {fusion: patch}}
          - rule: n64_model
            name: cnn_patch_int8
            src: cnn.onnx
            quantize: {mode: int8, calibration: calib.npz}
            planner: {fusion: patch}
          # Dag groups: row-streamed between single-tensor cuts, weights re-read per firing.
          - {rule: n64_model, name: cnn_dag, src: cnn.onnx, planner: {fusion: dag}}
          - rule: n64_model
            name: cnn_dag_int8
            src: cnn.onnx
            quantize: {mode: int8, calibration: calib.npz}
            planner: {fusion: dag}
          # The graph input streamed row by row from the cartridge into the first dag group.
          - {rule: n64_model, name: cnn_rows, src: cnn.onnx,
             planner: {fusion: dag, input: stream}}
          - rule: n64_model
            name: cnn_rows_int8
            src: cnn.onnx
            quantize: {mode: int8, calibration: calib.npz}
            planner: {fusion: dag, input: stream}
        """)
    return ws


@pytest.mark.parametrize(
    "target", ["//models:cnn_int8", "//models:cnn_fp32", "//models:cnn_tiled",
               "//models:cnn_stream", "//models:cnn_stream_int8", "//models:cnn_patch",
               "//models:cnn_patch_int8", "//models:cnn_dag", "//models:cnn_dag_int8",
               "//models:cnn_rows", "//models:cnn_rows_int8", "//:bundle"])
def test_rom_outputs_equal_the_host_build(cnn_workspace: Workspace, target: str) -> None:
    rom, stdout = run_outputs(cnn_workspace, target, "emulator")
    host, _ = run_outputs(cnn_workspace, target, "host")
    assert rom.keys() == host.keys() and rom
    for name in rom:
        assert rom[name].shape[0] == 3  # every sample ran
        if "int8" in name or target.endswith("int8"):
            assert rom[name].tobytes() == host[name].tobytes(), name
        else:
            scale = np.abs(host[name]).max()
            assert np.abs(rom[name] - host[name]).max() <= 1e-5 * scale, name
    # The run also compared each model with the numpy reference executor of its IR.
    assert stdout.count("vs the reference executor: match") == (2 if target == "//:bundle" else 1)
    assert "MISMATCH" not in stdout
    if target.endswith("tiled"):
        source = cnn_workspace.root / "dnn64-out/bin/models/cnn_tiled/codegen/m_models_cnn_tiled.c"
        assert source.read_text().count("dnn64_asset_read_start(") > 4
    if "stream" in target or "patch" in target:
        name = target.split(":")[1]
        plan = json.loads(cnn_workspace.run("plan", target, "--json").stdout)
        modes = {g["mode"] for g in plan["fusion"]["groups"]}
        assert ("patch" in modes) if "patch" in target else (modes == {"stream"})
        source = cnn_workspace.root / f"dnn64-out/bin/models/{name}/codegen/m_models_{name}.c"
        assert source.read_text().count("dnn64_conv_region_") == 2
    if "dag" in target or "rows" in target:
        name = target.split(":")[1]
        plan = json.loads(cnn_workspace.run("plan", target, "--json").stdout)
        assert "dag" in {g["mode"] for g in plan["fusion"]["groups"]}
        source = cnn_workspace.root / f"dnn64-out/bin/models/{name}/codegen/m_models_{name}.c"
        assert "dnn64_rows_region(" in source.read_text()
    if "rows" in target:  # the input's rows come from the cartridge, never loaded whole
        assert plan["streamed_inputs"] == [plan["fusion"]["groups"][0]["streams"]]
        assert "read_rows(user, 0," in source.read_text()
        main = cnn_workspace.root / f"dnn64-out/bin/models/{name}/program/main.c"
        assert "load_input(" not in main.read_text()


def test_the_bundle_shares_one_arena_sized_for_the_larger_model(cnn_workspace: Workspace) -> None:
    cnn_workspace.run("build", "//...")
    base = cnn_workspace.root / "dnn64-out" / "bin" / "models"
    arenas = [json.loads((base / m / "codegen" / "meta.json").read_text())["arena_bytes"]
              for m in ("cnn_int8", "cnn_fp32")]
    rom = (cnn_workspace.root / "dnn64-out" / "bin" / "bundle" / "bundle.z64").read_bytes()
    assert rom[0x20:0x34].rstrip() == b"bundle"
    assert max(arenas) > min(arenas)  # int8 needs less; the bundle must use the fp32 size
    assert len(rom) % (1024 * 1024) == 0


def test_digits_accuracy_on_the_rom_equals_the_host(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    shutil.copytree(REPO / "models", ws.root / "models")
    shutil.copy(REPO / "BUILD.yaml", ws.root / "BUILD.yaml")
    results = {}
    for platform in ("emulator", "host"):
        out = ws.run("test", "//models:digits", "--platform", platform).stdout
        (line,) = [x for x in out.splitlines() if x.startswith(("PASSED", "FAILED"))]
        assert line.startswith("PASSED") and "bit-exact" in line, line
        results[platform] = line.rsplit("top-1 accuracy ", 1)[1]
    assert results["emulator"] == results["host"]
    assert float(results["host"].rstrip("%")) > 90.0


def test_a_user_ipl3_goes_into_the_rom(cnn_workspace: Workspace) -> None:
    cnn_workspace.run("build", "//models:cnn_fp32")
    default = (cnn_workspace.root / "dnn64-out/bin/models/cnn_fp32/cnn_fp32.z64").read_bytes()
    # Any 0xFC0-byte IPL3 is accepted (a real one is CIC-signed and cannot ship here):
    # giving the default stub's own bytes as the user's file must reproduce the same ROM.
    (cnn_workspace.root / "models" / "ipl3.bin").write_bytes(default[0x40:0x1000])
    (cnn_workspace.root / "models" / "short.bin").write_bytes(default[0x40:0x100])
    manifest = cnn_workspace.root / "models" / "BUILD.yaml"
    original = manifest.read_text()
    try:
        manifest.write_text(original + "  - {rule: n64_model, name: signed, src: cnn.onnx, "
                            "ipl3: ipl3.bin}\n"
                            "  - {rule: n64_model, name: short, src: cnn.onnx, ipl3: short.bin}\n")
        out = cnn_workspace.run("run", "//models:signed", "--input", "in.npz").stdout
        assert "vs the reference executor: match" in out  # it boots and computes
        signed = (cnn_workspace.root / "dnn64-out/bin/models/signed/signed.z64").read_bytes()
        assert signed[0x40:0x1000] == default[0x40:0x1000]
        proc = cnn_workspace.run("build", "//models:short", check=False)
        assert proc.returncode == 1 and "IPL3" in proc.stderr and "Traceback" not in proc.stderr
    finally:
        manifest.write_text(original)


@pytest.mark.slow
@pytest.mark.parametrize("fusion", ["auto", "dag", "dag, input: stream"])
def test_resnet18_fp32_fits_4mib_streamed_and_matches_onnxruntime(tmp_path: Path,
                                                                  fusion: str) -> None:
    """The operator bound of ResNet-18 fp32 at 224x224 (4,014,080 bytes) does not fit a
    stock console; with the stem row-streamed (fusion auto, the default) it does, and with
    the stem and the first residual blocks row-streamed as one dag group (fusion dag, the
    weights re-read for every firing) the arena is far smaller still; with the graph
    input streamed from the cartridge into that group too, it is below 1,000,000 bytes."""
    from tools.zoo.compare import run_onnxruntime, scaled_error

    ws = Workspace(tmp_path / "ws")
    ws.write("BUILD.yaml", """\
        workspace:
          name: r18
          defaults: {toolchain: bare}
        targets: []
        """)
    (ws.root / "models").mkdir()
    model = zoo_model("resnet18")
    onnx.save(model, ws.root / "models" / "resnet18.onnx")
    ws.write("models/BUILD.yaml", f"""\
        targets:
          - {{rule: n64_model, name: resnet18, src: resnet18.onnx, memory: 4MiB,
              planner: {{fusion: {fusion}}}}}
        """)
    x = np.random.default_rng(0).standard_normal((1, 1, 3, 224, 224)).astype(np.float32)
    np.savez(ws.root / "in.npz", input=x)
    plan = json.loads(ws.run("plan", "//models:resnet18", "--json").stdout)
    assert plan["op_bound_bytes"] == 4014080 and plan["arena_bytes"] < 4014080
    modes = {g["mode"] for g in plan["fusion"]["groups"]}
    assert modes == ({"dag"} if fusion.startswith("dag") else {"stream"})
    if fusion.startswith("dag"):  # the whole stem, layer1, layer2.0: no 56x56x64 tensor
        assert plan["arena_bytes"] < 1_500_000
    if "stream" in fusion:
        assert plan["streamed_inputs"] == ["input"] and plan["arena_bytes"] <= 1_000_000
    rom, _ = run_outputs(ws, "//models:resnet18", "emulator")
    expected = run_onnxruntime(model, {"input": x[0]})
    for name, value in expected.items():
        assert scaled_error(value, rom[name].reshape(value.shape)) <= 1e-4, name


@pytest.mark.slow
def test_mobilenetv2_int8_io_streamed_input_in_200k_matches_host_and_reference(
        tmp_path: Path) -> None:
    """MobileNetV2 int8 (io: int8) at 224x224 with its input streamed from the cartridge
    into the first dag group: the arena is at most 200,000 bytes, and the ROM's outputs
    equal the host build's and the integer reference executor's bit for bit."""
    ws = Workspace(tmp_path / "ws")
    ws.write("BUILD.yaml", """\
        workspace:
          name: mnv2
          defaults: {toolchain: bare}
        targets: []
        """)
    (ws.root / "models").mkdir()
    onnx.save(zoo_model("mobilenetv2"), ws.root / "models" / "mnv2.onnx")
    ws.write("models/BUILD.yaml", """\
        targets:
          - {rule: n64_model, name: mnv2, src: mnv2.onnx, memory: 2MiB,
             quantize: {mode: int8, synthetic: true, io: int8},
             planner: {fusion: dag, input: stream}}
        """)
    x = np.random.default_rng(0).integers(-128, 128, (1, 1, 3, 224, 224), dtype=np.int8)
    np.savez(ws.root / "in.npz", input=x)
    plan = json.loads(ws.run("plan", "//models:mnv2", "--json").stdout)
    assert plan["streamed_inputs"] == ["input"] and plan["arena_bytes"] <= 200_000
    rom, stdout = run_outputs(ws, "//models:mnv2", "emulator")
    assert "vs the reference executor: match" in stdout and "MISMATCH" not in stdout
    host, _ = run_outputs(ws, "//models:mnv2", "host")
    assert rom.keys() == host.keys() and rom
    for name in rom:
        assert rom[name].tobytes() == host[name].tobytes(), name
