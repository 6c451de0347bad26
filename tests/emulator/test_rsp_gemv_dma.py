"""dnn64_rsp_gemv_dma_s8 (gemv_dma_s8.rsp: the RSP streams the weights, blocks of 8
output channels tap after tap, by SP DMA itself) in mupen64plus with the low-level RSP
plugin, bit-exact against the numpy integer reference and against dnn64_gemm_s8 (on the
weight rows) on the same ROM; shapes it does not take run on the CPU, with the same
results.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

from dnn64build.quant.intmath import quantize_multiplier
from dnn64build.toolchains.base import KERNELS_DIR
from tests.emulator.cases_rom import check_probe_cases
from tests.kernels.kernels_refs import output_stage, requant_params

PROBE = KERNELS_DIR.parent / "tests" / "emulator" / "programs" / "rsp_gemv_probe.c"
# (k, n, tile (begin, count) or None), on the RSP unless said
CASES = [
    (576, 40, None),        # nine pieces of 64 taps a block, 5 blocks
    (1024, 24, (3, 20)),    # 16 pieces of 64, a tile of 20 channels (3 blocks, one short)
    (64, 300, None),        # 300 channels: 38 blocks, five starts (4 x 8 + 6)
    (8, 9, None),           # 8 taps: no pass of 16, one of 8; a block of 1 channel
    (24, 17, None),         # one piece of 24: a pass of 16 and one of 8
    (1280, 21, None),       # 20 pieces of 64
    (1288, 5, None),        # CPU: k > 1280
    (12, 5, None),          # CPU: k not a multiple of 8
    (144, 264, None),       # three pieces of 48 taps; 33 blocks: 4 x 8 + 1 a start
    (200, 6, None),         # five pieces of 40 taps: two passes of 16 and one of 8
]
CPU_CASES = {6, 7}


def case(spec, rng) -> tuple[bytes, np.ndarray, bool]:
    k, n, tile = spec
    begin, count = tile or (0, n)
    a = rng.integers(-128, 128, k, dtype=np.int8)
    w = rng.integers(-128, 128, (n, k), dtype=np.int8)
    w[0, :] = -128  # the largest products
    bias = rng.integers(-20000, 20000, n, dtype=np.int32)
    mult, shift = requant_params(rng, n, 2e-6, 2e-4)
    mult[0], shift[0] = quantize_multiplier(3e-6)
    a_zp, out_zp, act = int(rng.integers(-128, 128)), int(rng.integers(-20, 20)), (-100, 110)
    a_zp = 127 if k == 1024 else a_zp  # a - a_zp down to -255
    acc = bias.astype(np.int64) + (a.astype(np.int64) - a_zp) @ w.T.astype(np.int64)
    want = np.zeros(n, np.int8)
    sl = slice(begin, begin + count)
    want[sl] = output_stage(acc[None, sl], mult[sl], shift[sl], out_zp, *act, None)[0]
    words = [k, n, begin, count, a_zp, out_zp, *act]
    pad4 = lambda b: b + b"\0" * (-len(b) % 4)  # noqa: E731
    blocks = np.zeros((-(-count // 8) * 8, k), np.int8)  # written here, not by codegen
    blocks[:count] = w[sl]
    blocks = blocks.reshape(-1, 8, k).transpose(0, 2, 1)
    blob = (struct.pack(f">{len(words)}i", *words) + pad4(a.tobytes())
            + pad4(blocks.tobytes()) + pad4(w[sl].tobytes())
            + bias[sl].astype(">i4").tobytes() + mult[sl].astype(">i4").tobytes()
            + shift[sl].astype(">i4").tobytes())
    return blob, want


@pytest.mark.emulator
def test_rsp_gemv_dma_bit_exact_in_mupen64plus(bare, boot_stub, mupen64plus, tmp_path):
    rng = np.random.default_rng(15)
    lines = check_probe_cases(bare, boot_stub, PROBE, tmp_path / "gemv.z64", CASES,
                              [case(spec, rng) for spec in CASES], "gemv", "dnn64_gemm_s8")
    for i in range(len(CASES)):
        fits = "0" if i in CPU_CASES else "1"
        assert f"fit{i:02d} {fits}" in lines, f"case {i}: on the RSP: {fits}"
