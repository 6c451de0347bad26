"""dnn64_rsp_global_avgpool_s8 and dnn64_rsp_reduce_mean_s8 (sums_s8.rsp: the RSP fetches
the planes by SP DMA and sums them) in mupen64plus with the low-level RSP plugin, bit-exact
against numpy and against dnn64_global_avgpool_s8 / dnn64_reduce_mean_s8 on the same ROM;
planes it does not take run on the CPU.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

from dnn64build.quant import intmath as im
from dnn64build.toolchains.base import KERNELS_DIR
from tests.emulator.cases_rom import check_probe_cases

PROBE = KERNELS_DIR.parent / "tests" / "emulator" / "programs" / "rsp_gap_probe.c"
# (planes, hw, offset of x past an 8-byte boundary, fill: None (random) or one value,
#  ReduceMean's (x zero point, real multiplier, out zero point) or None: GlobalAveragePool)
CASES = [
    (16, 3136, 0, None, None),     # 56x56 planes: one piece each, aligned
    (576, 49, 3, None, None),      # 7x7 planes at every alignment, 64 sums a write
    (3, 5000, 5, None, None),      # planes of two pieces
    (7, 1, 1, None, None),         # one byte a plane: both edges in one group
    (9, 13, 7, None, None),        # a plane within two groups
    (300, 4, 2, None, None),       # three starts (128 + 128 + 44 planes)
    (2, 196, 6, -128, None),       # the largest negative sums, halves rounded away from 0
    (1, 65535, 1, -128, None),     # the largest plane: 256 S near -2^31
    (1, 65535, 4, 127, None),
    (1, 65536, 0, None, None),     # CPU: a plane above 65535 bytes
    (1280, 49, 0, None, (-5, 0.02, 3)),    # ReduceMean over 7x7 (MnasNet's), 10 starts
    (3, 70000, 1, None, (7, 0.0003, -2)),  # ReduceMean, CPU: planes above 65535 bytes
]


def case(spec, rng) -> tuple[bytes, np.ndarray]:
    planes, hw, offset, fill, mean = spec
    x = (rng.integers(-128, 128, (planes, hw), dtype=np.int8) if fill is None
         else np.full((planes, hw), fill, np.int8))
    act = (-100, 110) if fill is None else (-128, 127)
    total = x.astype(np.int64).sum(axis=1)
    if mean is None:
        avg = np.where(total > 0, (total + hw // 2) // hw, -((-total + hw // 2) // hw))
        want = np.clip(avg, *act).astype(np.int8)
        params = [0, 0, 0, 0, 0]
    else:
        x_zp, real, out_zp = mean
        mult, shift = im.quantize_multiplier(real)
        v = np.asarray(im.multiply_by_quantized_multiplier(total - hw * x_zp, mult, shift),
                       np.int64)
        want = (np.clip(v, -128 - out_zp, 127 - out_zp) + out_zp).astype(np.int8)
        params = [1, x_zp, mult, shift, out_zp]
    words = [planes, hw, offset, *act, *params]
    data = x.tobytes()
    blob = struct.pack(f">{len(words)}i", *words) + data + b"\0" * (-len(data) % 4)
    return blob, want


@pytest.mark.emulator
def test_rsp_gap_bit_exact_in_mupen64plus(bare, boot_stub, mupen64plus, tmp_path):
    rng = np.random.default_rng(16)
    check_probe_cases(bare, boot_stub, PROBE, tmp_path / "gap.z64", CASES,
                      [case(spec, rng) for spec in CASES], "gap", "the CPU kernel")
