"""Where int8 nodes run: the RSP fit rules (the shapes, reductions and output stages each
RSP kernel takes) and the `kernels:` policy (cpu, rsp, auto) over them; and which
QuantizeLinear runs inside its stem Conv's RSP call (quantize_stem_pairs, which the plan
stage asks before it plans).

Every limit here has a C twin in kernels/dnn64_rsp*.h and kernels/dnn64_rsp_*.c (named at
each rule), which decides what the kernel can do; tests/codegen/test_routing_parity.py
compares them. A node routed to the RSP whose tile the kernel refuses at run time still
computes the same result on the CPU, only slower.
"""

from __future__ import annotations

import numpy as np

from dnn64build.codegen.lowering import Ctx
from dnn64build.ir.graph import Graph, Node

# dnn64_rsp.h: the RSP conv sums K = c_in/group * k_h * k_w products exactly up to
# DNN64_RSP_K_MAX; a longer reduction runs on the CPU.
RSP_K_MAX = 8192
# `kernels: auto` keeps a Conv with fewer output channels per group on the CPU: the CPU
# packs every input byte of a job, which the RSP reuses once per output channel, so
# depthwise layers gain nothing (measured in cen64: tools/bench/bench_rsp.py).
AUTO_RSP_ROWS_MIN = 8


def conv_on_rsp(ctx: Ctx, reduction: int, per_group: int) -> bool:
    """Whether this int8 Conv calls dnn64_rsp_conv_s8 (see KERNEL_CHOICES): ``reduction``
    is c_in/group * k_h * k_w, ``per_group`` the output channels of a group."""
    if ctx.kernels == "cpu" or ctx.node.op != "Conv" or reduction > RSP_K_MAX:
        return False
    return ctx.kernels == "rsp" or per_group >= AUTO_RSP_ROWS_MIN


# dnn64_rsp_dwconv_fits (dnn64_rsp_dwconv.c): the depthwise Convs dwconv_s8.rsp takes.
# A padded input row fills one 128-byte slot of DMEM; with that, one band of output rows
# always fits DMEM.
RSP_DW_KERNELS = (3, 5)
RSP_DW_STRIDES = (1, 2)
RSP_DW_ROW_BYTES = 128


def dwconv_on_rsp(ctx: Ctx, c_out: int, kernel: list[int]) -> bool:
    """Whether this int8 Conv calls dnn64_rsp_dwconv_s8: a depthwise Conv (one input and
    one output channel a group) of a shape its microcode takes, unless `kernels: cpu`.
    The kernel still runs dnn64_conv_s8 for channels whose output stage the RSP cannot
    take (docs/rsp.md). With `auto` too: measured faster than the CPU on every depthwise
    layer of MobileNetV3-Small and MnasNet-0.5 (docs/benchmarks.md)."""
    node = ctx.node
    if ctx.kernels == "cpu" or node.op != "Conv":
        return False
    a = node.attrs
    _, c_in, _, w = ctx.shape(node.inputs[0])
    _, _, _, ow = ctx.shape(node.outputs[0])
    k, stride = kernel[0], a["strides"][0]
    top, left = a["pads"][0], a["pads"][1]
    right = max((ow - 1) * stride + k - w - left, 0)
    return (a["group"] == c_in == c_out and kernel[1] == k and k in RSP_DW_KERNELS
            and a["strides"][1] == stride and stride in RSP_DW_STRIDES
            and list(a["dilations"]) == [1, 1] and 0 <= top < k and 0 <= left < k
            and left + w + right <= RSP_DW_ROW_BYTES)


# dnn64_rsp_pwconv_fits (dnn64_rsp_pwconv.c): pwconv_s8.rsp moves the weight rows of a
# chunk by one strided SP DMA, whose skip field (K less the chunk's taps, at least 8) has
# 12 bits; up to RSP_PW_SMALL_K taps the CPU passes the weights with the P rows instead.
RSP_PW_SKIP_MAX = 4095
RSP_PW_SMALL_K = 8


