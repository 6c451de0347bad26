"""Issue 22's structural operators on the N64: LRN and 1-D windows in fp32, and grouped,
dilated 1-D and 2-D Convs in int8 on the RSP, built for `bare`; each ROM's outputs equal
the host build's (int8 bit for bit, fp32 within 1e-5) and match the reference executor."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.emulator.rom_workspace import fp32_and_int8_roms

pytestmark = [pytest.mark.emulator, pytest.mark.slow,
              pytest.mark.usefixtures("bare", "mupen64plus")]


def _model() -> onnx.ModelProto:
    """input [1, 4, 32] -> grouped dilated Conv1d -> Relu -> LRN -> MaxPool1d -> [1, 8, 16]
    -> as [1, 8, 4, 4] -> dilated depthwise Conv -> grouped Conv -> output [1, 8, 4, 4]."""
    rng = np.random.default_rng(22)
    inits = {"w1": rng.standard_normal((8, 2, 3)) * 0.4, "w2": rng.standard_normal((8, 1, 3, 3)),
             "w3": rng.standard_normal((8, 2, 3, 3)) * 0.3}
    inits = {k: v.astype(np.float32) for k, v in inits.items()}
    inits["s"] = np.array([1, 8, 4, 4], np.int64)
    nodes = [
        helper.make_node("Conv", ["input", "w1"], ["c1"], name="conv1d", group=2,
                         dilations=[2], pads=[2, 2]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu"),
        helper.make_node("LRN", ["r1"], ["n1"], name="lrn", size=3, alpha=0.5, beta=0.75),
        helper.make_node("MaxPool", ["n1"], ["p1"], name="pool1d", kernel_shape=[2],
                         strides=[2]),
        helper.make_node("Reshape", ["p1", "s"], ["r"], name="to_2d"),
        helper.make_node("Conv", ["r", "w2"], ["c2"], name="dw", group=8, dilations=[2, 2],
                         pads=[2, 2, 2, 2]),
        helper.make_node("Conv", ["c2", "w3"], ["output"], name="grouped", group=4,
                         pads=[1, 1, 1, 1]),
    ]
    graph = helper.make_graph(
        nodes, "structural", [helper.make_tensor_value_info("input", TensorProto.FLOAT,
                                                            [1, 4, 32])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 8, 4, 4])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)


def test_structural_ops_on_the_rom_equal_the_host_build(tmp_path: Path) -> None:
    source = fp32_and_int8_roms(tmp_path / "ws", "structural", _model(), input_shape=(1, 4, 32),
                                int8_attrs="kernels: rsp")
    assert "dnn64_lrn_f32(" in source  # LRN between int8 tensors runs in fp32
    assert source.count("dnn64_rsp_conv_s8(") >= 2  # the grouped and the 1-D Conv
