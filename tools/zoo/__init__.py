"""Model zoo: seeded, PyTorch-export-style ONNX models built with onnx.helper + numpy.

``build(name)`` returns the model, ``NAMES`` lists the small test zoo (every test suite
runs it); ``BENCHMARK_NAMES`` lists the sixteen architectures of the memory benchmark at
their usual resolutions (tools/zoo/torchvision_models.py adds the ones the test zoo lacks);
YOLOv8n at 320 and 640 (tools/zoo/yolo_models.py) completes ``ALL_NAMES``.
``python -m tools.zoo OUTDIR`` writes every test-zoo model as ``OUTDIR/<name>.onnx``.
"""

from __future__ import annotations

import onnx

from tools.zoo.builder import OPSET
from tools.zoo.models import BUILDERS as ZOO_BUILDERS
from tools.zoo.torchvision_models import BUILDERS as TORCHVISION_BUILDERS
from tools.zoo.yolo_models import BUILDERS as YOLO_BUILDERS

BUILDERS = {**ZOO_BUILDERS, **TORCHVISION_BUILDERS, **YOLO_BUILDERS}
NAMES: tuple[str, ...] = tuple(ZOO_BUILDERS)
# The benchmark set: torchvision's names in the comments where the zoo's differ.
BENCHMARK_NAMES: tuple[str, ...] = (
    "resnet18", "resnet50", "mobilenetv2",  # mobilenet_v2
    "mobilenet_v3_small", "mnasnet", "efficientnet_b0", "regnet_y_400mf", "shufflenet_v2",
    "squeezenet",  # squeezenet1_1
    "densenet121", "googlenet", "alexnet", "mlp_mnist", "unet4", "lraspp", "deeplabv3",
)
ALL_NAMES: tuple[str, ...] = tuple(BUILDERS)


def build(name: str, opset: int = OPSET) -> onnx.ModelProto:
    """The zoo model called ``name`` (one of ALL_NAMES), written in the forms of ``opset``
    (11 to 21); same arguments, same bytes."""
    if name not in BUILDERS:
        raise KeyError(f"unknown zoo model {name!r}; models: {', '.join(ALL_NAMES)}")
    return BUILDERS[name](opset)


__all__ = ["ALL_NAMES", "BENCHMARK_NAMES", "NAMES", "build"]
