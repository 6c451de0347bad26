"""n64_library: a test program of the suite's own links the bare library through its
public header and runs in mupen64plus; its outputs match the numpy reference executor and
the model's host build. The libdragon variant's sources (and the examples/ game) compile
with -fsyntax-only against the pinned libdragon declarations, which are checked for drift.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest

from dnn64build import TOOL_ROOT
from dnn64build.emulator import run_rom
from dnn64build.ir import load_graph
from dnn64build.quant import run_int8
from dnn64build.rom import build_asset_image, pack_rom
from dnn64build.run_protocol import parse_run_outputs
from dnn64build.toolchains import BareToolchain, HostToolchain
from dnn64build.toolchains.base import run
from tests.build.conftest import Workspace, tiny_mlp
from tests.compile_program import compile_and_link
from tests.emulator.rom_workspace import tiny_fcn
from tools.zoo import build as zoo_model
from tools.zoo.compare import run_onnxruntime, scaled_error

PROBE = Path(__file__).parent / "programs" / "library_probe.c"
PINNED = Path(__file__).parent.parent / "libdragon_api" / "libdragon.h"
# Changing the pinned header is a deliberate update against a newer libdragon: update both.
PINNED_SHA256 = "f60c95d31e2596654ad7e5f7af66a756e6297db675023f3482445687b4626b83"
PINNED_DECLARATIONS = {
    "DFS_DEFAULT_LOCATION", "DFS_ESUCCESS", "dfs_init", "dfs_rom_addr", "dma_read",
    "dma_read_async", "dma_wait", "data_cache_hit_writeback_invalidate", "get_ticks",
    "TICKS_PER_SECOND", "debug_init_isviewer", "debugf",
}

MODELS = """\
targets:
  - {rule: n64_model, name: a, src: a.onnx}
  - rule: n64_model
    name: b
    src: b.onnx
    quantize: {mode: int8, synthetic: true, io: int8}
"""


def _library(ws: Workspace, extra: str) -> Path:
    ws.write("models/BUILD.yaml", MODELS + extra)
    return ws.root / "dnn64-out" / "bin" / "models"


def _inputs_header(path: Path, a_in: np.ndarray, b_in: np.ndarray) -> None:
    """The inputs as C arrays, in the N64's byte order (big-endian floats)."""
    a_bytes = a_in.astype(">f4").tobytes()
    path.write_text(
        "#include <stdint.h>\n"
        f"static const uint8_t A_IN0[{len(a_bytes)}] = {{{', '.join(map(str, a_bytes))}}};\n"
        f"static const int8_t B_IN0[{b_in.size}] = "
        f"{{{', '.join(map(str, b_in.reshape(-1).tolist()))}}};\n")


def _reference(ws: Workspace, model: str, inputs: np.ndarray) -> np.ndarray:
    ir = ws.root / "dnn64-out" / "bin" / "models" / model / "quantize"
    graph = load_graph(ir / "graph.json", ir / "weights.npz")
    return run_int8(graph, {"input": inputs})["output"]


def _host_build(ws: Workspace, model: str, inputs: np.ndarray, tmp: Path) -> np.ndarray:
    np.savez(tmp / f"{model}_in.npz", input=inputs)
    ws.run("run", f"//models:{model}", "--platform", "host", "--input",
           str(tmp / f"{model}_in.npz"), "--output", str(tmp / f"{model}_out.npz"))
    return np.load(tmp / f"{model}_out.npz")["output"]


