"""quantize_graph: the quantised IR's structure (docs/quant-ir.md), calibration input and
errors, determinism, per-layer fp32 overrides."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from quant_testlib import make_model, to_graph

from dnn64build.errors import UserError
from dnn64build.ir import load_graph, save_graph, verify
from dnn64build.ir.graph import Graph, Node, Tensor
from dnn64build.ir.reference import run
from dnn64build.quant import load_calibration, quantize_graph, run_int8
from dnn64build.quant.calibrate import collect_ranges, synthetic_samples
from dnn64build.quant.execute import dequantize_outputs, quantize_inputs
from dnn64build.quant.intmath import quantize_multiplier
from dnn64build.quant.qparams import activation_qparams, quantize_values


def _conv_net(tmp_path, extra: list | None = None, last: str = "h") -> Graph:
    """input [1,2,6,6] -> Conv+Relu -> (extra) -> Flatten -> Gemm -> logits [1,4]."""
    rng = np.random.default_rng(5)
    nodes = [helper.make_node("Conv", ["input", "w", "b"], ["c"], pads=[1, 1, 1, 1],
                              name="conv"),
             helper.make_node("Relu", ["c"], ["h"], name="relu"),
             *(extra or []),
             helper.make_node("Flatten", [last], ["f"], name="flatten"),
             helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["logits"], transB=1, name="fc")]
    inits = {"w": rng.standard_normal((3, 2, 3, 3)).astype(np.float32),
             "b": rng.standard_normal(3).astype(np.float32),
             "fc_w": rng.standard_normal((4, 108)).astype(np.float32) * 0.1,
             "fc_b": rng.standard_normal(4).astype(np.float32)}
    return to_graph(make_model(nodes, {"input": [1, 2, 6, 6]}, {"logits": [1, 4]}, inits),
                    tmp_path)


def test_quantised_ir_structure(tmp_path) -> None:
    graph = _conv_net(tmp_path)
    quantized, _ = quantize_graph(graph, synthetic_samples(graph, 8, seed=1))
    verify(quantized)
    assert quantized.inputs == ["input"] and quantized.outputs == ["logits"]
    assert quantized.tensors["input"].dtype == "float32"
    assert quantized.tensors["logits"].dtype == "float32"
    ops = [node.op for node in quantized.nodes]
    assert ops == ["QuantizeLinear", "Conv", "Flatten", "Gemm", "DequantizeLinear"]
    for node in quantized.nodes:
        assert "int8" in node.attrs
    for node in quantized.nodes:
        if node.op not in ("Conv", "Gemm"):
            continue
        x, w, b = (quantized.tensors[name] for name in node.inputs)
        y = quantized.tensors[node.outputs[0]]
        assert (x.dtype, w.dtype, b.dtype, y.dtype) == ("int8", "int8", "int32", "int8")
        channels = quantized.constants[node.inputs[1]].shape[0]
        assert w.quant["axis"] == 0 and w.quant["zero_point"] == [0] * channels
        assert len(w.quant["scale"]) == channels
        assert b.quant["scale"] == [x.quant["scale"] * s for s in w.quant["scale"]]
        p = node.attrs["int8"]
        assert p["x_zero_point"] == x.quant["zero_point"]
        assert p["out_zero_point"] == y.quant["zero_point"]
        expected = [quantize_multiplier(x.quant["scale"] * s / y.quant["scale"])
                    for s in w.quant["scale"]]
        assert list(zip(p["multiplier"], p["shift"], strict=True)) == expected
    conv = quantized.nodes[1]
    # The fused ReLU is the clamp at the output zero point.
    assert conv.attrs["int8"]["act_min"] == max(-128, quantized.tensors["h"].quant["zero_point"])
    gemm = quantized.nodes[3]
    assert gemm.attrs["transB"] == 1 and gemm.attrs["alpha"] == 1.0


def test_quantised_graph_round_trips_through_files(tmp_path) -> None:
    graph = _conv_net(tmp_path)
    quantized, _ = quantize_graph(graph, synthetic_samples(graph, 4, seed=1))
    save_graph(quantized, tmp_path / "q.json", tmp_path / "q.npz")
    loaded = load_graph(tmp_path / "q.json", tmp_path / "q.npz")
    x = synthetic_samples(graph, 1, seed=2)[0]
    np.testing.assert_array_equal(run_int8(loaded, x)["logits"], run_int8(quantized, x)["logits"])


def test_quantisation_is_deterministic(tmp_path) -> None:
    graph = _conv_net(tmp_path)
    for method in ("minmax", "percentile", "mse"):
        files = []
        for run_index in range(2):
            quantized, report = quantize_graph(graph.copy(), synthetic_samples(graph, 4, seed=1),
                                               method=method)
            base = tmp_path / f"{method}{run_index}"
            save_graph(quantized, f"{base}.json", f"{base}.npz")
            files.append((base.with_suffix(".json").read_bytes(),
                          base.with_suffix(".npz").read_bytes(), report))
        assert files[0] == files[1]


def test_int8_tracks_fp32_on_the_calibration_set(tmp_path) -> None:
    graph = _conv_net(tmp_path)
    samples = synthetic_samples(graph, 16, seed=1)
    quantized, report = quantize_graph(graph, samples)
    assert report["evaluation"] == "calibration" and report["calibration_samples"] == 16
    stats = report["outputs"]["logits"]
    assert stats["snr_db"] > 25.0 and stats["top1_agreement"] >= 0.9
    # The report's numbers are those of the executors.
    ref = run(graph, samples[0])["logits"]
    got = run_int8(quantized, samples[0])["logits"]
    assert np.abs(ref - got).max() <= stats["max_abs_error"]


def test_missing_calibration_is_a_user_error(tmp_path) -> None:
    graph = _conv_net(tmp_path)
    with pytest.raises(UserError, match="needs calibration data") as info:
        quantize_graph(graph, None)
    assert "synthetic" in info.value.hint
    with pytest.raises(UserError, match="empty"):
        quantize_graph(graph, [])


def test_synthetic_calibration_warns(tmp_path) -> None:
    graph = _conv_net(tmp_path)
    with pytest.warns(UserWarning, match="synthetic"):
        _, report = quantize_graph(graph, None, synthetic=True)
    assert report["synthetic"] and report["warnings"]


def test_bad_options_are_user_errors(tmp_path) -> None:
    graph = _conv_net(tmp_path)
    samples = synthetic_samples(graph, 2, seed=1)
    with pytest.raises(UserError, match="calibration method"):
        quantize_graph(graph, samples, method="kl")
    with pytest.raises(UserError, match="percentile"):
        quantize_graph(graph, samples, method="percentile", percentile=0.0)
    with pytest.raises(UserError, match="unknown node"):
        quantize_graph(graph, samples, fp32_nodes=("no_such_node",))
    with pytest.raises(UserError, match="does not fit"):
        quantize_graph(graph, [{"input": np.zeros(5, np.float32)}])


def test_fp32_nodes_stay_float_between_quantize_and_dequantize(tmp_path) -> None:
    graph = _conv_net(tmp_path)
    samples = synthetic_samples(graph, 8, seed=1)
    quantized, report = quantize_graph(graph, samples, fp32_nodes=("fc",))
    ops = [node.op for node in quantized.nodes]
    assert ops == ["QuantizeLinear", "Conv", "Flatten", "DequantizeLinear", "Gemm"]
    gemm = quantized.nodes[-1]
    assert "int8" not in gemm.attrs
    assert quantized.tensors[gemm.inputs[0]].dtype == "float32"
    assert quantized.constants[gemm.inputs[1]].dtype == np.float32
    assert report["fp32_nodes"] == [{"node": "fc", "op": "Gemm",
                                     "reason": "listed in fp32_nodes"}]
    assert report["outputs"]["logits"]["snr_db"] > 25.0


def test_op_without_int8_kernel_stays_fp32(tmp_path) -> None:
    extra = [helper.make_node("Floor", ["h"], ["fl"], name="floor")]
    graph = _conv_net(tmp_path, extra, last="fl")
    quantized, report = quantize_graph(graph, synthetic_samples(graph, 4, seed=1))
    assert report["fp32_nodes"] == [
        {"node": "floor", "op": "Floor", "reason": "no int8 kernel for Floor"},
        {"node": "flatten", "op": "Flatten", "reason": "input is fp32"}]
    ops = [node.op for node in quantized.nodes]
    # The Flatten reading the fp32 Floor stays fp32 too (a view is int8 only on int8 data).
    assert ops == ["QuantizeLinear", "Conv", "DequantizeLinear", "Floor", "Flatten",
                   "QuantizeLinear", "Gemm", "DequantizeLinear"]


def _concat_graph(first_op: str) -> Graph:
    """y = Concat(first_op(a), b) over two graph inputs."""
    tensors = {"a": Tensor([1, 4], "float32", "input"), "b": Tensor([1, 4], "float32", "input"),
               "p": Tensor([1, 4], "float32", "activation"),
               "y": Tensor([1, 8], "float32", "output")}
    attrs = {"axis": -1} if first_op == "Softmax" else {}
    return Graph("cat", ["a", "b"], ["y"], tensors,
                 [Node("first", first_op, ["a"], ["p"], attrs),
                  Node("cat", "Concat", ["p", "b"], ["y"], {"axis": 1})])


CONCAT_SAMPLES = [{"a": np.array([[-1, 0, 0.5, 1]], np.float32),
                   "b": np.array([[0, 2, 3, 4]], np.float32)}]


def test_concat_inputs_take_the_output_quantisation_without_copies() -> None:
    """As TFLite: the producers (here a Relu and the quantised graph input b) write with
    the Concat's quantisation, so no Requantize copy is left for the planner to keep."""
    quantized, _ = quantize_graph(_concat_graph("Relu"), CONCAT_SAMPLES)
    ops = [node.op for node in quantized.nodes]
    assert "Requantize" not in ops and "Concat" in ops
    out_quant = quantized.tensors["y__q"].quant
    concat = next(node for node in quantized.nodes if node.op == "Concat")
    assert all(quantized.tensors[name].quant == out_quant for name in concat.inputs)
    # one range [0, 4] for all: scale 4/255; every value within half a step
    want = np.concatenate([np.maximum(CONCAT_SAMPLES[0]["a"], 0), CONCAT_SAMPLES[0]["b"]], 1)
    np.testing.assert_allclose(run_int8(quantized, CONCAT_SAMPLES[0])["y"], want,
                               atol=0.5 * out_quant["scale"] + 1e-6)


