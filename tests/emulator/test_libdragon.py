"""The path a libdragon developer takes: `toolchain: libdragon` ROMs, and the n64_library
example game linked through libdragon's own n64.mk, boot in ares (libdragon's signed
IPL3, weights in DragonFS) and equal the host build.

The opt-in `libdragon` tier (`pytest -m libdragon`, docs/testing.md): it needs libdragon's
toolchain ($N64_INST, tools/setup-libdragon.sh) and ares (tools/setup-ares.sh).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import onnx
import pytest

from dnn64build.emulator.ares import ares_argv
from dnn64build.emulator.process import run_until
from dnn64build.toolchains import HostToolchain, LibdragonToolchain
from dnn64build.toolchains.tools import FoundTool
from tests.build.conftest import Workspace
from tests.emulator.rom_workspace import assert_rom_equals_host, run_outputs
from tools.zoo.compare import run_onnxruntime

REPO = Path(__file__).resolve().parents[2]
# DragonFS's root marker (tests/rom/dragonfs.py): the weights went through libdragon's mkdfs.
DRAGONFS_ROOT = b"DragonFS 2.0"
GAME_LINE = re.compile(r"^(digit \d+|digits_lib: .*|no DragonFS image)$")


@pytest.fixture(scope="module")
def ld_ws(tmp_path_factory: pytest.TempPathFactory, libdragon: LibdragonToolchain,
          ) -> Workspace:
    """The repository's models and examples, `toolchain: libdragon` by default; an input
    for digits (64 pixels in 0..16) and small_cnn (normal): one sample each, as `run` can
    put only as many samples into a libdragon ROM as it was built with (one)."""
    ws = Workspace(tmp_path_factory.mktemp("libdragon") / "ws")
    for folder in ("models", "examples"):
        shutil.copytree(REPO / folder, ws.root / folder)
    build = (REPO / "BUILD.yaml").read_text()
    assert "toolchain: auto" in build
    ws.write("BUILD.yaml", build.replace("toolchain: auto", "toolchain: libdragon", 1))
    rng = np.random.default_rng(28)
    np.savez(ws.root / "digits_in.npz", input=rng.uniform(0, 16, (1, 64)).astype(np.float32))
    np.savez(ws.root / "small_cnn_in.npz",
             input=rng.standard_normal((1, 1, 16, 16)).astype(np.float32))
    return ws


@pytest.mark.parametrize("target, tolerance", [
    ("digits", 0.0), ("digits_fp32", 1e-5),
    ("small_cnn", 0.0), ("small_cnn_fp32", 1e-5),
])  # fmt: skip
def test_a_libdragon_rom_boots_in_ares_and_equals_the_host_build(
        libdragon: LibdragonToolchain, ares: FoundTool, host: HostToolchain, ld_ws: Workspace,
        target: str, tolerance: float) -> None:
    inputs = f"{target.removesuffix('_fp32')}_in.npz"
    assert_rom_equals_host(ld_ws, f"//models:{target}", tolerance=tolerance, emulator="ares",
                           inputs=inputs)
    # Made by libdragon's tools: n64tool's ROM with its IPL3, the weights in a DragonFS.
    rom = (ld_ws.root / f"dnn64-out/bin/models/{target}/{target}.z64").read_bytes()
    assert DRAGONFS_ROOT in rom
    assert rom[0x40:0x1000] != bytes(0xFC0)


def test_the_example_game_links_the_library_through_n64mk_and_runs_in_ares(
        libdragon: LibdragonToolchain, ares: FoundTool, host: HostToolchain, ld_ws: Workspace,
        ) -> None:
    ld_ws.build("//examples/libdragon_game:digits_lib")
    game = ld_ws.root / "examples" / "libdragon_game"
    proc = subprocess.run(["make", "-C", str(game)], capture_output=True, text=True,
                          env={**os.environ, "N64_INST": str(libdragon.root)}, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rom = game / "game.z64"
    assert DRAGONFS_ROOT in rom.read_bytes()

    # The game classifies its stand-in drawing (a bar in columns 3 and 4) every frame and
    # never ends: stop after three frames or at its first error line.
    printed: list[str] = []

    def stop(line: str) -> bool:
        if GAME_LINE.match(line.strip()):
            printed.append(line.strip())
        return len(printed) == 3 or any(not p.startswith("digit ") for p in printed)

    with tempfile.TemporaryDirectory(prefix="dnn64-ares-game-") as tmp:
        capture = run_until(ares_argv(ares["xvfb_run"], ares["emulator"], rom,
                                      Path(tmp) / "Xauthority"),
                            stop=stop, timeout=180, cwd=tmp, grace=2.0)
    assert capture.stopped, capture.lines[-15:]

    bar = np.array([[16.0 if i % 8 in (3, 4) else 0.0 for i in range(64)]], np.float32)
    np.savez(ld_ws.root / "bar.npz", input=bar)
    host_logits = run_outputs(ld_ws, "//models:digits", "host", inputs="bar.npz")[0]["logits"]
    onnx_logits = run_onnxruntime(onnx.load(ld_ws.root / "models/digits.onnx"),
                                  {"input": bar})["logits"]
    want = int(np.argmax(host_logits))
    assert want == int(np.argmax(onnx_logits))
    assert printed == [f"digit {want}"] * 3