def test_the_bare_library_runs_in_a_program_of_its_own_and_matches(
    two_models: Workspace, bare: BareToolchain, boot_stub: bytes, mupen64plus: None,
    tmp_path: Path,
) -> None:
    out = _library(two_models, "  - {rule: n64_library, name: testlib, models: [':a', ':b'], "
                               "toolchain: bare, archive: true}\n")
    assert any(m == "Library" for m, _ in two_models.build("//models:testlib"))
    assert two_models.build("//models:testlib") == []  # cached: a no-op rebuild runs nothing
    lib = out / "testlib"
    rng = np.random.default_rng(5)
    a_in = rng.standard_normal((1, 4)).astype(np.float32)
    b_in = rng.integers(-128, 128, (1, 4)).astype(np.int8)
    _inputs_header(tmp_path / "library_probe_inputs.h", a_in, b_in)
    program = compile_and_link(bare, [PROBE], [lib / "include", tmp_path],
                               tmp_path / "probe.bin", libraries=[lib / "libtestlib.a"])
    rom = tmp_path / "probe.z64"
    rom.write_bytes(pack_rom(program.read_bytes(), build_asset_image([]).data, ipl3=boot_stub))
    lines = list(run_rom(rom, timeout=60).lines)

    checks = dict(re.findall(r"^CHECK (\w+) (\d)$", "\n".join(lines), re.M))
    assert checks and set(checks.values()) == {"1"}, checks
    metas = {m: json.loads((out / m / "codegen" / "meta.json").read_text())
             for m in ("a", "b")}
    got_a = parse_run_outputs(lines, metas["a"])[0]["output"]
    got_b = parse_run_outputs(lines, metas["b"])[0]["output"]
    # a (fp32): the numpy reference and the host build, within float rounding.
    for want in (_reference(two_models, "a", a_in), _host_build(two_models, "a", a_in, tmp_path)):
        assert np.abs(got_a - want).max() <= 1e-5 * np.abs(want).max()
    # b (int8): bit for bit.
    assert np.array_equal(got_b, _reference(two_models, "b", b_in))
    assert np.array_equal(got_b, _host_build(two_models, "b", b_in, tmp_path))
    (quant,) = [line.split()[1:] for line in lines if line.startswith("QUANT ")]
    io = metas["b"]
    assert [struct.unpack(">f", bytes.fromhex(quant[0]))[0], int(quant[1]),
            struct.unpack(">f", bytes.fromhex(quant[2]))[0], int(quant[3])] == [
        np.float32(io["inputs"][0]["scale"]), io["inputs"][0]["zero_point"],
        np.float32(io["outputs"][0]["scale"]), io["outputs"][0]["zero_point"]]


def test_a_model_change_reruns_the_library_step(two_models: Workspace) -> None:
    _library(two_models, "  - {rule: n64_library, name: testlib, models: [':a'], "
                         "toolchain: host}\n")
    two_models.build("//models:testlib")
    header = two_models.root / "dnn64-out/bin/models/testlib/include/testlib.h"
    before = header.read_text()
    onnx.save(tiny_mlp(9, hidden=40), two_models.root / "models/a.onnx")
    assert "Library" in {m for m, _ in two_models.build("//models:testlib")}
    assert header.read_text() != before  # the arena grew with the hidden layer


def test_the_libdragon_sources_compile_against_the_pinned_declarations(
    two_models: Workspace, host: HostToolchain, tmp_path: Path,
) -> None:
    # The example game's library, made from a stand-in model named like its own.
    shutil.copy(two_models.root / "models/a.onnx", two_models.root / "models/digits.onnx")
    out = _library(two_models, "  - {rule: n64_model, name: digits, src: digits.onnx}\n"
                               "  - {rule: n64_library, name: digits_lib, models: [':digits'], "
                               "weights: dragonfs}\n")
    two_models.build("//models:digits_lib")
    lib = out / "digits_lib"
    assert (lib / "digits_lib.dnn64").read_bytes()[:4] == b"DN64"
    sources = sorted((lib / "src").glob("*.c"))
    game = TOOL_ROOT / "examples" / "libdragon_game" / "main.c"
    platform = TOOL_ROOT / "kernels" / "platform" / "libdragon" / "dnn64_platform_libdragon.c"
    for source in [*sources, game, platform]:
        run([host.cc, "-fsyntax-only", "-std=gnu99", "-Wall", "-Wextra", "-Werror", "-DN64",
             f"-I{lib / 'include'}", f"-I{lib / 'src'}", f"-I{PINNED.parent}",
             f"-I{TOOL_ROOT / 'kernels' / 'platform'}", str(source)])
    # The make fragment names every source and compiles it (here: checks it, as above).
    (tmp_path / "Makefile").write_text(
        f"BUILD_DIR = {tmp_path / 'build'}\ninclude {lib / 'digits_lib.mk'}\n"
        "all: $(DNN64_DIGITS_LIB_OBJS)\n")
    made = subprocess.run(
        ["make", "-C", str(tmp_path), f"CC={host.cc}",
         f"CFLAGS=-fsyntax-only -std=gnu99 -Wall -Werror -DN64 -I{PINNED.parent}"],
        capture_output=True, text=True, check=True).stdout
    assert sorted(re.findall(r"\[CC\] \S+/src/(\S+)", made)) == [p.name for p in sources]
    glue = (lib / "src" / "digits_lib.c").read_text()
    assert "dma_read_async" in glue and "dfs_rom_addr" in glue  # the DragonFS variant


def test_the_pinned_libdragon_declarations_have_not_drifted() -> None:
    assert hashlib.sha256(PINNED.read_bytes()).hexdigest() == PINNED_SHA256
    text = PINNED.read_text()
    declared = set(re.findall(r"^#define (\w+)", text, re.M)) | set(
        re.findall(r"^[a-z][\w ]*[ *](\w+)\(", text, re.M))
    assert declared - {"DNN64_TEST_PINNED_LIBDRAGON_H"} == PINNED_DECLARATIONS


