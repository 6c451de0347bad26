"""save_graph / load_graph: round trip, byte-identical output, untouched when unchanged."""

from __future__ import annotations

import json
import os
import zipfile

import numpy as np

from dnn64build.ir import Graph, Node, Tensor, load_graph, save_graph, verify


def sample_graph() -> Graph:
    graph = Graph(
        name="sample", inputs=["/in:0"], outputs=["y"],
        tensors={"/in:0": Tensor([1, 4], "float32", "input"),
                 "y": Tensor([1, 2], "float32", "output", quant={"reserved": True})},
        nodes=[Node("gemm", "Gemm", ["/in:0", "layer/w", "b"], ["y"],
                    {"alpha": 1.0, "beta": 1.0, "transA": 0, "transB": 1,
                     "activation": "clip", "activation_params": {"min": None, "max": 6.0}})])
    graph.add_constant("layer/w", np.arange(8, dtype=np.float32).reshape(2, 4))
    graph.add_constant("b", np.array([0.5, -1], np.float32))
    graph.add_constant("scalar", np.int64(3))  # unused but kept: 0-d arrays survive
    graph.nodes[0].inputs.append("")
    return graph


def test_round_trip(tmp_path) -> None:
    graph = sample_graph()
    save_graph(graph, tmp_path / "g.json", tmp_path / "g.npz")
    loaded = load_graph(tmp_path / "g.json", tmp_path / "g.npz")
    verify(loaded)
    assert loaded.tensors == graph.tensors and loaded.nodes == graph.nodes
    assert loaded.inputs == graph.inputs and loaded.outputs == graph.outputs
    assert sorted(loaded.constants) == sorted(graph.constants)
    for name, value in graph.constants.items():
        assert loaded.constants[name].dtype == value.dtype
        np.testing.assert_array_equal(loaded.constants[name], value)
    assert loaded.constants["scalar"].shape == ()


def test_json_is_plain_and_documented_shape(tmp_path) -> None:
    save_graph(sample_graph(), tmp_path / "g.json", tmp_path / "g.npz")
    doc = json.loads((tmp_path / "g.json").read_text())
    assert doc["format"] == "dnn64-ir" and doc["version"] == 1
    assert doc["tensors"]["layer/w"] == {"shape": [2, 4], "dtype": "float32", "kind": "constant"}
    assert doc["tensors"]["y"]["quant"] == {"reserved": True}
    assert doc["nodes"][0]["attrs"]["activation_params"] == {"min": None, "max": 6.0}
    # numpy alone reads the weights, keyed by tensor name.
    with np.load(tmp_path / "g.npz") as archive:
        assert sorted(archive.files) == ["b", "layer/w", "scalar"]


def test_output_is_byte_identical_and_fixed_timestamps(tmp_path) -> None:
    save_graph(sample_graph(), tmp_path / "a.json", tmp_path / "a.npz")
    save_graph(sample_graph(), tmp_path / "b.json", tmp_path / "b.npz")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    with zipfile.ZipFile(tmp_path / "a.npz") as archive:
        assert {info.date_time for info in archive.infolist()} == {(1980, 1, 1, 0, 0, 0)}


def test_unchanged_output_is_left_untouched(tmp_path) -> None:
    json_path, npz_path = tmp_path / "g.json", tmp_path / "g.npz"
    save_graph(sample_graph(), json_path, npz_path)
    os.utime(json_path, (1_000_000, 1_000_000))
    os.utime(npz_path, (1_000_000, 1_000_000))
    save_graph(sample_graph(), json_path, npz_path)
    assert json_path.stat().st_mtime == 1_000_000 and npz_path.stat().st_mtime == 1_000_000
    changed = sample_graph()
    changed.name = "other"
    save_graph(changed, json_path, npz_path)
    assert json_path.stat().st_mtime != 1_000_000 and npz_path.stat().st_mtime == 1_000_000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json", "g.npz"]  # no temp files


def test_imported_zoo_model_saves_identically_twice(tmp_path) -> None:
    import onnx

    from dnn64build.frontend import import_onnx
    from dnn64build.passes import optimize
    from tools.zoo import build

    onnx.save(build("shufflenet"), tmp_path / "m.onnx")
    outputs = []
    for run in range(2):
        graph = optimize(import_onnx(tmp_path / "m.onnx"))
        save_graph(graph, tmp_path / f"{run}.json", tmp_path / f"{run}.npz")
        outputs.append(((tmp_path / f"{run}.json").read_bytes(),
                        (tmp_path / f"{run}.npz").read_bytes()))
    assert outputs[0] == outputs[1]
