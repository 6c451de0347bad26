"""planner: {weights: stream | resident | auto}: which tiles stay resident, the fit check
that counts them, and host runs of two inferences in one program: outputs bit-exact with
the streamed build and the references, and no weight byte read from the asset area by the
second inference (the host platform's READ trace, $DNN64_READ_TRACE)."""

from __future__ import annotations

import struct
import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest

from dnn64build.codegen.model import GeneratedModel, generate_model
from dnn64build.errors import UserError
from dnn64build.frontend import import_onnx
from dnn64build.ir.graph import Graph
from dnn64build.passes import optimize
from dnn64build.planner.checker import check_plan
from dnn64build.planner.fit import LOW_MEMORY_BYTES, STACK_BYTES, STAGING_RESERVE_BYTES
from dnn64build.planner.resident import choose_resident
from dnn64build.quant import quantize_graph, run_int8
from dnn64build.stages.plan import fit_search, plan_model
from tools.host_run import run_on_host
from tools.zoo import build
from tools.zoo.compare import run_onnxruntime, scaled_error

MIB = 1024 * 1024


def test_auto_keeps_the_most_reread_tiles_that_fit() -> None:
    tiles = [(100, 1), (40, 12), (80, 1), (50, 3), (30, 1)]
    assert choose_resident(tiles, "stream", 10**6) == []
    assert choose_resident(tiles, "resident", 0) == [0, 1, 2, 3, 4]
    # reads first: 40 (x12), then 50 (x3); then the read-once tiles in blob order, a tile
    # that does not fit skipped for a smaller one after it: 100 no (60 left), 80 no, 30 yes
    assert choose_resident(tiles, "auto", 150) == [1, 3, 4]
    assert choose_resident(tiles, "auto", 39) == [4]
    assert choose_resident(tiles, "auto", 10**6) == [0, 1, 2, 3, 4]


def _graph(tmp_path: Path, name: str, int8: bool) -> tuple[onnx.ModelProto, Graph]:
    model = build(name)
    onnx.save(model, tmp_path / f"{name}.onnx")
    graph = optimize(import_onnx(tmp_path / f"{name}.onnx"))
    if int8:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # synthetic calibration warns, as it should
            graph = quantize_graph(graph, None, synthetic=True)[0]
    return model, graph


def _planned(graph: Graph, weights: str, memory: int, **planner: object
             ) -> tuple[dict, GeneratedModel]:
    config = {"memory": memory, "label": "//t:m", "weights": weights, "toolchain": "host",
              **planner}
    plan = plan_model(graph, config)
    model = generate_model(graph, plan, symbol="m", staging_bytes=plan["staging"]["bytes"],
                           kernels=str(planner.get("kernels", "cpu")))
    return plan, model


def _needs(plan: dict, resident: int, staging: bool = True) -> int:
    """RDRAM the model uses, summed by hand from plan.json (docs/planner.md): the staging
    only when some tile streams."""
    return (LOW_MEMORY_BYTES + plan["arena_bytes"] + resident + STACK_BYTES
            + plan["program"]["estimate_bytes"] + (plan["staging"]["bytes"] if staging else 0))


def test_resident_plan_counts_every_weight_byte_in_the_fit(tmp_path: Path) -> None:
    _, graph = _graph(tmp_path, "small_cnn", int8=False)
    plan, model = _planned(graph, "resident", 4 * MIB)
    record = plan["weights"]
    assert check_plan(plan) is None
    # every tile of the blob codegen writes is resident; nothing streams per inference
    assert record["resident_bytes"] == model.metadata["weight_bytes"] == len(model.weights_big)
    assert model.metadata["resident_bytes"] == record["resident_bytes"] > 0
    assert record["streamed_bytes_per_inference"] == model.metadata["weight_bytes_streamed"] == 0
    assert plan["cartridge"]["bytes_per_inference"] == 0  # the cost the ladder ranks by, too
    # so the code has no staging area: its arena is the plan's activations
    assert model.staging_bytes == 0 < plan["staging"]["bytes"]
    assert model.arena_bytes == model.metadata["staging_offset"]
    # Just below the least memory a resident plan uses: refused, naming the weights.
    config = {"label": "//t:m", "weights": "resident", "toolchain": "host", "memory": 0}
    smallest = fit_search(graph, config).smallest
    memory = _needs(smallest, smallest["weights"]["resident_bytes"], staging=False) - 16
    with pytest.raises(UserError, match="resident weights"):
        _planned(graph, "resident", memory)
    assert _planned(graph, "resident", memory + 16)[0]["weights"]["resident_bytes"] > 0


