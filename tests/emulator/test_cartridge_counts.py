"""The ROM's cartridge counters (kernels/platform/dnn64_cart.c) on the host build: the
bytes `run` reports per inference equal the weight bytes the plan says are streamed, and
for a model without fused groups the size of the weights asset in the packed image (its
asset table read here by hand, docs/rom-format.md), each tile read once; a dag group
re-reads its tiles for every firing and reads its streamed input's rows, which the count
shows. On bare (mupen64plus) every weight tile but the first is prefetched beside compute,
tiles over 64 KiB included (one PI DMA moves up to 16 MiB)."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import pytest

from tests.build.conftest import Workspace
from tests.emulator.rom_workspace import assert_rom_equals_host, model_workspace, tiny_fcn
from tools.zoo.builder import NetBuilder

COUNTED = re.compile(r"cartridge: (\d+) bytes per inference \((\d+) waited for, (\d+) "
                     r"prefetched in (\d+) tiles\)")


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    ws = model_workspace(tmp_path_factory.mktemp("cart") / "ws", "cart", tiny_fcn(),
                         onnx_name="m.onnx", seed=7, input_shape=(1, 2, 16, 12), samples=1)
    ws.write("models/BUILD.yaml", """\
        targets:
          - rule: n64_model
            name: flat
            src: m.onnx
            quantize: {mode: int8, calibration: calib.npz}
            planner: {fusion: none}
          - rule: n64_model
            name: dag
            src: m.onnx
            quantize: {mode: int8, calibration: calib.npz}
            planner: {fusion: dag, input: stream}
        """)
    return ws


def _counted(ws: Workspace, target: str) -> tuple[int, ...]:
    out = ws.run("run", f"//models:{target}", "--platform", "host", "--input", "in.npz").stdout
    assert "vs the reference executor: match" in out
    found = COUNTED.search(out)
    assert found, out
    return tuple(int(v) for v in found.groups())


def _planned_bytes(ws: Workspace, target: str) -> int:
    plan = json.loads((ws.root / f"dnn64-out/bin/models/{target}/plan/plan.json").read_text())
    return plan["cartridge"]["bytes_per_inference"]


def _asset_sizes(image: Path) -> dict[str, int]:
    """Name -> size of every asset in a packed asset image (big-endian table)."""
    data = image.read_bytes()
    assert data[:4] == b"DN64"
    count = struct.unpack(">I", data[8:12])[0]
    sizes = {}
    for k in range(count):
        entry = data[16 + 48 * k: 64 + 48 * k]
        sizes[entry[:40].rstrip(b"\0").decode()] = struct.unpack(">I", entry[44:48])[0]
    return sizes


def test_unfused_model_reads_each_weight_byte_once(host_cc: str, ws: Workspace) -> None:
    total, waited, prefetched, tiles = _counted(ws, "flat")
    # the host's file reads complete before the prefetch call returns: all waited for
    assert total == waited and prefetched == tiles == 0
    images = list((ws.root / "dnn64-out/bin/models/flat").rglob("*.img"))
    assert images, "no host asset image"
    weights = [size for name, size in _asset_sizes(images[0]).items()
               if name.endswith(".weights")]
    assert total == weights[0] == _planned_bytes(ws, "flat")


def test_dag_group_rereads_and_streamed_input_are_counted(host_cc: str,
                                                          ws: Workspace) -> None:
    total, waited, _, _ = _counted(ws, "dag")
    assert total == _planned_bytes(ws, "dag")
    report = (ws.root / "dnn64-out/bin/models/dag/plan/report.txt").read_text()
    assert f"cartridge: {total} bytes read per inference" in report
    weights = next(size for name, size in _asset_sizes(
        next((ws.root / "dnn64-out/bin/models/dag").rglob("*.img"))).items()
        if name.endswith(".weights"))
    input_bytes = 2 * 16 * 12 * 4  # the float32 input [1, 2, 16, 12], each row read once
    # every firing re-reads its member's tiles
    assert waited == total > weights + input_bytes


@pytest.mark.emulator
def test_bare_prefetches_tiles_over_64_kib(bare, mupen64plus,
                                           tmp_path_factory: pytest.TempPathFactory) -> None:
    """A Gemm of 512 x 512 int8 weights (256 KiB) on a 192 KiB staging: tiles of up to
    96 KiB, each but the first read beside compute as one PI DMA."""
    b = NetBuilder("wide_gemm", seed=41)
    y = b.gemm(b.input("input", [1, 512]), 512, 512)
    ws = model_workspace(tmp_path_factory.mktemp("wide") / "ws", "wide", b.build({y: [1, 512]}),
                         onnx_name="m.onnx", seed=3, input_shape=(1, 512), samples=1)
    staging = 2 * 96 * 1024
    ws.write("models/BUILD.yaml", f"""\
        targets:
          - rule: n64_model
            name: m
            src: m.onnx
            quantize: {{mode: int8, calibration: calib.npz}}
            planner: {{staging_bytes: {staging}}}
        """)
    out = assert_rom_equals_host(ws, "//models:m")  # bit-exact against the host build
    found = COUNTED.search(out)
    assert found, out
    total, waited, prefetched, tiles = (int(v) for v in found.groups())
    assert total == waited + prefetched >= 512 * 512
    # the CPU waits only for the model's first tile, at most half the staging
    assert waited <= staging // 2
    # more than 64 KiB a prefetched tile on average: some prefetch exceeds one old chunk
    assert tiles >= 2 and prefetched > 65536 * tiles
