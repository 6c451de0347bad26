"""Graph optimisation passes, run in a fixed order.

(Constant folding is the importer's: frontend/shapes.py folds every node computed from
constants alone, so no pass sees one.)

| name             | what it does                                                       |
|------------------|--------------------------------------------------------------------|
| remove_identity  | removes Identity and Dropout                                       |
| fold_batchnorm   | folds BatchNormalization into the preceding Conv/ConvTranspose/Gemm;|
|                  | a BN elsewhere becomes a per-channel Mul + Add                     |
| unary_patterns   | Mul(x, Sigmoid(x)) -> Swish, Mul(x, Tanh(Softplus(x))) -> Mish,      |
|                  | 0.5 * x * (1 + Erf(x / sqrt 2)) -> Gelu (how exporters write them) |
| fuse_activation  | fuses Relu/Clip/LeakyRelu/HardSwish/HardSigmoid/Sigmoid/Tanh,       |
|                  | x*sigmoid(x) (SiLU), x*hardsigmoid(x) (HardSwish) and the other    |
|                  | one-input activations (Elu, Gelu, Mish, ...) into the preceding    |
|                  | Conv/ConvTranspose/Gemm                                            |
| flush_subnormals | zeroes subnormal float32 constants (the VR4300 traps on them)      |
| mark_views       | marks Reshape/Flatten/Squeeze/Unsqueeze/Identity and size-1        |
|                  | Transposes as views (attr "view": true): output aliases input      |
"""

from __future__ import annotations

from collections.abc import Callable

from dnn64build.ir.graph import Graph
from dnn64build.ir.verify import verify
from dnn64build.passes.flush_subnormals import flush_subnormals
from dnn64build.passes.fold_batchnorm import fold_batchnorm
from dnn64build.passes.fuse_activation import fuse_activation
from dnn64build.passes.mark_views import mark_views
from dnn64build.passes.remove_identity import remove_identity
from dnn64build.passes.unary_patterns import unary_patterns

Pass = Callable[[Graph], Graph]

PASSES: dict[str, Pass] = {
    "remove_identity": remove_identity,
    "fold_batchnorm": fold_batchnorm,
    "unary_patterns": unary_patterns,
    "fuse_activation": fuse_activation,
    "flush_subnormals": flush_subnormals,
    "mark_views": mark_views,
}


def optimize(graph: Graph) -> Graph:
    """Run every pass, in order; returns a new graph."""
    graph = graph.copy()
    for run_pass in PASSES.values():
        graph = run_pass(graph)
        graph.remove_unused()
        verify(graph)
    return graph


__all__ = ["PASSES", "optimize"]