def test_the_default_streams(tmp_path: Path) -> None:
    """Not auto: each model of a bundle would keep its own resident buffer, planned alone
    (docs/planner.md, "Resident weights")."""
    _, graph = _graph(tmp_path, "small_cnn", int8=False)
    plan = plan_model(graph, {"memory": 4 * MIB, "label": "//t:m", "toolchain": "host"})
    assert plan["weights"]["mode"] == "stream" and plan["weights"]["resident_tiles"] == []


def test_auto_is_resident_when_it_fits_and_streams_when_not(tmp_path: Path) -> None:
    # mlp: a blob (68912 bytes) bigger than its staging (65536) by more than its smallest
    # tile (2608): there is a memory where that tile fits but not all of them
    _, graph = _graph(tmp_path, "mlp", int8=False)
    stream, model = _planned(graph, "stream", 4 * MIB)
    blob, staging = len(model.weights_big), stream["staging"]["bytes"]
    smallest_tile = min(size for size, _ in stream["weights"]["tiles"])
    assert staging + smallest_tile < blob
    needs = _needs(stream, 0)
    # room for all of it in place of the staging, past the reserve: all resident
    roomy, code = _planned(graph, "auto", needs - staging + STAGING_RESERVE_BYTES + blob)
    assert roomy["weights"]["resident_bytes"] == blob
    assert roomy["weights"]["streamed_bytes_per_inference"] == code.staging_bytes == 0
    # the streamed model, the reserve and less than the smallest tile: nothing resident
    tight, _ = _planned(graph, "auto", needs + STAGING_RESERVE_BYTES + smallest_tile - 16)
    assert tight["weights"]["resident_tiles"] == []
    assert tight["weights"]["streamed_bytes_per_inference"] == \
        stream["weights"]["streamed_bytes_per_inference"] > 0
    # room for the smallest tile beside the staging: that one, the rest streamed
    some, _ = _planned(graph, "auto", needs + STAGING_RESERVE_BYTES + smallest_tile)
    assert 0 < some["weights"]["resident_bytes"] < blob


def _weights_span(image: bytes) -> tuple[int, int]:
    """[offset, end) of asset "m.weights" in an asset image (docs/rom-format.md: a 16-byte
    header, then 48-byte entries of name[40], u32 offset, u32 size, big-endian)."""
    count = struct.unpack(">I", image[8:12])[0]
    for k in range(count):
        entry = image[16 + 48 * k:16 + 48 * (k + 1)]
        if entry[:40].rstrip(b"\0") == b"m.weights":
            offset, size = struct.unpack(">II", entry[40:])
            return offset, offset + size
    raise AssertionError("no m.weights asset")


def _two_runs(model: GeneratedModel, graph: Graph, inputs: dict[str, np.ndarray],
              workdir: Path, runtime_cache: Path, monkeypatch: pytest.MonkeyPatch
              ) -> tuple[dict[str, np.ndarray], list[int]]:
    """Outputs of two inferences in one host program (equal, or parse_outputs fails) and
    the weight bytes each read from the asset area."""
    monkeypatch.setenv("DNN64_READ_TRACE", "1")
    workdir.mkdir()
    result = run_on_host([(model, [inputs[n] for n in graph.inputs])], workdir, runs=2,
                         poison=True, cache_dir=runtime_cache)
    begin, end = _weights_span((workdir / "assets.bin").read_bytes())
    read, run = [0, 0], 0
    for line in result.lines:
        fields = line.split()
        if fields[0] == "TICKS":
            run += 1
        elif fields[0] == "READ":
            offset, size = int(fields[1]), int(fields[2])
            read[run] += max(0, min(offset + size, end) - max(offset, begin))
    assert run == 2
    return result.outputs["m"], read