def test_concat_keeps_a_requantize_where_the_scale_is_fixed() -> None:
    """Softmax's output quantisation is fixed (1/256, -128): only its input is copied."""
    quantized, _ = quantize_graph(_concat_graph("Softmax"), CONCAT_SAMPLES)
    requants = [node for node in quantized.nodes if node.op == "Requantize"]
    softmax = next(node for node in quantized.nodes if node.op == "Softmax")
    assert [node.inputs for node in requants] == [softmax.outputs]
    assert quantized.tensors[softmax.outputs[0]].quant == {"scale": 1 / 256, "zero_point": -128}


def test_an_output_concat_of_disparate_ranges_keeps_each_input_scale() -> None:
    """YOLOv8's output: boxes in pixels (here b, up to 400) next to sigmoid class scores.
    One scale for both (400/255) would round every score to 0; at a float32 output the
    Concat runs in float32 on inputs dequantized with their own scales, and the report
    says so. With int8 io the output must be one int8 tensor: the Concat stays int8."""
    graph = _concat_graph("Sigmoid")
    sample = {"a": np.array([[-2, -0.5, 0.5, 2]], np.float32),
              "b": np.array([[0, 10, 250, 400]], np.float32)}
    quantized, report = quantize_graph(graph, [sample])
    concat = next(node for node in quantized.nodes if node.op == "Concat")
    assert "int8" not in concat.attrs and concat.outputs == ["y"]
    assert all(quantized.tensors[name].dtype == "float32" for name in concat.inputs)
    assert [entry["node"] for entry in report["fp32_nodes"]] == ["cat"]
    y = run_int8(quantized, quantize_inputs(quantized, sample))["y"]
    scores = 1 / (1 + np.exp(-sample["a"]))
    np.testing.assert_allclose(y[:, :4], scores, atol=0.5 * 0.9 / 255 + 1e-6)
    np.testing.assert_allclose(y[:, 4:], sample["b"], atol=0.5 * 400 / 255 + 1e-4)
    kept, _ = quantize_graph(graph, [sample], io="int8")
    assert "int8" in next(node for node in kept.nodes if node.op == "Concat").attrs


