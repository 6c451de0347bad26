"""What each supported operator does not accept (a UserError names the node when a
model asks for it): the "limits" column of docs/operators.md (tools/op_coverage.py).
The checks themselves are in frontend/normalize.py (Unsupported) and codegen
(``unsupported``); every operator also runs only with its first output in use."""

from __future__ import annotations

LIMITS: dict[str, str] = {
    "AveragePool": "2-D (NCHW) only",
    "BatchNormalization": "inference only; constant statistics",
    "Cast": "float32 to float32 at run time (other casts only on constants, folded)",
    "Conv": "2-D (NCHW) only; constant weight and bias",
    "ConvTranspose": "2-D (NCHW) only; constant weight and bias",
    "Dropout": "inference only (training_mode a constant false)",
    "Gather": "constant indices, a contiguous ascending run, into an activation",
    "Gemm": "constant B; transA only with a dim of A equal to 1; a constant C same for "
            "every row",
    "MatMul": "broadcasting full or none",
    "MaxPool": "2-D (NCHW) only; storage_order 0; the Indices output unused",
    "Pad": "modes constant, reflect, edge",
    "Resize": "the last two dims; nearest or linear; no antialias; "
              "keep_aspect_ratio_policy stretch; not half_pixel_symmetric",
    "Slice": "step 1",
    "Upsample": "as Resize",
}
