"""ONNX frontend: ``import_onnx`` turns an .onnx file into an IR Graph."""

import os
from pathlib import Path

import onnx

from dnn64build.frontend.normalize import SUPPORTED_OPS
from dnn64build.frontend.onnx_import import import_model, load_onnx, read_onnx
from dnn64build.frontend.qdq import import_qdq, is_prequantized
from dnn64build.ir import Graph


def import_onnx(path: str | os.PathLike, input_shapes: dict[str, list[int]] | None = None,
                *, where: str | None = None) -> Graph:
    """Load the ONNX model at ``path`` as an IR graph with static shapes.

    ``input_shapes`` binds dynamic input dims (e.g. the batch) by input name. A
    pre-quantised model (QDQ, QLinearConv/MatMul) keeps its scales and zero points as
    ``Tensor.quant`` (docs/quant-ir.md). Raises UserError for an unreadable or malformed
    model, an unsupported operator or attribute, or a shape that cannot be resolved;
    ``where`` names the model in those errors (default: ``path``).
    """
    return import_loaded(load_onnx(path), input_shapes, where=where or str(path),
                         name=Path(path).stem)


def import_loaded(model: onnx.ModelProto, input_shapes: dict[str, list[int]] | None = None,
                  *, where: str, name: str) -> Graph:
    """``import_onnx`` for a model already read with ``read_onnx``; ``where`` names it in
    errors, ``name`` names the graph when the model does not."""
    if is_prequantized(model):
        return import_qdq(model, input_shapes, where=where, name=name)
    return import_model(model, input_shapes, where=where, name=name)


__all__ = ["SUPPORTED_OPS", "import_loaded", "import_onnx", "read_onnx"]