def test_concat_quantisation_reaches_through_a_max_pool() -> None:
    """DenseNet's stem: Conv -> MaxPool -> Concat. The Conv itself writes with the
    Concat's quantisation (MaxPool keeps its input's), so nothing is requantised."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal((4, 2, 1, 1)).astype(np.float32)
    tensors = {"x": Tensor([1, 2, 4, 4], "float32", "input"),
               "w": Tensor([4, 2, 1, 1], "float32", "constant"),
               "c": Tensor([1, 4, 4, 4], "float32", "activation"),
               "m": Tensor([1, 4, 2, 2], "float32", "activation"),
               "r": Tensor([1, 4, 2, 2], "float32", "activation"),
               "y": Tensor([1, 8, 2, 2], "float32", "output")}
    pool = {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [0, 0, 0, 0],
            "dilations": [1, 1], "ceil_mode": 0}
    graph = Graph("stem", ["x"], ["y"], tensors, [
        Node("conv", "Conv", ["x", "w"], ["c"], {"kernel_shape": [1, 1], "strides": [1, 1],
                                                 "pads": [0, 0, 0, 0], "dilations": [1, 1],
                                                 "group": 1}),
        Node("pool", "MaxPool", ["c"], ["m"], pool),
        Node("relu", "Relu", ["m"], ["r"], {}),
        Node("cat", "Concat", ["m", "r"], ["y"], {"axis": 1}),
    ], {"w": w})
    samples = [{"x": rng.standard_normal((1, 2, 4, 4)).astype(np.float32) * 3}]
    quantized, _ = quantize_graph(graph, samples)
    assert "Requantize" not in [node.op for node in quantized.nodes]
    assert quantized.tensors["c"].quant == quantized.tensors["y__q"].quant
    np.testing.assert_allclose(run_int8(quantized, samples[0])["y"], run(graph, samples[0])["y"],
                               atol=2 * quantized.tensors["c"].quant["scale"])


def _relu_graph(size: int) -> Graph:
    return Graph("id", ["x"], ["y"], {"x": Tensor([size], "float32", "input"),
                                      "y": Tensor([size], "float32", "output")},
                 [Node("relu", "Relu", ["x"], ["y"], {})])


def test_percentile_ignores_an_outlier() -> None:
    x = np.concatenate([np.arange(10000, dtype=np.float32), [1e6]]).astype(np.float32)
    samples = [{"x": x}]
    graph = _relu_graph(x.size)
    minmax = collect_ranges(graph, samples, {"y"}, set(), "minmax")
    percentile = collect_ranges(graph, samples, {"y"}, set(), "percentile", 99.9)
    assert minmax["y"] == (0.0, 1e6)
    # the 99.9th percentile is 9990, resolved to a histogram bin (1e6 / 2048 wide)
    assert 9990 <= percentile["y"][1] <= 9990 + 1e6 / 2048


def _quantisation_error(x: np.ndarray, high: float) -> float:
    q = activation_qparams(0.0, high)
    deq = (quantize_values(x, q).astype(np.float64) - q.zero_point) * q.scale
    return float(np.sum((deq - x) ** 2))


def test_mse_range_beats_minmax_on_a_long_tailed_distribution() -> None:
    x = np.abs(np.random.default_rng(0).laplace(size=100000)).astype(np.float32)
    samples = [{"x": x}]
    graph = _relu_graph(x.size)
    minmax = collect_ranges(graph, samples, {"y"}, set(), "minmax")["y"][1]
    mse = collect_ranges(graph, samples, {"y"}, set(), "mse")["y"][1]
    assert mse < minmax
    assert _quantisation_error(x, mse) < _quantisation_error(x, minmax)


def test_load_calibration(tmp_path) -> None:
    np.savez(tmp_path / "c.npz", a=np.ones((3, 2), np.float32), b=np.zeros((3, 1), np.float32))
    samples = load_calibration(tmp_path / "c.npz", ["a", "b"])
    assert len(samples) == 3 and samples[0]["a"].shape == (2,)
    np.save(tmp_path / "c.npy", np.arange(8, dtype=np.float32).reshape(4, 2))
    samples = load_calibration(tmp_path / "c.npy", ["x"])
    assert [s["x"].tolist() for s in samples] == [[0, 1], [2, 3], [4, 5], [6, 7]]


@pytest.mark.parametrize(("setup", "names", "message"), [
    (lambda d: np.savez(d / "c.npz", a=np.ones((3, 2))), ["a", "b"], "no array for input"),
    (lambda d: np.savez(d / "c.npz", a=np.ones((3, 2)), b=np.ones((2, 2))), ["a", "b"],
     "sample count"),
    (lambda d: np.save(d / "c.npy", np.ones((3, 2))), ["a", "b"], "holds one input"),
    (lambda d: (d / "c.txt").write_text("1 2 3"), ["a"], ".npz or .npy"),
    (lambda d: (d / "c.npz").write_text("not a zip"), ["a"], "not an .npz archive"),
    (lambda d: None, ["a"], "not found"),
])
def test_load_calibration_errors(tmp_path, setup, names: list[str], message: str) -> None:
    setup(tmp_path)
    path = next(iter(sorted(tmp_path.glob("c.*"))), tmp_path / "c.npz")
    with pytest.raises(UserError, match=message):
        load_calibration(path, names)


def test_io_int8_makes_the_boundary_int8_around_fp32_nodes_too() -> None:
    """`io: int8`: an int8 input read by an fp32 node (Floor) is dequantised for it, and an
    output produced by that fp32 node is quantised into the int8 output, which keeps its
    name; dequantised, both outputs track the fp32 reference within rounding."""
    tensors = {"x": Tensor([1, 8], "float32", "input"), "f": Tensor([1, 8], "float32", "output"),
               "r": Tensor([1, 8], "float32", "output")}
    graph = Graph("io", ["x"], ["f", "r"], tensors,
                  [Node("floor", "Floor", ["x"], ["f"], {}),
                   Node("relu", "Relu", ["f"], ["r"], {})])
    samples = [{"x": np.linspace(-3, 3, 8, dtype=np.float32).reshape(1, 8)}]
    quantized, report = quantize_graph(graph, samples, io="int8")
    assert quantized.inputs == ["x"] and quantized.outputs == ["f", "r"]
    for name in ("x", "f", "r"):
        assert quantized.tensors[name].dtype == "int8" and quantized.tensors[name].quant
    got = dequantize_outputs(quantized, run_int8(quantized, quantize_inputs(quantized,
                                                                            samples[0])))
    want = run(graph, samples[0])
    for name in ("f", "r"):
        step = quantized.tensors[name].quant["scale"] + quantized.tensors["x"].quant["scale"]
        np.testing.assert_allclose(got[name], want[name], atol=step)
    assert report["io"] == "int8"
    with pytest.raises(UserError, match="unknown io type"):
        quantize_graph(graph, samples, io="int16")


def test_io_int8_keeps_int32_index_inputs() -> None:
    """`io: int8` quantises the float inputs only: an embedding's int32 token ids stay int32
    (the Gather reads them as indices), and the output tracks the fp32 reference."""
    table = np.linspace(-2, 2, 12, dtype=np.float32).reshape(4, 3)
    tensors = {"ids": Tensor([5], "int32", "input"), "y": Tensor([5, 3], "float32", "output")}
    graph = Graph("embed", ["ids"], ["y"], tensors,
                  [Node("embed", "Gather", ["table", "ids"], ["e"], {"axis": 0}),
                   Node("relu", "Relu", ["e"], ["y"], {})])
    graph.tensors["e"] = Tensor([5, 3], "float32", "activation")
    graph.add_constant("table", table)
    sample = {"ids": np.array([3, 0, -1, 2, 2], np.int32)}
    quantized, _ = quantize_graph(graph, [sample], io="int8")
    assert quantized.tensors["ids"].dtype == "int32" and not quantized.tensors["ids"].quant
    assert quantized.tensors["y"].dtype == "int8"
    got = dequantize_outputs(quantized, run_int8(quantized, quantize_inputs(quantized, sample)))
    np.testing.assert_allclose(got["y"], run(graph, sample)["y"],
                               atol=quantized.tensors["y"].quant["scale"])
