"""The integer parameters of each int8 node (``attrs["int8"]``), from tensor QParams.

Pure functions: no graph editing. Every value is a Python int/float/list so that the
parameters serialise to JSON as they are (docs/quant-ir.md lists them per op).
"""

from __future__ import annotations

import numpy as np

from dnn64build.ir.kernels import ACTIVATIONS
from dnn64build.ir.ops import ACTIVATION_OF_OP
from dnn64build.quant import intmath
from dnn64build.quant.plan import CLAMP_ACTIVATIONS
from dnn64build.quant.qparams import QParams, clamp_bounds, quantize_values

_CLAMP_RANGE = {"relu": (0.0, None), "relu6": (0.0, 6.0)}


def lut(activation: str, params: dict, in_q: QParams, out_q: QParams) -> list[int]:
    table = intmath.activation_lut(lambda x: ACTIVATIONS[activation](x, params),
                                   in_q.scale, in_q.zero_point, out_q.scale, out_q.zero_point)
    return [int(v) for v in table]


def fused_output_stage(attrs: dict, out_q: QParams, pre_q: QParams | None) -> dict:
    """out_zero_point, act_min, act_max, lut of a node with an optional fused activation."""
    name = attrs.get("activation")
    params = attrs.get("activation_params", {})
    if name is None:
        return {"out_zero_point": out_q.zero_point, "act_min": -128, "act_max": 127, "lut": None}
    if name in CLAMP_ACTIVATIONS:
        low, high = _CLAMP_RANGE.get(name) or (params.get("min"), params.get("max"))
        act_min, act_max = clamp_bounds(low, high, out_q)
        return {"out_zero_point": out_q.zero_point, "act_min": act_min, "act_max": act_max,
                "lut": None}
    assert pre_q is not None
    return {"out_zero_point": pre_q.zero_point, "act_min": -128, "act_max": 127,
            "lut": lut(name, params, pre_q, out_q)}


def multipliers(real: np.ndarray) -> tuple[list[int], list[int]]:
    pairs = [intmath.quantize_multiplier(float(r)) for r in np.asarray(real).reshape(-1)]
    return [m for m, _ in pairs], [s for _, s in pairs]


def weighted(attrs: dict, x_q: QParams, w_scales: np.ndarray, out_q: QParams,
             pre_q: QParams | None) -> dict:
    """Conv / ConvTranspose / Gemm / MatMul with constant weights."""
    stage = fused_output_stage(attrs, out_q, pre_q)
    target = pre_q if stage["lut"] is not None else out_q
    mult, shift = multipliers(x_q.scale * w_scales / target.scale)
    return {"x_zero_point": x_q.zero_point, "multiplier": mult, "shift": shift, **stage}


def matmul_activations(a_q: QParams, b_q: QParams, out_q: QParams) -> dict:
    m, s = intmath.quantize_multiplier(a_q.scale * b_q.scale / out_q.scale)
    return {"a_zero_point": a_q.zero_point, "b_zero_point": b_q.zero_point,
            "out_zero_point": out_q.zero_point, "multiplier": m, "shift": s,
            "act_min": -128, "act_max": 127, "lut": None}


def elementwise(op: str, attrs: dict, a_q: QParams, b_q: QParams, out_q: QParams) -> dict:
    args = (a_q.scale, a_q.zero_point, b_q.scale, b_q.zero_point, out_q.scale,
            out_q.zero_point)
    stage = fused_output_stage(attrs, out_q, None)
    bounds = {"act_min": stage["act_min"], "act_max": stage["act_max"]}
    if op in ("Max", "Min"):
        m = intmath.minmax_params(*args)
        return {"a_zero_point": m.a_zero_point, "b_zero_point": m.b_zero_point,
                "out_zero_point": m.out_zero_point, "a_multiplier": m.a_multiplier,
                "a_shift": m.a_shift, "b_multiplier": m.b_multiplier, "b_shift": m.b_shift}
    if op in ("Add", "Sub"):
        p = intmath.add_params(*args)
        return {"a_zero_point": p.a_zero_point, "b_zero_point": p.b_zero_point,
                "out_zero_point": p.out_zero_point, "a_multiplier": p.a_multiplier,
                "a_shift": p.a_shift, "b_multiplier": p.b_multiplier, "b_shift": p.b_shift,
                "out_multiplier": p.out_multiplier, "out_shift": p.out_shift,
                "left_shift": p.left_shift, **bounds}
    p = intmath.mul_params(*args) if op == "Mul" else intmath.div_params(*args)
    return {"a_zero_point": p.a_zero_point, "b_zero_point": p.b_zero_point,
            "out_zero_point": p.out_zero_point, "multiplier": p.multiplier, "shift": p.shift,
            **bounds}


def activation(op: str, attrs: dict, in_q: QParams, out_q: QParams) -> dict:
    """A stand-alone activation: its parameters are the node's attributes."""
    return {"lut": lut(ACTIVATION_OF_OP[op], attrs, in_q, out_q)}


def reduce_mean(in_shape: list[int], axes: list[int], in_q: QParams, out_q: QParams,
                count: int | None = None) -> dict:
    """dnn64_reduce_mean_s8's parameters: the sum of the reduced values times s_in / (s_out *
    count); ``count`` defaults to the number of reduced values (1: a ReduceSum)."""
    if count is None:
        count = int(np.prod([in_shape[a] for a in axes]))
    m, s = intmath.quantize_multiplier(in_q.scale / (out_q.scale * count))
    return {"x_zero_point": in_q.zero_point, "out_zero_point": out_q.zero_point,
            "multiplier": m, "shift": s}


def softmax(in_q: QParams, out_q: QParams) -> dict:
    m, s = intmath.softmax_out_multiplier(out_q.scale)
    return {"exp_table": [int(v) for v in intmath.softmax_exp_table(in_q.scale)],
            "multiplier": m, "shift": s, "out_zero_point": out_q.zero_point}


def requantize(in_q: QParams, out_q: QParams) -> dict:
    m, s = intmath.quantize_multiplier(in_q.scale / out_q.scale)
    return {"x_zero_point": in_q.zero_point, "multiplier": m, "shift": s,
            "out_zero_point": out_q.zero_point}


def pad_value(value: float, q: QParams) -> dict:
    return {"pad_value": int(quantize_values(np.float32(value), q))}