def pwconv_on_rsp(ctx: Ctx, reduction: int) -> bool:
    """Whether an int8 Conv that runs on the RSP (conv_on_rsp) calls dnn64_rsp_pwconv_s8
    (the RSP fetching its own weight rows, input rows and output spans) rather than
    dnn64_rsp_conv_s8: a 1x1 Conv, stride 1, no padding, one group; c_in up to 8 or a
    multiple of 8, any other c_in through dnn64_rsp_pwconv_padded_s8 (pwconv_row_taps).
    The kernel still runs dnn64_rsp_conv_s8 when (c_in > 8) the weight rows are not 8-byte
    aligned or a channel's output stage cannot run on the RSP. Measured faster on every
    1x1 layer shape of MobileNetV3-Small, and on ShuffleNetV2's 58- and 116-channel ones
    (2.2 cycles a MAC through dnn64_rsp_conv_s8 in cen64; docs/benchmarks.md)."""
    a = ctx.node.attrs
    _, _, h, w = ctx.shape(ctx.node.inputs[0])
    _, _, oh, ow = ctx.shape(ctx.node.outputs[0])
    return (a["group"] == 1 and pwconv_row_taps(reduction) - 8 <= RSP_PW_SKIP_MAX
            and list(a["strides"]) == [1, 1] and list(a["pads"]) == [0, 0, 0, 0]
            and (oh, ow) == (h, w) and list(np.shape(ctx.const(ctx.node.inputs[1]))[-2:]) == [1, 1])


