"""Operator parameters that ONNX passes as tensors (shape, axes, pads, scales, ...).

In the IR these parameters are attributes. A node whose parameter tensors are not
constant (they depend on input values; the importer folds every constant sub-graph)
keeps them as extra inputs, in their ONNX positions; the reference executor absorbs
them at run time. ``absorb`` is the one place that turns parameter values into attributes.
"""

from __future__ import annotations

import numpy as np

# op -> names of its parameter inputs, in ONNX input order after the one data input.
PARAM_INPUTS: dict[str, tuple[str, ...]] = {
    "Reshape": ("shape",),
    "Clip": ("min", "max"),
    "Squeeze": ("axes",),
    "Unsqueeze": ("axes",),
    "ReduceMean": ("axes",),
    "ReduceSum": ("axes",),
    "ReduceMax": ("axes",),
    "Expand": ("shape",),
    "Tile": ("repeats",),
    "Pad": ("pads", "constant_value", "axes"),
    "Resize": ("roi", "scales", "sizes"),
    "Slice": ("starts", "ends", "axes", "steps"),
}


def has_pending_params(op: str, inputs: list[str]) -> bool:
    """True if the node still carries parameter tensors as inputs."""
    return op in PARAM_INPUTS and any(inputs[1:])


def absorb(
    op: str,
    attrs: dict,
    params: dict[str, np.ndarray],
    in_shape: list[int],
    out_shape: list[int] | None,
) -> dict:
    """Canonical attributes of ``op`` given the values of its present parameter inputs.

    ``attrs`` may already hold canonical values (from an older opset's attributes);
    present parameter tensors override them. Returns a new dict.
    """
    attrs = dict(attrs)
    rank = len(in_shape)
    if op == "Reshape":
        attrs["shape"] = list(out_shape) if out_shape is not None else _reshape_target(
            in_shape, params["shape"], bool(attrs.pop("allowzero", 0)))
        attrs.pop("allowzero", None)
    elif op == "Clip":
        for key in ("min", "max"):
            if key in params:
                attrs[key] = float(params[key])
            attrs.setdefault(key, None)
    elif op in ("Squeeze", "Unsqueeze"):
        if "axes" in params:
            attrs["axes"] = [int(a) for a in params["axes"].reshape(-1)]
        if op == "Squeeze":
            axes = attrs.get("axes")
            attrs["axes"] = ([i for i, d in enumerate(in_shape) if d == 1] if axes is None
                             else sorted(a % rank for a in axes))
        else:
            out_rank = rank + len(attrs["axes"])
            attrs["axes"] = sorted(a % out_rank for a in attrs["axes"])
    elif op in ("ReduceMean", "ReduceSum", "ReduceMax"):
        noop = bool(attrs.pop("noop_with_empty_axes", 0))
        axes = attrs.get("axes")
        if "axes" in params:
            axes = [int(a) for a in params["axes"].reshape(-1)]
        if not axes:
            axes = [] if noop else list(range(rank))
        attrs["axes"] = sorted(a % rank for a in axes)
        attrs.setdefault("keepdims", 1)
    elif op == "Pad":
        attrs.setdefault("mode", "constant")
        if "pads" in params:
            pads = [int(p) for p in params["pads"].reshape(-1)]
            axes = ([int(a) % rank for a in params["axes"].reshape(-1)] if "axes" in params
                    else list(range(rank)))
            full = [0] * (2 * rank)
            for i, axis in enumerate(axes):
                full[axis] = pads[i]
                full[axis + rank] = pads[i + len(axes)]
            attrs["pads"] = full
        if "constant_value" in params and params["constant_value"].size:
            attrs["value"] = float(params["constant_value"].reshape(-1)[0])
        attrs.setdefault("value", 0.0)
    elif op == "Resize":
        attrs["scales"] = _resize_scales(attrs, params, in_shape, out_shape)
        attrs.pop("axes", None)
    elif op == "Slice":
        attrs.update(_slice_attrs(params, in_shape))
    elif op == "Expand":
        target = tuple(int(d) for d in params["shape"].reshape(-1))
        attrs["shape"] = list(np.broadcast_shapes(tuple(in_shape), target))
    elif op == "Tile":
        attrs["repeats"] = [int(r) for r in params["repeats"].reshape(-1)]
    return attrs


def _reshape_target(in_shape: list[int], target: np.ndarray, allowzero: bool) -> list[int]:
    shape = [int(d) for d in target.reshape(-1)]
    if not allowzero:
        shape = [in_shape[i] if d == 0 else d for i, d in enumerate(shape)]
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1]))
        total = int(np.prod(in_shape))
        shape[shape.index(-1)] = total // known if known else 0
    return shape


def _resize_scales(attrs: dict, params: dict[str, np.ndarray], in_shape: list[int],
                   out_shape: list[int] | None) -> list[float]:
    rank = len(in_shape)
    axes = [a % rank for a in attrs.get("axes", range(rank))]
    scales = params.get("scales")
    sizes = params.get("sizes")
    full = [1.0] * rank
    if scales is not None and scales.size:
        for axis, value in zip(axes, scales.reshape(-1), strict=True):
            full[axis] = float(value)
    elif sizes is not None and sizes.size:
        for axis, value in zip(axes, sizes.reshape(-1), strict=True):
            full[axis] = float(value) / in_shape[axis]
    elif "scales" in attrs:
        full = list(attrs["scales"])
    elif out_shape is not None:
        full = [o / i for o, i in zip(out_shape, in_shape, strict=True)]
    return full


def _slice_attrs(params: dict[str, np.ndarray], in_shape: list[int]) -> dict:
    """Clamp starts/ends to the tensor so that range(start, end, step) lists the indices."""
    rank = len(in_shape)
    starts = [int(v) for v in params["starts"].reshape(-1)]
    ends = [int(v) for v in params["ends"].reshape(-1)]
    axes = ([int(a) % rank for a in params["axes"].reshape(-1)] if "axes" in params
            else list(range(len(starts))))
    steps = ([int(s) for s in params["steps"].reshape(-1)] if "steps" in params
             else [1] * len(starts))
    out_starts, out_ends = [], []
    for start, end, axis, step in zip(starts, ends, axes, steps, strict=True):
        dim = in_shape[axis]
        start = start + dim if start < 0 else start
        end = end + dim if end < 0 else end
        if step > 0:
            out_starts.append(min(max(start, 0), dim))
            out_ends.append(min(max(end, 0), dim))
        else:
            out_starts.append(min(max(start, 0), dim - 1))
            out_ends.append(min(max(end, -1), dim - 1))
    return {"starts": out_starts, "ends": out_ends, "axes": axes, "steps": steps}
