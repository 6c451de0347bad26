"""RSP kernels in mupen64plus (low-level RSP plugin), bit-exact against the numpy
integer reference (tests/kernels/kernels_refs.py) and the CPU kernel on the same ROM.

One ROM runs every case: odd channel counts, K not a multiple of 8 or of the
128-tap job, stride 2, pads, dilation, groups, depthwise, a tile of channels, and 1x1
layers whose input rows SP DMA gathers without packing.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from dnn64build.emulator import run_rom, run_rom_cen64
from dnn64build.errors import UserError
from dnn64build.quant.intmath import quantize_multiplier
from dnn64build.rom import build_asset_image, pack_rom
from tests.compile_program import compile_and_link
from tests.emulator.cases_rom import run_cases_rom
from tests.emulator.hex_dump import parse_hex_dump
from tests.kernels.kernels_refs import conv_acc_int, conv_out, output_stage, requant_params

PROBE = Path(__file__).parent / "programs" / "rsp_conv_probe.c"

# (n, c_in, h, w, c_out, k, stride, pads (top, left, bottom, right), dil, group, tile)
CASES = [
    (1, 16, 4, 4, 8, 1, 1, (0, 0, 0, 0), 1, 1, None),     # 1x1, K = 16
    (1, 13, 5, 3, 7, 1, 1, (0, 0, 0, 0), 1, 1, None),     # odd everything, K = 13
    (1, 200, 3, 3, 5, 1, 1, (0, 0, 0, 0), 1, 1, None),    # K = 200: two jobs along k
    (1, 3, 9, 7, 6, 3, 2, (1, 1, 1, 1), 1, 1, None),      # 3x3 stride 2, pads, K = 27
    (2, 5, 6, 6, 4, 3, 1, (2, 0, 1, 2), 1, 1, None),      # batch 2, uneven pads
    (1, 8, 7, 7, 8, 3, 1, (1, 1, 1, 1), 1, 8, None),      # depthwise, K = 9
    (1, 6, 8, 8, 9, 3, 2, (1, 1, 0, 0), 2, 3, None),      # dilated, 3 groups
    (1, 12, 6, 6, 40, 1, 2, (0, 0, 0, 0), 1, 1, (9, 22)), # a tile of channels, stride 2
    (1, 33, 11, 11, 3, 5, 1, (2, 2, 2, 2), 1, 1, None),   # K = 825, 121 positions
    # 1x1 on planes of a multiple of 8 bytes: SP DMA moves the input rows as they are
    (1, 150, 8, 8, 37, 1, 1, (0, 0, 0, 0), 1, 1, None),   # K = 150: two jobs along k
    (2, 24, 4, 6, 10, 1, 1, (0, 0, 0, 0), 1, 1, None),    # batch 2, 24 positions
    (1, 20, 16, 16, 45, 1, 1, (0, 0, 0, 0), 1, 1, (5, 33)),  # 256 positions, a tile
    # depthwise: a job takes rows of several groups, each with its own inputs
    (1, 20, 9, 9, 20, 5, 2, (2, 2, 2, 2), 1, 20, (3, 14)),  # 5x5 stride 2, a tile
    (1, 4, 6, 6, 8, 3, 1, (1, 1, 1, 1), 1, 4, None),      # two channels a group
    # one position: also a Gemm of one row through dnn64_rsp_gemv_s8
    (1, 200, 1, 1, 37, 1, 1, (0, 0, 0, 0), 1, 1, (3, 30)),  # K = 200: two jobs, a tile
    (1, 13, 1, 1, 9, 1, 1, (0, 0, 0, 0), 1, 1, None),     # K = 13
    # inputs resident in DMEM (tiles of 16 channels or more; the weights of odd cases are
    # misaligned, so the kernel copies them padded; those of under 16 run packed jobs)
    (1, 16, 7, 7, 24, 3, 1, (1, 1, 1, 1), 1, 1, None),    # K = 144: two jobs along k
    (1, 8, 6, 5, 12, 3, 1, (1, 0, 1, 2), 1, 1, None),     # misaligned weights, K = 72
    (1, 32, 5, 9, 20, 3, 2, (1, 1, 1, 1), 1, 1, (3, 17)), # stride 2, K = 288, a tile
    (2, 8, 4, 4, 8, 3, 1, (0, 1, 1, 0), 1, 1, None),      # batch 2, uneven pads
    (1, 24, 1, 1, 16, 3, 1, (1, 1, 1, 1), 1, 1, None),    # a 1-pixel plane, K = 216
    (1, 16, 6, 6, 32, 3, 1, (1, 1, 1, 1), 1, 2, None),    # 2 groups, CPU-packed weights
    (1, 16, 6, 6, 32, 3, 1, (1, 1, 1, 1), 1, 2, (5, 20)), # 2 groups, a tile across them
    (1, 13, 5, 5, 16, 3, 2, (1, 1, 1, 1), 1, 1, None),    # K = 117: weights padded to 8
    (1, 8, 3, 3, 400, 3, 1, (1, 1, 1, 1), 1, 1, None),    # 400 channels: two batches
    (2, 24, 5, 5, 40, 3, 1, (1, 1, 1, 1), 1, 1, (0, 40)), # batch 2, 25 positions
    (1, 150, 3, 3, 120, 1, 1, (0, 0, 0, 0), 1, 1, None),  # too big to pad: packed jobs
    # planes of 16 outputs or wider: block copies rather than gathers (these two)
    (1, 8, 6, 20, 16, 3, 1, (1, 1, 1, 1), 1, 1, None),    # resident, 120 positions
    (1, 5, 4, 18, 6, 3, 1, (0, 2, 1, 0), 1, 1, None),     # packed jobs, uneven pads
    # resident, several row groups on one B: each job packs a share of the next B (K =
    # 216: a short last step along k, whose shares end early)
    (1, 24, 6, 18, 56, 3, 1, (1, 1, 1, 1), 1, 1, None),
]


# cases whose output stage ends in a table (a fused activation, q->lut) and a narrower
# clamp: a k x k case and one of 1x1 input rows
TABLE_CASES = {3, 9}
# channel -> real multiplier: on the CPU (-shift 1, 16; M = 2^30) or the RSP (-shift 2, 15)
EDGE_MULTIPLIERS = {1: 0.3, 2: 0.2, 3: 2.1e-5, 4: 1e-5, 5: 2.0**-8}


def case_data(case, rng, with_table: bool):
    n, c_in, h, w, c_out, k, stride, pads, dil, group, tile = case
    x = rng.integers(-128, 128, (n, c_in, h, w), dtype=np.int8)
    wt = rng.integers(-128, 128, (c_out, c_in // group, k, k), dtype=np.int8)
    bias = rng.integers(-20000, 20000, c_out, dtype=np.int32)
    mult, shift = requant_params(rng, c_out)
    if c_out >= 8:  # the edges of the RSP's output stage (2 <= -shift <= 15, M > 2^30)
        for channel, real in EDGE_MULTIPLIERS.items():
            mult[channel], shift[channel] = quantize_multiplier(real)
    x_zp, out_zp = int(rng.integers(-128, 128)), int(rng.integers(-20, 20))
    # with a table: a narrower clamp too, as a fused ReLU6-like activation gives
    lut = rng.integers(-128, 128, 256, dtype=np.int8) if with_table else None
    act = (-60, 100) if with_table else (-128, 127)
    return x, wt, bias, mult, shift, x_zp, out_zp, act, lut


def pack_case(case, data) -> bytes:
    n, c_in, h, w, c_out, k, stride, pads, dil, group, tile = case
    x, wt, bias, mult, shift, x_zp, out_zp, act, lut = data
    begin, count = tile or (0, c_out)
    ho = conv_out(h, k, stride, pads[0], pads[2], dil)
    wo = conv_out(w, k, stride, pads[1], pads[3], dil)
    sl = slice(begin, begin + count)
    fields = [n, c_in, h, w, c_out, ho, wo, k, k, stride, stride, dil, dil, pads[0], pads[1],
              group, x_zp, out_zp, *act, int(lut is not None), begin, count, x.size,
              wt[sl].size]
    pad4 = lambda b: b + b"\0" * (-len(b) % 4)  # noqa: E731
    table = b"" if lut is None else lut.tobytes()
    return (struct.pack(f">{len(fields)}i", *fields) + pad4(x.tobytes())
            + pad4(wt[sl].tobytes()) + table + bias[sl].astype(">i4").tobytes()
            + mult[sl].astype(">i4").tobytes() + shift[sl].astype(">i4").tobytes())


def expected_y(case, data) -> np.ndarray:
    n, c_in, h, w, c_out, k, stride, pads, dil, group, tile = case
    x, wt, bias, mult, shift, x_zp, out_zp, act, lut = data
    acc = conv_acc_int(x, x_zp, wt, bias, (stride, stride), pads, (dil, dil), group)
    y = output_stage(acc, mult, shift, out_zp, *act, lut)
    if tile:  # the kernel writes only the tile; the probe zeroes y first
        keep = np.zeros_like(y)
        keep[:, tile[0] : tile[0] + tile[1]] = y[:, tile[0] : tile[0] + tile[1]]
        y = keep
    return y


def assert_conv_cases(lines: list[str], cases: list[tuple], datas: list[tuple]) -> None:
    """Each case's RSP output (``rsp<i>``) equals the integer reference, and the CPU
    kernel agreed with it on the N64 (``sam<i> 1``)."""
    for i, (case, data) in enumerate(zip(cases, datas, strict=True)):
        want = expected_y(case, data)
        got = parse_hex_dump(lines, f"rsp{i:02d}", "int8", want.size).reshape(want.shape)
        np.testing.assert_array_equal(got, want, err_msg=f"case {i} {case}")
        assert f"sam{i:02d} 1" in lines, f"case {i}: the CPU kernel disagrees on the N64"


@pytest.mark.emulator
def test_rsp_conv_bit_exact_in_mupen64plus(bare, boot_stub, mupen64plus, tmp_path):
    rng = np.random.default_rng(11)
    datas = [case_data(case, rng, i in TABLE_CASES) for i, case in enumerate(CASES)]
    blob = struct.pack(">i", len(CASES)) + b"".join(map(pack_case, CASES, datas))
    lines = run_cases_rom(bare, boot_stub, PROBE, blob, tmp_path / "probe.z64")
    assert_conv_cases(lines, CASES, datas)
    for i, case in enumerate(CASES):
        if case[2:4] == (1, 1) and case[0] == 1 and case[5] == 1 and case[9] == 1:
            assert f"gemv{i:02d} 1" in lines, f"case {i}: dnn64_rsp_gemv_s8 disagrees"


def fault_rom(bare, boot_stub, tmp_path, fault: int) -> Path:
    program = compile_and_link(
        bare, [Path(__file__).parent / "programs" / "rsp_fault_probe.c"], [],
        tmp_path / "fault.bin",
        defines={"FAULT": str(fault)},
    )
    rom = tmp_path / "fault.z64"
    rom.write_bytes(pack_rom(program.read_bytes(), build_asset_image([]).data, ipl3=boot_stub))
    return rom


@pytest.mark.emulator
def test_rsp_job_past_dmem_is_a_clear_error(bare, boot_stub, mupen64plus, tmp_path):
    with pytest.raises(UserError, match="DNN64-FAIL RSP: SP DMA past the end of DMEM"):
        run_rom(fault_rom(bare, boot_stub, tmp_path, 1), timeout=20)


@pytest.mark.emulator
def test_rsp_misaligned_dma_is_a_clear_error(bare, boot_stub, mupen64plus, tmp_path):
    with pytest.raises(UserError, match="DNN64-FAIL RSP: SP DMA address or length not a "
                                        "multiple of 8 bytes"):
        run_rom(fault_rom(bare, boot_stub, tmp_path, 3), timeout=20)


@pytest.mark.cen64
def test_rsp_that_never_halts_is_reported_by_the_cpu_in_cen64(bare, boot_stub, cen64, tmp_path):
    # cen64 runs the RSP beside the CPU, as the console does: the CPU's own time limit on
    # the wait (a quarter second of console time) reports the stuck kernel
    with pytest.raises(UserError, match="DNN64-FAIL RSP: the kernel did not halt within the "
                                        "time limit"):
        run_rom_cen64(fault_rom(bare, boot_stub, tmp_path, 2), timeout=120)


@pytest.mark.emulator
def test_rsp_that_never_halts_ends_within_the_time_limit(bare, boot_stub, mupen64plus, tmp_path):
    # On hardware (and cen64) the CPU's time limit reports it; mupen64plus runs the RSP
    # inside the status write, so there the runner's own time limit ends the run.
    with pytest.raises(UserError, match="RSP: the kernel did not halt|no DNN64-DONE line within"):
        run_rom(fault_rom(bare, boot_stub, tmp_path, 2), timeout=5)


@pytest.mark.emulator
def test_rsp_model_matches_host_and_the_integer_reference(bare, mupen64plus, tmp_path):
    """small_cnn int8 with `kernels: rsp` (both Convs, K = 9 and K = 72, and the Gemm on the
    RSP), through the CLI: the ROM's outputs equal the host build's bit for bit, and `run`
    checks each against the integer reference executor."""
    from tests.emulator.rom_workspace import assert_rom_equals_host, model_workspace
    from tools.zoo import build as zoo_model

    ws = model_workspace(tmp_path / "ws", "rsp", zoo_model("small_cnn"), onnx_name="cnn.onnx",
                         seed=5, input_shape=(1, 1, 16, 16), samples=3)
    ws.write("models/BUILD.yaml", """\
        targets:
          - rule: n64_model
            name: cnn
            src: cnn.onnx
            quantize: {mode: int8, calibration: calib.npz}
            kernels: rsp
            planner: {fusion: none}  # a Conv in a fused group runs its CPU region kernel
        """)
    assert_rom_equals_host(ws, "//models:cnn")
    meta = json.loads((ws.root / "dnn64-out/bin/models/cnn/codegen/meta.json").read_text())
    assert meta["kernels"] == "rsp" and len(meta["rsp_nodes"]) == 3