def test_dragonfs_weights_need_libdragon_said_at_the_attribute(two_models: Workspace) -> None:
    _library(two_models, "  - rule: n64_library\n    name: testlib\n    models: [':a']\n"
                         "    toolchain: bare\n    weights: dragonfs\n")
    proc = two_models.run("build", "//models:testlib", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "models/BUILD.yaml:11:5: target //models:testlib: weights: dragonfs needs " \
           "toolchain: libdragon" in proc.stderr


def test_a_library_name_or_model_names_unfit_for_c_are_refused(two_models: Workspace) -> None:
    _library(two_models, "  - {rule: n64_library, name: Lib, models: [':a']}\n")
    proc = two_models.run("query", "//...", check=False)
    assert proc.returncode == 1 and "'Lib' is not a lowercase C identifier" in proc.stderr
    two_models.add_model("a", seed=3, package="other")
    two_models.write("other/BUILD.yaml", "targets:\n  - {rule: n64_model, name: a, src: a.onnx}\n")
    _library(two_models, "  - {rule: n64_library, name: lib, models: [':a', '//other:a']}\n")
    proc = two_models.run("query", "//...", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "two models would be called 'a' in the C API" in proc.stderr


# side -> (the model, its short name, the library's, the probe program, the probe's macro
# prefix for the streamed tensor, the input's seed)
ROWS_CASES = {
    "input": (lambda: zoo_model("small_cnn"), "cnn", "rowlib", "library_rows_probe.c", "IN0", 3),
    "output": (tiny_fcn, "fcn", "outlib", "library_out_rows_probe.c", "OUT0", 4),
}


@pytest.mark.parametrize("side", sorted(ROWS_CASES))
def test_a_streamed_tensor_goes_through_the_games_rows_callback(
    side: str, workspace: Workspace, host: HostToolchain, tmp_path: Path,
) -> None:
    """planner: {input: stream} / {output: stream} in a library: the game serves the
    input's rows through rowlib_cnn_set_input_rows, or collects the output's rows through
    outlib_fcn_set_output_rows's callback (in order, each row once); the streamed tensor
    has no arena pointer and a run without the callback fails cleanly; the output matches
    onnxruntime and the model's host build."""
    make_model, short, lib_name, probe, prefix, seed = ROWS_CASES[side]
    model = make_model()
    (workspace.root / "models").mkdir(exist_ok=True)
    onnx.save(model, workspace.root / "models" / f"{short}.onnx")
    workspace.write("models/BUILD.yaml", f"""\
        targets:
          - {{rule: n64_model, name: {short}, src: {short}.onnx,
             planner: {{fusion: dag, {side}: stream}}}}
          - {{rule: n64_library, name: {lib_name}, models: [':{short}'], toolchain: host,
             archive: true}}
        """)
    workspace.build(f"//models:{lib_name}")
    out = workspace.root / "dnn64-out" / "bin" / "models"
    meta = json.loads((out / short / "codegen" / "meta.json").read_text())
    (entry,) = meta[f"{side}s"]
    assert entry["streamed"] and entry["offset"] is None
    _, c, h, w = entry["shape"]
    (x_entry,) = meta["inputs"]
    x = np.random.default_rng(seed).standard_normal(x_entry["shape"]).astype(np.float32)
    values = ", ".join(f"{v!r}f" for v in x.ravel().tolist())
    (tmp_path / probe.replace(".c", "_input.h")).write_text(
        f"#define {prefix}_CHANNELS {c}u\n#define {prefix}_HEIGHT {h}u\n"
        f"#define {prefix}_WIDTH {w}u\nstatic const float IN0[{x.size}] = {{{values}}};\n")
    lib = out / lib_name
    program = compile_and_link(host, [Path(__file__).parent / "programs" / probe],
                               [lib / "include", tmp_path], tmp_path / "probe",
                               libraries=[lib / f"lib{lib_name}.a"])
    lines = subprocess.run([str(program)], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    checks = dict(re.findall(r"^CHECK (\w+) (\d)$", "\n".join(lines), re.M))
    assert len(checks) == 5 and set(checks.values()) == {"1"}, checks
    assert f"ROWS {h}" in lines  # every row of the streamed tensor passed once
    name = meta["outputs"][0]["name"]
    got = parse_run_outputs(lines, meta)[0][name]
    want = run_onnxruntime(model, {x_entry["name"]: x})[name]
    assert scaled_error(want, got.reshape(want.shape)) <= 1e-4
    np.savez(tmp_path / "in.npz", **{x_entry["name"]: x})
    workspace.run("run", f"//models:{short}", "--platform", "host", "--input",
                  str(tmp_path / "in.npz"), "--output", str(tmp_path / "out.npz"))
    host_out = np.load(tmp_path / "out.npz")[name]
    assert np.abs(got - host_out).max() <= 1e-5 * np.abs(host_out).max()
