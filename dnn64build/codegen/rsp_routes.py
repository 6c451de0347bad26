"""Which int8 operators may run on the RSP, and when: the summary of routing.py's
``*_on_rsp`` routing (and docs/rsp.md) that docs/operators.md shows. With ``kernels:
cpu`` none does; with ``rsp`` or ``auto`` (auto: where the RSP is faster) a node runs there
when its shapes fit the kernel's limits (RSP_K_MAX and the DMEM layouts in docs/rsp.md),
else on the CPU, whatever the platform."""

from __future__ import annotations

RSP_ROUTES: dict[str, str] = {
    "Conv": "dense k x k (matmul_s8), depthwise (dwconv_s8), 1x1 (pwconv_s8), the RGB 3x3 "
            "stride-2 stem (stem_s8); reduction K <= 8192",
    "Gemm": "one row (gemv_dma_s8 streams the weights), else matmul_s8; K <= 8192",
    "MatMul": "as Gemm, with a constant B",
    "Mul": "a plane by one value per channel (dwconv_s8)",
    "GlobalAveragePool": "the plane sums (sums_s8)",
    "ReduceMean": "over trailing axes: the plane sums (sums_s8)",
}
