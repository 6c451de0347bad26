"""Build kernels/ into a host shared library and call it from numpy through ctypes."""

from __future__ import annotations

import ctypes
import subprocess
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from dnn64build import TOOL_ROOT

KERNEL_DIR = TOOL_ROOT / "kernels"
HOST_CFLAGS = ("-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC")
MAX_DIMS = 6
# Set by test_sanitize.py when it reruns the kernel tests against a sanitizer build.
PREBUILT_ENV = "DNN64_TEST_KERNEL_LIB"


def kernel_sources() -> list[Path]:
    """The portable kernel sources (kernels/platform/ is the platform layer, not ours)."""
    return sorted(KERNEL_DIR.glob("*.c"))


def build_library(out: Path, extra_flags: Sequence[str] = ()) -> Path:
    """Compile every kernel source into one shared library at ``out``."""
    cmd = ["cc", *HOST_CFLAGS, *extra_flags, "-o", str(out), *map(str, kernel_sources())]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"kernel build failed:\n{' '.join(cmd)}\n{proc.stderr}")
    return out


def _int_struct(name: str, fields: Sequence[str]) -> type[ctypes.Structure]:
    return type(name, (ctypes.Structure,), {"_fields_": [(f, ctypes.c_int32) for f in fields]})


ConvGeom = _int_struct("ConvGeom", [
    "n", "c_in", "h_in", "w_in", "c_out", "h_out", "w_out", "k_h", "k_w",
    "stride_h", "stride_w", "dil_h", "dil_w", "pad_top", "pad_left", "group"])
PoolGeom = _int_struct("PoolGeom", [
    "n", "c", "h_in", "w_in", "h_out", "w_out", "k_h", "k_w", "stride_h", "stride_w",
    "dil_h", "dil_w", "pad_top", "pad_left", "pad_bottom", "pad_right"])
Region = _int_struct("Region", [
    "row0", "rows", "col0", "cols", "offset", "row_stride", "plane_stride"])
class AddS8Params(ctypes.Structure):
    _fields_ = [*((f, ctypes.c_int32) for f in (
        "a_zero_point", "b_zero_point", "out_zero_point", "a_mult", "a_shift", "b_mult",
        "b_shift", "out_mult", "out_shift", "left_shift", "act_min", "act_max")),
        ("tables", ctypes.c_void_p)]
MinMaxS8Params = _int_struct("MinMaxS8Params", [
    "a_zero_point", "b_zero_point", "out_zero_point", "a_mult", "a_shift", "b_mult", "b_shift"])
MulS8Params = _int_struct("MulS8Params", [
    "a_zero_point", "b_zero_point", "out_zero_point", "mult", "shift", "act_min", "act_max"])


class ActF32(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int32), ("alpha", ctypes.c_float), ("beta", ctypes.c_float)]


class Q8Out(ctypes.Structure):
    _fields_ = [("out_zero_point", ctypes.c_int32), ("act_min", ctypes.c_int32),
                ("act_max", ctypes.c_int32), ("lut", ctypes.c_void_p)]


class Bcast(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int32), ("dims", ctypes.c_int32 * MAX_DIMS),
                ("a_strides", ctypes.c_int32 * MAX_DIMS), ("b_strides", ctypes.c_int32 * MAX_DIMS)]


ACT = {"none": 0, "relu": 1, "clip": 2, "leaky_relu": 3, "sigmoid": 4, "tanh": 5,
       "hard_sigmoid": 6, "hard_swish": 7, "silu": 8, "neg": 9, "abs": 10, "exp": 11,
       "log": 12, "sqrt": 13, "reciprocal": 14, "sign": 15, "erf": 16, "gelu": 17,
       "gelu_tanh": 18, "elu": 19, "selu": 20, "celu": 21, "thresholded_relu": 22,
       "softplus": 23, "softsign": 24, "mish": 25, "shrink": 26, "swish": 27}
BINARY = {"Add": 0, "Sub": 1, "Mul": 2, "Div": 3, "Max": 4, "Min": 5, "PRelu": 6, "Pow": 7}
PAD_MODE = {"constant": 0, "reflect": 1, "edge": 2}
COORD = {"half_pixel": 0, "asymmetric": 1, "align_corners": 2, "pytorch_half_pixel": 3}
NEAREST = {"round_prefer_floor": 0, "round_prefer_ceil": 1, "floor": 2, "ceil": 3}

