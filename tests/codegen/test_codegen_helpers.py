"""The helpers the fp32 and int8 emitters share, against hand-written references."""

from __future__ import annotations

import numpy as np
import pytest

from dnn64build.codegen.cfmt import c_call
from dnn64build.codegen.common import conv_rows
from dnn64build.ir.graph import Node


def test_c_call_is_one_statement() -> None:
    assert c_call("dnn64_f", "&geom", 3, "NULL") == "dnn64_f(&geom, 3, NULL);"
    assert c_call("dnn64_done") == "dnn64_done();"


def test_conv_rows_keeps_conv_weights_as_they_are() -> None:
    weight = np.arange(4 * 3 * 2 * 5, dtype=np.float32).reshape(4, 3, 2, 5)
    rows, kernel = conv_rows(Node("c", "Conv", ["x", "w"], ["y"], {"group": 1}), weight)
    assert kernel == [2, 5]
    np.testing.assert_array_equal(rows, weight.reshape(4, 30))


@pytest.mark.parametrize("group", [1, 2, 3])
def test_conv_rows_reorders_conv_transpose_per_group(group: int) -> None:
    c_in, per_group, kh, kw = 6, 2, 3, 2  # weight [C_in, C_out/g, kH, kW]
    weight = np.random.default_rng(0).standard_normal((c_in, per_group, kh, kw))
    node = Node("t", "ConvTranspose", ["x", "w"], ["y"], {"group": group})
    rows, kernel = conv_rows(node, weight)
    # Output channel o of group g reads input channels [g*C_in/g, (g+1)*C_in/g).
    cin_g = c_in // group
    expected = np.stack([
        np.stack([weight[g * cin_g + i, o] for i in range(cin_g)]).reshape(-1)
        for g in range(group) for o in range(per_group)])
    assert kernel == [kh, kw]
    np.testing.assert_array_equal(rows, expected)
    assert rows.flags.c_contiguous