@pytest.mark.parametrize("int8", [False, True], ids=["fp32", "int8"])
def test_two_inferences_read_resident_weights_once(int8: bool, tmp_path: Path,
                                                   runtime_cache: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # fusion dag: its groups re-read their tiles every firing, from RAM once resident
    onnx_model, graph = _graph(tmp_path, "small_cnn", int8)
    inputs = {n: np.random.default_rng(3).standard_normal(graph.tensors[n].shape)
              .astype(np.float32) for n in graph.inputs}
    plans = {mode: _planned(graph, mode, 4 * MIB, fusion="dag")
             for mode in ("stream", "resident")}
    assert any(reads > 1 for _, reads in plans["resident"][0]["weights"]["tiles"])
    runs = {mode: _two_runs(model, graph, inputs, tmp_path / mode, runtime_cache, monkeypatch)
            for mode, (_, model) in plans.items()}
    blob = plans["resident"][0]["weights"]["resident_bytes"]
    assert runs["resident"][1] == [blob, 0]  # loaded by the first run, never again
    streamed = plans["stream"][1].metadata["weight_bytes_streamed"]
    assert runs["stream"][1] == [streamed, streamed] and streamed > blob
    resident, streamed_out = runs["resident"][0], runs["stream"][0]
    for name in graph.outputs:
        assert resident[name].tobytes() == streamed_out[name].tobytes(), name
    if int8:
        expected = run_int8(graph, inputs)
        for name in graph.outputs:
            np.testing.assert_array_equal(resident[name], expected[name], err_msg=name)
    else:
        expected = run_onnxruntime(onnx_model, inputs)
        for name in graph.outputs:
            assert scaled_error(expected[name], resident[name]) < 1e-4, name


@pytest.mark.slow
def test_mobilenet_v3_small_int8_resident_in_8mib_streams_nothing_the_second_time(
        tmp_path: Path, runtime_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's case, planned for bare with the RSP kernels (run on the host: their
    CPU twins, the same tiles and the same bits)."""
    _, graph = _graph(tmp_path, "mobilenet_v3_small", int8=True)
    plan, model = _planned(graph, "resident", 8 * MIB, kernels="auto", toolchain="bare")
    inputs = {n: np.random.default_rng(4).standard_normal(graph.tensors[n].shape)
              .astype(np.float32) for n in graph.inputs}
    outputs, read = _two_runs(model, graph, inputs, tmp_path / "run", runtime_cache,
                              monkeypatch)
    assert read == [len(model.weights_big), 0]
    assert plan["weights"]["resident_bytes"] == len(model.weights_big)
    expected = run_int8(graph, inputs)
    for name in graph.outputs:
        np.testing.assert_array_equal(outputs[name], expected[name], err_msg=name)


def test_a_layer_of_many_resident_tiles_runs_them_in_one_loop(
    tmp_path: Path, runtime_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Resident tiles cut by a small staging (a Conv in 5 tiles, a Gemm in 8): each layer is
    tile 0's call and one loop over the resident buffer (codegen/tile_loop.py), no tile is
    read after the load, and the outputs match onnxruntime."""
    from tests.codegen.codegen_cases import many_tiles_model

    model = many_tiles_model()
    onnx.save(model, tmp_path / "tiles.onnx")
    graph = optimize(import_onnx(tmp_path / "tiles.onnx"))
    plan, generated = _planned(graph, "resident", 4 * MIB, staging_bytes=12000)
    assert len(plan["weights"]["tiles"]) == 5 + 8 == len(plan["weights"]["resident_tiles"])
    assert generated.c_source.count("one loop") == 2
    assert "dnn64_asset_read_start" not in generated.c_source
    inputs = {"x": np.random.default_rng(4).standard_normal((1, 32, 4, 4)).astype(np.float32)}
    outputs, read = _two_runs(generated, graph, inputs, tmp_path / "run", runtime_cache,
                              monkeypatch)
    assert read == [plan["weights"]["resident_bytes"], 0]
    assert scaled_error(run_onnxruntime(model, inputs)["y"], outputs["y"]) < 1e-4
