"""ONNX attributes -> canonical IR attributes, one function per operator.

Every default the ONNX spec defines is written out, auto_pad becomes explicit pads,
axes become non-negative, so later stages never re-derive ONNX defaults. Parameter
inputs (shape, axes, pads, scales, ...) are handled by ``dnn64build.ir.params``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from onnx.helper import tensor_dtype_to_np_dtype


class Unsupported(Exception):
    """This node uses an attribute value or input rank the compiler does not support."""


@dataclass(frozen=True)
class NodeInfo:
    """What a normaliser may look at: ONNX attributes, static shapes, the opset."""

    attrs: dict
    in_shapes: list[list[int] | None]
    out_shapes: list[list[int]]
    opset: int


def _spatial_2d(info: NodeInfo, what: str) -> None:
    """1-D windows arrive here as 2-D ones (dnn64build.frontend.spatial1d), 3-D Conv and
    pools as 2-D ones depth by depth (spatial3d) unless that rewrite does not apply."""
    if len(info.in_shapes[0]) == 5 and what in ("Conv", "MaxPool", "AveragePool"):
        raise Unsupported(f"3-D {what} only with explicit pads, no ceil_mode, one output and "
                          "a constant weight")
    if len(info.in_shapes[0]) != 4:
        raise Unsupported(f"{what} supports only 1-D and 2-D spatial inputs (NCW, NCHW)")


def _same_pads(in_hw: list[int], kernel: list[int], strides: list[int],
               dilations: list[int], upper: bool) -> list[int]:
    begin, end = [], []
    for size, k, s, d in zip(in_hw, kernel, strides, dilations, strict=True):
        out = -(-size // s)
        total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
        small, large = total // 2, total - total // 2
        begin.append(small if upper else large)
        end.append(large if upper else small)
    return begin + end


def _window_attrs(info: NodeInfo, kernel: list[int]) -> dict:
    """kernel_shape, strides, dilations and explicit pads of a Conv or pool."""
    a = info.attrs
    strides = list(a.get("strides", [1, 1]))
    dilations = list(a.get("dilations", [1, 1]))
    auto_pad = a.get("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads = _same_pads(info.in_shapes[0][2:], kernel, strides, dilations,
                          auto_pad == "SAME_UPPER")
    elif auto_pad == "VALID":
        pads = [0, 0, 0, 0]
    else:
        pads = list(a.get("pads", [0, 0, 0, 0]))
    return {"kernel_shape": list(kernel), "strides": strides, "dilations": dilations,
            "pads": pads}


def conv(info: NodeInfo) -> dict:
    _spatial_2d(info, "Conv")
    kernel = info.attrs.get("kernel_shape", info.in_shapes[1][2:])
    group = int(info.attrs.get("group", 1))
    channels, weight = info.in_shapes[0][1], info.in_shapes[1]
    if weight[1] * group != channels or weight[0] % group:
        raise Unsupported(f"malformed Conv: weight shape {weight} with group {group} does not "
                          f"fit {channels} input channels")
    return {**_window_attrs(info, kernel), "group": group}


def conv_transpose(info: NodeInfo) -> dict:
    _spatial_2d(info, "ConvTranspose")
    a = info.attrs
    kernel = list(a.get("kernel_shape", info.in_shapes[1][2:]))
    strides = list(a.get("strides", [1, 1]))
    dilations = list(a.get("dilations", [1, 1]))
    output_padding = list(a.get("output_padding", [0, 0]))
    auto_pad = a.get("auto_pad", "NOTSET")
    if info.in_shapes[1][0] != info.in_shapes[0][1]:
        raise Unsupported(f"malformed ConvTranspose: weight shape {info.in_shapes[1]} does not "
                          f"fit {info.in_shapes[0][1]} input channels")
    if "output_shape" in a or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        # The output size is known: split the padding it implies as the spec says.
        begin, end = [], []
        for i in range(2):
            total = (strides[i] * (info.in_shapes[0][2 + i] - 1) + output_padding[i]
                     + (kernel[i] - 1) * dilations[i] + 1 - info.out_shapes[0][2 + i])
            if total < 0:
                raise Unsupported("output_shape larger than the full transposed convolution")
            half = total // 2
            upper = auto_pad == "SAME_UPPER"
            begin.append(half if upper else total - half)
            end.append(total - half if upper else half)
        pads = begin + end
    elif auto_pad == "VALID":
        pads = [0, 0, 0, 0]
    else:
        pads = list(a.get("pads", [0, 0, 0, 0]))
    return {"kernel_shape": kernel, "strides": strides, "dilations": dilations, "pads": pads,
            "group": int(a.get("group", 1)), "output_padding": output_padding}


def max_pool(info: NodeInfo) -> dict:
    _spatial_2d(info, "MaxPool")
    if info.attrs.get("storage_order", 0):
        raise Unsupported("storage_order=1 is not supported")
    return {**_window_attrs(info, info.attrs["kernel_shape"]),
            "ceil_mode": int(info.attrs.get("ceil_mode", 0))}


def average_pool(info: NodeInfo) -> dict:
    _spatial_2d(info, "AveragePool")
    return {**_window_attrs(info, info.attrs["kernel_shape"]),
            "ceil_mode": int(info.attrs.get("ceil_mode", 0)),
            "count_include_pad": int(info.attrs.get("count_include_pad", 0))}


def global_average_pool(info: NodeInfo) -> dict:
    _spatial_2d(info, "GlobalAveragePool")
    return {}


def gemm(info: NodeInfo) -> dict:
    a = info.attrs
    return {"alpha": float(a.get("alpha", 1.0)), "beta": float(a.get("beta", 1.0)),
            "transA": int(a.get("transA", 0)), "transB": int(a.get("transB", 0))}


def softmax(info: NodeInfo) -> dict:
    rank = len(info.in_shapes[0])
    default = -1 if info.opset >= 13 else 1
    return {"axis": int(info.attrs.get("axis", default)) % rank}


def _axis(name: str, default: int, rank_offset: int = 0) -> Callable[[NodeInfo], dict]:
    def normalise(info: NodeInfo) -> dict:
        rank = len(info.in_shapes[0]) + rank_offset
        return {name: int(info.attrs.get(name, default)) % rank}
    return normalise


def transpose(info: NodeInfo) -> dict:
    rank = len(info.in_shapes[0])
    return {"perm": [int(p) % rank for p in info.attrs.get("perm", range(rank - 1, -1, -1))]}


def batch_norm(info: NodeInfo) -> dict:
    if info.attrs.get("training_mode", 0):
        raise Unsupported("training_mode=1 is not supported (export the model in eval mode)")
    return {"epsilon": float(info.attrs.get("epsilon", 1e-5))}


def shape(info: NodeInfo) -> dict:
    rank = len(info.in_shapes[0])

    def clamp(value: int) -> int:
        return min(max(value + rank if value < 0 else value, 0), rank)
    return {"start": clamp(int(info.attrs.get("start", 0))),
            "end": clamp(int(info.attrs.get("end", rank)))}


def cast(info: NodeInfo) -> dict:
    return {"to": str(np.dtype(tensor_dtype_to_np_dtype(int(info.attrs["to"]))))}


def flatten(info: NodeInfo) -> dict:
    rank = len(info.in_shapes[0])
    axis = int(info.attrs.get("axis", 1))
    return {"axis": axis + rank if axis < 0 else axis}


def leaky_relu(info: NodeInfo) -> dict:
    return {"alpha": float(info.attrs.get("alpha", 0.01))}


def hard_sigmoid(info: NodeInfo) -> dict:
    return {"alpha": float(info.attrs.get("alpha", 0.2)),
            "beta": float(info.attrs.get("beta", 0.5))}


def clip(info: NodeInfo) -> dict:
    # Before opset 11 min/max were attributes; from 11 on they are inputs.
    return {key: float(info.attrs[key]) if key in info.attrs else None for key in ("min", "max")}


def axes_attr(info: NodeInfo) -> dict:
    """Squeeze/Unsqueeze/Reduce*: axes as an attribute (older opsets) + keepdims."""
    out = {}
    if "axes" in info.attrs:
        out["axes"] = [int(a) for a in info.attrs["axes"]]
    for key in ("keepdims", "noop_with_empty_axes"):
        if key in info.attrs:
            out[key] = int(info.attrs[key])
    return out


def pad(info: NodeInfo) -> dict:
    mode = info.attrs.get("mode", "constant")
    if mode not in ("constant", "reflect", "edge", "wrap"):
        raise Unsupported(f"Pad mode {mode!r} is not supported")
    out: dict = {"mode": mode}
    if "pads" in info.attrs:  # opset < 11
        out["pads"] = [int(p) for p in info.attrs["pads"]]
        out["value"] = float(info.attrs.get("value", 0.0))
    return out


RESIZE_COORDINATE_MODES = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                           "half_pixel_symmetric")


def resize(info: NodeInfo) -> dict:
    a = info.attrs
    mode = a.get("mode", "nearest")
    if mode not in ("nearest", "linear"):
        raise Unsupported(f"Resize mode {mode!r} is not supported (nearest, linear are)")
    coord = a.get("coordinate_transformation_mode", "half_pixel")
    if coord not in RESIZE_COORDINATE_MODES:
        raise Unsupported(f"coordinate_transformation_mode {coord!r} is not supported "
                          f"({', '.join(RESIZE_COORDINATE_MODES)} are)")
    if a.get("antialias", 0):
        raise Unsupported("antialias=1 is not supported")
    if a.get("keep_aspect_ratio_policy", "stretch") != "stretch":
        raise Unsupported("keep_aspect_ratio_policy other than 'stretch' is not supported")
    out = {"mode": mode, "coordinate_transformation_mode": coord,
           "nearest_mode": a.get("nearest_mode", "round_prefer_floor")}
    if "axes" in a:
        out["axes"] = [int(x) for x in a["axes"]]
    return out


def upsample(info: NodeInfo) -> dict:
    """Upsample (opset < 10) is Resize with asymmetric coordinates and floor rounding."""
    mode = info.attrs.get("mode", "nearest")
    if mode not in ("nearest", "linear", "bilinear"):
        raise Unsupported(f"Upsample mode {mode!r} is not supported")
    out = {"mode": "nearest" if mode == "nearest" else "linear",
           "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}
    if "scales" in info.attrs:
        out["scales"] = [float(s) for s in info.attrs["scales"]]
    return out


# --- structural operators (issue 22): LRN, ... ---

def lrn(info: NodeInfo) -> dict:
    if len(info.in_shapes[0]) < 3:
        raise Unsupported("LRN needs an input of rank >= 3 (N, C, spatial...)")
    a = info.attrs
    return {"size": int(a["size"]), "alpha": float(a.get("alpha", 1e-4)),
            "beta": float(a.get("beta", 0.75)), "bias": float(a.get("bias", 1.0))}


def layer_norm(info: NodeInfo) -> dict:
    rank = len(info.in_shapes[0])
    if int(info.attrs.get("stash_type", 1)) != 1:
        raise Unsupported("stash_type other than 1 (float32) is not supported")
    return {"axis": int(info.attrs.get("axis", -1)) % rank,
            "epsilon": float(info.attrs.get("epsilon", 1e-5))}


def _none(info: NodeInfo) -> dict:
    return {}


# --- unary element-wise ops, PRelu, Max/Min (issue 22) ---

def _float_attrs(**defaults: float) -> Callable[[NodeInfo], dict]:
    """Float attributes with the spec's defaults (Elu's alpha, Selu's alpha and gamma, ...)."""
    def normalise(info: NodeInfo) -> dict:
        return {key: float(info.attrs.get(key, value)) for key, value in defaults.items()}
    return normalise


