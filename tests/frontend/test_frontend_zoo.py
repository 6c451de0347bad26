"""Every zoo model: onnxruntime runs it, and the imported + optimised IR in the reference
executor matches onnxruntime on random inputs."""

from __future__ import annotations

import onnx
import pytest

from tools.zoo import BENCHMARK_NAMES, NAMES, build
from tools.zoo.compare import import_and_compare

pytestmark = pytest.mark.zoo  # seconds of CPU per model: not in the unit tier
SLOW = {"resnet50"}


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.slow) if name in SLOW else name for name in NAMES])
def test_zoo_model_matches_onnxruntime(name: str, tmp_path) -> None:
    model = build(name)
    graph, error = import_and_compare(model, tmp_path, seed=7)
    assert error <= 1e-4, f"{name}: scaled error {error:.3g}"
    ops = {node.op for node in graph.nodes}
    assert not ops & {"BatchNormalization", "Identity", "Dropout", "Shape", "Gather"}, ops


def test_zoo_is_deterministic() -> None:
    assert build("small_cnn").SerializeToString() == build("small_cnn").SerializeToString()


def test_zoo_exports_like_pytorch() -> None:
    """BN after Conv, and shape sub-graphs for flatten / channel shuffle / resize sizes."""
    def ops(name: str) -> list[str]:
        return [node.op_type for node in build(name).graph.node]

    assert "BatchNormalization" in ops("resnet18")
    assert {"Shape", "Gather", "Div", "Concat", "Reshape", "Transpose"} <= set(ops("shufflenet"))
    assert {"Shape", "Slice", "Cast", "Resize", "ConvTranspose"} <= set(ops("unet"))
    assert ops("densenet").count("Concat") >= 10
    assert {"HardSwish", "HardSigmoid", "Sigmoid"} <= set(ops("mobilenetv3"))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(BENCHMARK_NAMES) - set(NAMES)))
def test_benchmark_model_matches_onnxruntime(name: str, tmp_path) -> None:
    """The benchmark's torchvision-style architectures import exactly too."""
    graph, error = import_and_compare(build(name), tmp_path, seed=7)
    assert error <= 1e-4, f"{name}: scaled error {error:.3g}"


def test_unknown_zoo_name() -> None:
    with pytest.raises(KeyError, match="unknown zoo model 'vgg16'"):
        build("vgg16")


def test_generate_writes_models(tmp_path) -> None:
    from tools.zoo.generate import main

    assert main([str(tmp_path), "mlp", "small_cnn"]) == 0
    model = onnx.load(tmp_path / "mlp.onnx")
    onnx.checker.check_model(model)
    assert model.SerializeToString() == build("mlp").SerializeToString()
