"""Issue 22's element-wise operators on the N64: one model chaining them (fp32 and int8),
built for `bare`, runs in mupen64plus like the host build of the same code, and `run`
finds each build matching the reference executors."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.emulator.rom_workspace import fp32_and_int8_roms

pytestmark = [pytest.mark.emulator, pytest.mark.usefixtures("bare", "mupen64plus")]


def unary_chain() -> onnx.ModelProto:
    """Conv, then Max, Elu, Softsign, Mish, PRelu, Erf, Gelu, Abs, Sqrt, Pow, Selu, Exp,
    Softplus, Min and LogSoftmax over the channels (Gelu fused into nothing: it follows
    an Erf)."""
    rng = np.random.default_rng(22)
    consts = {"w": rng.standard_normal((4, 2, 3, 3)).astype(np.float32) * 0.5,
              "lo": np.float32(-1.5), "slope": rng.uniform(0.1, 0.5, (4, 1, 1)).astype(np.float32),
              "three": np.float32(3.0), "hi": rng.uniform(1, 2, (6,)).astype(np.float32)}
    chain = [("Max", ["lo"], {}), ("Elu", [], {"alpha": 0.7}), ("Softsign", [], {}),
             ("Mish", [], {}), ("PRelu", ["slope"], {}), ("Erf", [], {}), ("Gelu", [], {}),
             ("Abs", [], {}), ("Sqrt", [], {}), ("Pow", ["three"], {}), ("Selu", [], {}),
             ("Exp", [], {}), ("Softplus", [], {}), ("Min", ["hi"], {})]
    nodes = [helper.make_node("Conv", ["input", "w"], ["t0"], pads=[1, 1, 1, 1], name="conv")]
    for k, (op, extra, attrs) in enumerate(chain):
        nodes.append(helper.make_node(op, [f"t{k}", *extra], [f"t{k + 1}"], name=op, **attrs))
    nodes.append(helper.make_node("LogSoftmax", [f"t{len(chain)}"], ["y"], axis=1, name="lsm"))
    graph = helper.make_graph(
        nodes, "unary_chain",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 2, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=10)


def test_unary_ops_rom_equals_the_host_build(tmp_path) -> None:
    source = fp32_and_int8_roms(tmp_path / "ws", "unary", unary_chain(), input_shape=(1, 2, 6, 6))
    # the int8 build ran the one-input ops as tables and Max/Min in int8 on the N64 (PRelu
    # and LogSoftmax stay fp32)
    assert source.count("dnn64_lut_s8(") >= 9
    assert "dnn64_max_s8(" in source and "dnn64_min_s8(" in source