# Argument kinds: p = pointer (array, struct or None), i = int32, f = float.
_SIGNATURES: dict[str, tuple[str, str]] = {
    "dnn64_srdhm": ("ii", "i"), "dnn64_rdbp": ("ii", "i"), "dnn64_mbqm": ("iii", "i"),
    "dnn64_expf": ("f", "f"), "dnn64_tanhf": ("f", "f"), "dnn64_sigmoidf": ("f", "f"),
    "dnn64_expm1f": ("f", "f"), "dnn64_logf": ("f", "f"), "dnn64_sqrtf": ("f", "f"),
    "dnn64_erff": ("f", "f"), "dnn64_powf": ("ff", "f"),
    "dnn64_activation_f32": ("pppi", ""), "dnn64_lut_s8": ("pppi", ""),
    "dnn64_conv_f32": ("ppppiipp", ""), "dnn64_conv_s8": ("ppippppiipp", ""),
    "dnn64_conv_transpose_f32": ("ppppiipp", ""),
    "dnn64_conv_transpose_s8": ("ppippppiipp", ""),
    "dnn64_gemm_f32": ("iiippipiipp", ""), "dnn64_gemm_s8": ("iiipipipppiipp", ""),
    "dnn64_matmul_f32": ("iiiipipip", ""), "dnn64_matmul_s8": ("iiiipiipiiiipp", ""),
    "dnn64_maxpool_f32": ("ppp", ""), "dnn64_maxpool_s8": ("ppp", ""),
    "dnn64_avgpool_f32": ("pipp", ""), "dnn64_avgpool_s8": ("piiiipp", ""),
    "dnn64_global_avgpool_f32": ("iipp", ""), "dnn64_global_avgpool_s8": ("iiiipp", ""),
    "dnn64_binary_f32": ("ipppp", ""), "dnn64_add_s8": ("ppppp", ""),
    "dnn64_sub_s8": ("ppppp", ""), "dnn64_mul_s8": ("ppppp", ""), "dnn64_div_s8": ("ppppp", ""),
    "dnn64_max_s8": ("ppppp", ""), "dnn64_min_s8": ("ppppp", ""),
    "dnn64_concat_copy": ("iiiiipp", ""), "dnn64_pad": ("iipppippp", ""),
    "dnn64_transpose": ("iipppp", ""),
    "dnn64_resize_nearest": ("iiiiiiffiipp", ""), "dnn64_resize_linear_f32": ("iiiiiffipp", ""),
    "dnn64_resize_linear_s8": ("iiiiiffipp", ""),
    "dnn64_softmax_f32": ("iiipp", ""), "dnn64_log_softmax_f32": ("iiipp", ""),
    "dnn64_softmax_s8": ("iiippiiip", ""),
    "dnn64_reduce_mean_f32": ("ipipp", ""), "dnn64_reduce_mean_s8": ("ipiiiiipp", ""),
    "dnn64_quantize_f32_s8": ("pifip", ""), "dnn64_dequantize_s8_f32": ("pifip", ""),
    "dnn64_requantize_s8": ("piiiiip", ""),
    "dnn64_conv_region_f32": ("pppppiippp", ""), "dnn64_conv_region_s8": ("pppippppiippp", ""),
    "dnn64_maxpool_region_f32": ("ppppp", ""), "dnn64_maxpool_region_s8": ("ppppp", ""),
    "dnn64_avgpool_region_f32": ("pipppp", ""), "dnn64_avgpool_region_s8": ("piiiipppp", ""),
    "dnn64_region_keep": ("piiiiii", ""), "dnn64_next_firing": ("pp", "i"),
    "dnn64_rows_region": ("iiiii", "r"),
    # structural operators (issue 22)
    "dnn64_lrn_f32": ("iiiifffpp", ""),
    "dnn64_reduce_sum_f32": ("ipipp", ""), "dnn64_reduce_max_f32": ("ipipp", ""),
    "dnn64_reduce_max_s8": ("ipipp", ""), "dnn64_layer_norm_f32": ("iifpppp", ""),
    "dnn64_strided_copy": ("iipppp", ""), "dnn64_select": ("ippppp", ""),
    "dnn64_gather": ("iiiippip", ""),
}
# Argument and return kinds; "r" is a dnn64_region returned by value.
_CTYPE = {"p": ctypes.c_void_p, "i": ctypes.c_int32, "f": ctypes.c_float, "r": Region}


def _arg(kind: str, value: object) -> object:
    if kind != "p" or value is None:
        return value
    if isinstance(value, np.ndarray):
        if not value.flags.c_contiguous:
            raise ValueError("kernel arrays must be C-contiguous")
        return ctypes.c_void_p(value.ctypes.data)
    if isinstance(value, ctypes.Structure):
        return ctypes.cast(ctypes.pointer(value), ctypes.c_void_p)
    raise TypeError(f"cannot pass {type(value).__name__} as a pointer")


class Kernels:
    """The kernel library: ``k.dnn64_conv_f32(geom, x, w, b, 0, c_out, None, y)``."""

    def __init__(self, path: Path):
        self.path = path
        self._lib = ctypes.CDLL(str(path))
        for name, (args, ret) in _SIGNATURES.items():
            fn = getattr(self._lib, name)
            fn.argtypes = [_CTYPE[a] for a in args]
            fn.restype = _CTYPE[ret] if ret else None

    def __getattr__(self, name: str):
        if name not in _SIGNATURES:
            raise AttributeError(name)
        args = _SIGNATURES[name][0]
        fn = getattr(self._lib, name)

        def call(*values: object) -> object:
            if len(values) != len(args):
                raise TypeError(f"{name} takes {len(args)} arguments, got {len(values)}")
            return fn(*(_arg(a, v) for a, v in zip(args, values, strict=True)))

        return call


def i32(values: Sequence[int]) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.int32)


def act_f32(kind: str, alpha: float = 0.0, beta: float = 0.0) -> ActF32:
    return ActF32(ACT[kind], alpha, beta)


def q8_out(zero_point: int, act_min: int = -128, act_max: int = 127,
           lut: np.ndarray | None = None) -> Q8Out:
    return Q8Out(zero_point, act_min, act_max, None if lut is None else lut.ctypes.data)


def bcast(out_shape: Sequence[int], a_shape: Sequence[int], b_shape: Sequence[int]) -> Bcast:
    """numpy broadcasting of a and b to out_shape as element strides (0 where broadcast)."""
    rank = len(out_shape)
    bc = Bcast()
    bc.rank = rank
    for shape, field in ((a_shape, "a_strides"), (b_shape, "b_strides")):
        full = [1] * (rank - len(shape)) + list(shape)
        stride = 1
        strides = [0] * rank
        for d in range(rank - 1, -1, -1):
            strides[d] = 0 if full[d] == 1 and out_shape[d] != 1 else stride
            stride *= full[d]
        getattr(bc, field)[:rank] = strides
    bc.dims[:rank] = list(out_shape)
    return bc
