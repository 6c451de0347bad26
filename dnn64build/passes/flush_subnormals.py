"""Flush subnormal float32 constants to zero.

The VR4300's FPU cannot compute with a subnormal operand: it raises an
unimplemented-operation exception, which no FCR31 enable bit masks (its FS bit
flushes subnormal *results* only). Trained weights hold such values (weight decay
pushes some to 1e-45), and a program that loads one crashes on a console and in ares,
though cen64 and mupen64plus compute through it. A subnormal is below 1.2e-38, so
zeroing it (keeping its sign) changes no product by more than that.
"""

from __future__ import annotations

import numpy as np

from dnn64build.ir.graph import Graph

_TINY = np.finfo(np.float32).tiny


def flush_subnormals(graph: Graph) -> Graph:
    """Replace every float32 constant holding a subnormal by a copy with it zeroed."""
    for name, value in graph.constants.items():
        if value.dtype != np.float32:
            continue
        subnormal = (value != 0) & (np.abs(value) < _TINY)
        if subnormal.any():
            graph.constants[name] = np.where(subnormal, np.copysign(np.float32(0), value),
                                             value).astype(np.float32)
    return graph