def gelu(info: NodeInfo) -> dict:
    approximate = info.attrs.get("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise Unsupported(f"Gelu approximate={approximate!r} (the spec has 'none' and 'tanh')")
    return {"approximate": approximate}


def two_inputs(info: NodeInfo) -> dict:
    if len(info.in_shapes) != 2:
        raise Unsupported(f"{len(info.in_shapes)} inputs: only two are supported (chain the "
                          "operator to combine more)")
    return {}


UNARY_NORMALISERS: dict[str, Callable[[NodeInfo], dict]] = {
    **dict.fromkeys(("Neg", "Abs", "Exp", "Log", "Sqrt", "Reciprocal", "Sign", "Erf",
                     "Softplus", "Softsign", "Mish"), _none),
    "Pow": _none,
    "Gelu": gelu,
    "Elu": _float_attrs(alpha=1.0),
    "Selu": _float_attrs(alpha=1.67326319217681884765625, gamma=1.05070102214813232421875),
    "Celu": _float_attrs(alpha=1.0),
    "ThresholdedRelu": _float_attrs(alpha=1.0),
    "Shrink": _float_attrs(lambd=0.5, bias=0.0),
    "PRelu": _none,
    "Max": two_inputs,
    "Min": two_inputs,
    "LogSoftmax": softmax,
}


NORMALISERS: dict[str, Callable[[NodeInfo], dict]] = {
    "Conv": conv,
    "ConvTranspose": conv_transpose,
    "Gemm": gemm,
    "MatMul": _none,
    "Add": _none,
    "Sub": _none,
    "Mul": _none,
    "Div": _none,
    "Relu": _none,
    "Clip": clip,
    "LeakyRelu": leaky_relu,
    "Sigmoid": _none,
    "Tanh": _none,
    "HardSigmoid": hard_sigmoid,
    "HardSwish": _none,
    "Softmax": softmax,
    "MaxPool": max_pool,
    "AveragePool": average_pool,
    "GlobalAveragePool": global_average_pool,
    "ReduceMean": axes_attr,
    "Concat": _axis("axis", 0),
    "Flatten": flatten,
    "Reshape": lambda info: {"allowzero": int(info.attrs.get("allowzero", 0))},
    "Transpose": transpose,
    "Squeeze": axes_attr,
    "Unsqueeze": axes_attr,
    "Pad": pad,
    "Resize": resize,
    "Upsample": upsample,
    "Identity": _none,
    "Dropout": _none,
    "BatchNormalization": batch_norm,
    "Shape": shape,
    "Gather": _axis("axis", 0),
    "Slice": _none,
    "Cast": cast,
    "Floor": _none,
    "Ceil": _none,
    **UNARY_NORMALISERS,
    # structural operators (issue 22)
    "LRN": lrn,
    "ReduceSum": axes_attr,
    "ReduceMax": axes_attr,
    "Split": _axis("axis", 0),  # imported as one Slice per output (onnx_import)
    "Expand": _none,
    "Tile": _none,
    "LayerNormalization": layer_norm,
    "Where": _none,  # codegen: the condition must be constant
    # imported as LayerNormalization and BatchNormalization (onnx_import)
    "InstanceNormalization": batch_norm,
}

SUPPORTED_OPS = tuple(sorted([*NORMALISERS, "Constant"]))
