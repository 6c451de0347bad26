"""Model zoo: seeded, PyTorch-export-style ONNX models built with onnx.helper + numpy.

``build(name)`` returns the model, ``NAMES`` lists them; ``python -m tools.zoo OUTDIR``
writes every model as ``OUTDIR/<name>.onnx``.
"""

from __future__ import annotations

import onnx

from tools.zoo.builder import OPSET
from tools.zoo.models import BUILDERS

NAMES: tuple[str, ...] = tuple(BUILDERS)


def build(name: str, opset: int = OPSET) -> onnx.ModelProto:
    """The zoo model called ``name`` (one of NAMES), written in the forms of ``opset``
    (11 to 21); same arguments, same bytes."""
    if name not in BUILDERS:
        raise KeyError(f"unknown zoo model {name!r}; models: {', '.join(NAMES)}")
    return BUILDERS[name](opset)


__all__ = ["NAMES", "build"]