def pwconv_row_taps(reduction: int) -> int:
    """A channel's weight row for dnn64_rsp_pwconv_s8: ``reduction`` taps up to 8 or when a
    multiple of 8, else rounded up to 8 with zero taps (dnn64_rsp_pwconv_padded_s8)."""
    return reduction if reduction <= RSP_PW_SMALL_K else -(-reduction // 8) * 8


# dnn64_rsp_gemv_dma_fits (dnn64_rsp_gemv_dma.c): gemv_dma_s8.rsp keeps the row's k
# values in 2.5 KiB of DMEM.
RSP_GEMV_DMA_K_MAX = 1280


def gemv_dma_on_rsp(ctx: Ctx, k: int) -> bool:
    """Whether an int8 Gemm of one row (or a 1x1 Conv on one position) calls
    dnn64_rsp_gemv_dma_s8 (the RSP streaming the weights itself, the output channels in
    its lanes): k a multiple of 8 up to 1280, unless `kernels: cpu`; with `auto` measured
    faster than dnn64_gemm_s8 on MobileNetV3-Small's classifier shapes and than
    pwconv_s8 on its squeeze-excite's (docs/benchmarks.md). The kernel computes on the
    CPU when the tile is not 8-byte aligned or there is no RSP."""
    return ctx.kernels != "cpu" and 0 < k <= RSP_GEMV_DMA_K_MAX and k % 8 == 0


def gemm_on_rsp(ctx: Ctx, k: int) -> bool:
    """Whether an int8 Gemm of reduction ``k`` runs on the RSP: only with `rsp`. One row
    goes through dnn64_rsp_gemv_s8, which packs the weight columns on the CPU every
    inference, several rows fill one lane of eight as images of the 1x1 Conv: neither
    measured faster than the CPU's dnn64_gemm_s8 (docs/benchmarks.md), so `auto` keeps
    the CPU."""
    return ctx.kernels == "rsp" and k <= RSP_K_MAX


def conv_kernel(ctx: Ctx) -> str:
    """The C function an int8 Conv (or ConvTranspose) calls: dnn64_conv_s8 on the CPU, or
    an RSP kernel (dwconv_on_rsp, conv_on_rsp, pwconv_on_rsp)."""
    node = ctx.node
    if node.op == "ConvTranspose":
        return "dnn64_conv_transpose_s8"
    shape = np.shape(ctx.const(node.inputs[1]))
    c_out, reduction = shape[0], int(np.prod(shape[1:]))
    if dwconv_on_rsp(ctx, c_out, list(shape[-2:])):
        return "dnn64_rsp_dwconv_s8"
    if not conv_on_rsp(ctx, reduction, c_out // node.attrs["group"]):
        return "dnn64_conv_s8"
    if not pwconv_on_rsp(ctx, reduction):
        return "dnn64_rsp_conv_s8"
    if pwconv_row_taps(reduction) != reduction:
        return "dnn64_rsp_pwconv_padded_s8"
    return "dnn64_rsp_pwconv_s8"


# dnn64_rsp_stem_fits (dnn64_rsp_stem.c): input rows of at most 232 bytes, pads of at most 2.
RSP_STEM_ROW_BYTES = 232
RSP_STEM_PAD_MAX = 2


def stem_on_rsp(ctx: Ctx) -> bool:
    """Whether dnn64_rsp_conv_s8 runs this Conv through stem_s8.rsp: its shape as
    dnn64_rsp_stem_fits tests it (3 input channels, one group, 3x3, stride 2, no
    dilation, pads of at most 2, W_out a multiple of 8, rows of at most 232 bytes). The
    kernel still checks its output stages and biases at run time."""
    node = ctx.node
    a = node.attrs
    if node.op != "Conv" or conv_kernel(ctx) != "dnn64_rsp_conv_s8":
        return False
    _, c_in, h, w = ctx.shape(node.inputs[0])
    _, _, oh, ow = ctx.shape(node.outputs[0])
    top, left = a["pads"][0], a["pads"][1]
    ends = ((oh - 1) * 2 + 3 - h - top, (ow - 1) * 2 + 3 - w - left)
    return (c_in == 3 and a["group"] == 1 and list(np.shape(ctx.const(node.inputs[1]))[-2:])
            == [3, 3] and list(a["strides"]) == [2, 2] and list(a["dilations"]) == [1, 1]
            and 0 <= top <= RSP_STEM_PAD_MAX and 0 <= left <= RSP_STEM_PAD_MAX
            and max(ends) <= RSP_STEM_PAD_MAX and ow % 8 == 0 and w <= RSP_STEM_ROW_BYTES)

def requant_on_rsp(multiplier: int, shift: int) -> bool:
    """Whether the RSP's int8 output stage (matmul_s8's, dwconv_s8's) takes a channel:
    2 <= -shift <= 15 and a multiplier above 2^30 (dnn64__rsp_requant_on_rsp)."""
    return 2 <= -shift <= 15 and multiplier > 1 << 30


def channel_mul_on_rsp(ctx: Ctx) -> int | None:
    """For an int8 Mul of planes [1, C, H, W] by one value a channel ([1, C, 1, 1], a
    squeeze-excite scale), both computed, whose output stage the RSP takes
    (2 <= -shift <= 15, a multiplier above 2^30) and rows fit dwconv_s8.rsp's slots:
    the operand (0: a, 1: b) holding the values, for dnn64_rsp_mul_channels_s8; else
    None. Not with `kernels: cpu`; with `auto` measured faster than dnn64_mul_s8
    (docs/benchmarks.md)."""
    node = ctx.node
    if ctx.kernels == "cpu" or node.op != "Mul":
        return None
    p = node.attrs["int8"]
    out = ctx.shape(node.outputs[0])
    if (len(out) != 4 or out[0] != 1 or out[3] > RSP_DW_ROW_BYTES
            or not requant_on_rsp(p["multiplier"], p["shift"])
            or any(ctx.is_const(n) for n in node.inputs[:2])):
        return None
    values = [1, out[1], 1, 1]
    shapes = [[1] * (4 - len(ctx.shape(n))) + list(ctx.shape(n)) for n in node.inputs[:2]]
    for index in (1, 0):
        if shapes[index] == values and shapes[1 - index] == list(out):
            return index
    return None


# dnn64_rsp_global_avgpool_s8 (dnn64_rsp_sums.c): sums_s8.rsp sums planes of up to 65535
# bytes.
RSP_SUMS_PLANE_MAX = 65535


def sums_on_rsp(ctx: Ctx, n: int) -> bool:
    """Whether planes of ``n`` bytes are summed on the RSP (GlobalAveragePool, ReduceMean
    over trailing axes): unless `kernels: cpu`, measured faster on MobileNetV3-Small's
    pools (docs/benchmarks.md)."""
    return ctx.kernels != "cpu" and 1 <= n <= RSP_SUMS_PLANE_MAX


def quantize_stem_pairs(graph: Graph, kernels: str) -> list[tuple[str, str]]:
    """(QuantizeLinear, Conv) node names that codegen can run as one
    dnn64_rsp_conv_quantized_s8 call (the CPU quantizing the float input rows while the RSP
    computes the stem): a QuantizeLinear of a float tensor whose int8 output only the
    Conv reads, a Conv that runs through stem_s8.rsp (stem_on_rsp). The planner keeps the
    float input alive through the Conv for each pair it records (plan.json
    ``quantize_stem``), which codegen then emits; the one place the choice is made."""
    readers: dict[str, list[Node]] = {}
    for node in graph.nodes:
        for name in set(node.inputs):
            readers.setdefault(name, []).append(node)
    pairs = []
    for node in graph.nodes:
        if node.op != "QuantizeLinear" or "int8" not in node.attrs:
            continue
        x, y = node.inputs[0], node.outputs[0]
        users = readers.get(y, [])
        if (len(users) != 1 or y in graph.outputs or graph.is_constant(x)
                or graph.tensors[x].dtype != "float32" or users[0].inputs[0] != y
                or "int8" not in users[0].attrs):
            continue
        # No arena yet: the kernel choice reads shapes, attributes and weights only.
        if stem_on_rsp(Ctx(graph, None, users[0], 0, kernels)):  # type: ignore[arg-type]
            pairs.append((node.name, users[0].name))
    return pairs
