"""Zoo models written at other opsets import and match onnxruntime: the opset-specific
forms (Unsqueeze axes attribute or input, Resize roi/scales, HardSwish before opset 14)
normalise to the same IR."""

from __future__ import annotations

import pytest

from tools.zoo import build
from tools.zoo.compare import import_and_compare


@pytest.mark.parametrize("opset", [11, 13, 18, 21])
@pytest.mark.parametrize("name", ["unet", "shufflenet", "mobilenetv3"])
def test_zoo_model_at_other_opsets(name: str, opset: int, tmp_path) -> None:
    model = build(name, opset)
    assert model.opset_import[0].version == opset
    graph, error = import_and_compare(model, tmp_path, seed=opset)
    assert error <= 1e-4
    ops = {node.op for node in graph.nodes}
    assert not ops & {"Shape", "BatchNormalization", "Clip", "HardSigmoid", "HardSwish"}, ops
