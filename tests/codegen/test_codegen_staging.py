"""Tiles: byte layout, tiling choices, staging size; and the generated C compiles
for the N64 (VR4300, big-endian) with the cross compiler when it is installed."""

from __future__ import annotations

import warnings

import numpy as np
from codegen_cases import Case, compile_case, errors_vs_onnxruntime, many_tiles_model

from dnn64build.codegen.lowering import Call, Tiled
from dnn64build.codegen.model import generate_model
from dnn64build.codegen.program import generate_main
from dnn64build.codegen.staging import DEFAULT_STAGING_CAP, Tile, half_bytes, tile_counts
from dnn64build.planner.dagplan import PlanParams
from dnn64build.planner.graph_plan import plan_graph
from dnn64build.quant import quantize_graph
from dnn64build.toolchains import BareToolchain
from dnn64build.toolchains.base import KERNELS_DIR, run
from tools.zoo import build


def test_tile_bytes_in_both_orders() -> None:
    tile = Tile((np.array([1, -2, 3], np.int8), np.array([0x01020304, -1], np.int32)), "t")
    head = bytes([1, 0xFE, 3]) + bytes(13)
    assert tile.encode(True) == head + bytes([1, 2, 3, 4, 255, 255, 255, 255]) + bytes(8)
    assert tile.encode(False) == head + bytes([4, 3, 2, 1, 255, 255, 255, 255]) + bytes(8)
    assert tile.part_offsets() == [0, 16] and tile.nbytes == 32


def _tiled(rows: int, row_floats: int) -> Tiled:
    return Tiled((np.zeros((rows, row_floats), np.float32),), lambda b, n, p: "")


def test_tiles_are_as_few_as_fit_and_balanced() -> None:
    # 25 floats = 100 bytes a row; 512 bytes hold 5 rows (500 -> 512 padded)
    assert tile_counts(_tiled(10, 25), 512) == [(0, 5), (5, 5)]
    # 11 rows need 3 tiles of at most 5: balanced as 4 + 4 + 3
    assert tile_counts(_tiled(11, 25), 512) == [(0, 4), (4, 4), (8, 3)]
    assert tile_counts(_tiled(3, 25), 4096) == [(0, 3)]


def test_default_staging() -> None:
    small = Call(lambda p: "", (np.zeros(100, np.float32),))
    assert half_bytes([small], None, "m") == 400
    big = _tiled(1000, 100)  # 400 kB layer: tiled to the cap
    assert half_bytes([small, big], None, "m") == DEFAULT_STAGING_CAP // 2
    wide = _tiled(4, 10000)  # one channel above the cap: that channel's size
    assert half_bytes([wide], None, "m") == 40000
    assert half_bytes([small], 1000, "m") == 496  # halves rounded down to 16 bytes


def test_generated_c_compiles_for_the_n64(bare: BareToolchain, tmp_path) -> None:
    case = Case("mobilenetv3", build("mobilenetv3"))
    graph, plan, fp32 = compile_case(case, tmp_path, "net")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        quantized = quantize_graph(graph, None, synthetic=True)[0]
    int8 = generate_model(quantized, plan_graph(quantized, PlanParams(timings=False)),
                          symbol="qnet")
    models = [(m.symbol, f"{m.symbol}.h", m.arena_bytes, m.metadata) for m in (fp32, int8)]
    sources = {"net": fp32.c_source, "qnet": int8.c_source, "main": generate_main(models)}
    (tmp_path / "net.h").write_text(fp32.header)
    (tmp_path / "qnet.h").write_text(int8.header)
    for name, text in sources.items():
        (tmp_path / f"{name}.c").write_text(text)
        run(bare.compile_argv(tmp_path / f"{name}.c", tmp_path / f"{name}.o",
                                         include_dirs=[KERNELS_DIR, tmp_path]))


def test_a_layer_of_many_tiles_runs_them_in_one_loop(host, tmp_path, runtime_cache) -> None:
    """A Conv of 24 output channels (1,152 + 4 weight bytes each) and a Gemm of 24 rows
    (1,536 bytes each) in staging halves of 6,000 bytes: the Conv in tiles of 5 (the last
    of 4), the Gemm in 8 tiles of 3. Each layer's code is tile 0's call and one loop
    (codegen/tile_loop.py) whatever its tile count, and the outputs match onnxruntime."""
    case = Case("tiled", many_tiles_model(), staging_bytes=12000)
    _, _, generated = compile_case(case, tmp_path, "tiled")
    assert generated.metadata["weight_tiles"] == 5 + 8
    assert generated.c_source.count("one loop") == 2
    assert generated.c_source.count("dnn64_conv_f32(") == 2
    assert generated.c_source.count("dnn64_gemm_f32(") == 2
    errors = errors_vs_onnxruntime([case], tmp_path / "run", runtime_cache)
    assert errors["tiled"] <= 1e-4
