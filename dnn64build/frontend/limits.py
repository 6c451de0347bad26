"""What each supported operator does not accept (a UserError names the node when a
model asks for it): the "limits" column of docs/operators.md (tools/op_coverage.py).
The checks themselves are in frontend/normalize.py (Unsupported) and codegen
(``unsupported``); every operator also runs only with its first output in use."""

from __future__ import annotations

_AS_2D = ("1-D as 2-D with H = 1; 3-D as 2-D ones depth by depth, with explicit pads and no "
          "ceil_mode")
_FP32_IN_INT8 = "int8 graphs run it in fp32 (Dequantize/Quantize around it)"

LIMITS: dict[str, str] = {
    "AveragePool": f"1-D, 2-D and 3-D ({_AS_2D})",
    "BatchNormalization": "inference only; constant statistics",
    "Cast": "float32 to float32 at run time (other casts only on constants, folded)",
    "Conv": f"1-D, 2-D and 3-D ({_AS_2D}); constant weight and bias",
    "ConvTranspose": "1-D and 2-D only (1-D as 2-D with H = 1); constant weight and bias",
    "Dropout": "inference only (training_mode a constant false)",
    "Expand": "at most 6 dims once merged",
    "Gather": "indices constant or an int32 tensor (an int64 graph input that only indexes "
              "runs as int32); an index outside the axis reads the nearest row",
    "Gemm": "constant B; transA only with a dim of A equal to 1; a constant C same for "
            "every row (a B or C computed at run time: rewritten as a MatMul)",
    "InstanceNormalization": "imported as LayerNormalization over the spatial dims and a "
                             "per-channel BatchNormalization; constant scale and bias; "
                             f"{_FP32_IN_INT8}",
    "LayerNormalization": f"constant scale and bias; {_FP32_IN_INT8}",
    "LogSoftmax": "no int8 kernel: int8 graphs run it in fp32",
    "LRN": _FP32_IN_INT8,
    "MatMul": "broadcasting full or none",
    "Max": "two inputs",
    "MaxPool": f"1-D, 2-D and 3-D ({_AS_2D}); storage_order 0; the Indices output "
               "unused",
    "Min": "two inputs",
    "Pad": "modes constant, reflect, edge",
    "Pow": "int8: a constant scalar exponent (a lookup table), else fp32",
    "PRelu": "int8: one slope for every value (a lookup table); a per-channel slope runs fp32",
    "Resize": "the last two dims; nearest or linear; no antialias; "
              "keep_aspect_ratio_policy stretch; not half_pixel_symmetric",
    "Slice": "step 1",
    "Split": "imported as one Slice per output",
    "Tile": "at most 6 dims once merged",
    "Upsample": "as Resize",
    "Where": f"a constant condition; {_FP32_IN_INT8}",
}
