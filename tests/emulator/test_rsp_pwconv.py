"""dnn64_rsp_pwconv_s8 (pwconv_s8.rsp: the RSP fetches weight rows, input rows and output
spans by SP DMA itself) in mupen64plus with the low-level RSP plugin, bit-exact against
the numpy integer reference and against dnn64_conv_s8 on the same ROM; shapes it does
not take run dnn64_rsp_conv_s8, with the same results.
"""

from __future__ import annotations

import pytest

from tests.emulator.test_rsp_dwconv import run_own_dma_cases

# (n, c_in, h, w, c_out, k = 1, stride, pads, dil, group = 1, tile), on the RSP unless said
CASES = [
    (1, 16, 7, 7, 24, 1, 1, (0, 0, 0, 0), 1, 1, None),      # 7x7 planes: rows start anywhere
    (1, 96, 5, 5, 20, 1, 1, (0, 0, 0, 0), 1, 1, (3, 14)),   # K = 96: 3 chunks; 14 of 20
    (1, 40, 14, 14, 9, 1, 1, (0, 0, 0, 0), 1, 1, None),     # 196 positions, K = 32 + 8
    (2, 8, 8, 8, 70, 1, 1, (0, 0, 0, 0), 1, 1, (5, 65)),    # batch 2, two lists of channels
    (1, 24, 1, 1, 10, 1, 1, (0, 0, 0, 0), 1, 1, None),      # one position
    (1, 32, 3, 37, 16, 1, 1, (0, 0, 0, 0), 1, 1, None),     # 111 positions
    (1, 16, 6, 6, 12, 1, 1, (0, 0, 0, 0), 1, 1, None),      # a table, narrower clamp
    (1, 8, 65, 64, 3, 1, 1, (0, 0, 0, 0), 1, 1, None),      # 4160 positions: rows by tap
    (1, 12, 4, 4, 8, 1, 1, (0, 0, 0, 0), 1, 1, None),       # K = 12: dnn64_rsp_conv_s8
    (1, 16, 6, 6, 8, 1, 2, (0, 0, 0, 0), 1, 1, None),       # stride 2: dnn64_rsp_conv_s8
    (1, 16, 5, 5, 9, 1, 1, (0, 0, 0, 0), 1, 1, None),       # -shift 1 and 16: falls back
    (1, 56, 8, 12, 13, 1, 1, (0, 0, 0, 0), 1, 1, None),    # K = 32 + 24 (16 + 8 taps), 96
                                                            # aligned positions, 8 + 5 rows
    (1, 24, 9, 9, 11, 1, 1, (0, 0, 0, 0), 1, 1, None),      # K = 16 + 8 in one chunk: the
                                                            # weights kept over 3 columns
    (1, 72, 7, 7, 17, 1, 1, (0, 0, 0, 0), 1, 1, (2, 15)),   # K = 32 + 32 + 8, a tile
    (1, 40, 2, 2, 8, 1, 1, (0, 0, 0, 0), 1, 1, None),       # 4 positions, K = 32 + 8
    (2, 144, 1, 1, 40, 1, 1, (0, 0, 0, 0), 1, 1, (3, 33)),  # one position, batch 2, a tile
                                                            # (codegen: gemv_dma for batch 1)
    (2, 16, 5, 5, 40, 1, 1, (0, 0, 0, 0), 1, 1, (1, 37)),   # a table over 16 + 21 channels,
                                                            # batch 2: applied while the RSP
                                                            # runs the next start
    # K <= 8: the weights come with the P rows; one pass of 8 taps a block and row
    (1, 8, 14, 14, 24, 1, 1, (0, 0, 0, 0), 1, 1, None),     # K = 8, 196 positions (STAGE)
    (1, 3, 7, 7, 11, 1, 1, (0, 0, 0, 0), 1, 1, None),       # K = 3, 7x7, 8 + 3 rows
    (2, 5, 8, 12, 21, 1, 1, (0, 0, 0, 0), 1, 1, (3, 16)),   # K = 5, aligned (strided B),
                                                            # batch 2, a tile: weight rows
                                                            # not 8-byte aligned
    (1, 4, 66, 64, 3, 1, 1, (0, 0, 0, 0), 1, 1, None),      # 4224 positions: granules by
                                                            # tap into B
    (1, 1, 5, 5, 9, 1, 1, (0, 0, 0, 0), 1, 1, None),        # one tap, 25 positions
    (1, 7, 9, 9, 70, 1, 1, (0, 0, 0, 0), 1, 1, None),       # a table; 32 + 38 channels
    (1, 8, 12, 12, 56, 1, 1, (0, 0, 0, 0), 1, 1, None),     # K = 8, 144 aligned positions:
                                                            # groups of 32 and 24 rows
    # aligned planes under 32 positions: their 32-byte tap rows are no strided transfer
    (1, 40, 4, 4, 12, 1, 1, (0, 0, 0, 0), 1, 1, None),     # 16 positions, K = 32 + 8
    (1, 96, 2, 4, 9, 1, 1, (0, 0, 0, 0), 1, 1, None),      # 8 positions, K = 3 x 32
]
# Paths each case covers besides its note: whole aligned columns written by one strided SP
# DMA of 8 rows and of fewer (3: 64 positions, 8 + ... + 4 rows; 11: 8 + 5 rows); the
# unrolled first and middle halves of 8-row groups on aligned (11) and staged (1, 13)
# inputs.
TABLE_CASES = {6, 16, 22}
EDGE_CASE = 10
NOT_TAKEN = {8, 9}


@pytest.mark.emulator
def test_rsp_pwconv_bit_exact_in_mupen64plus(bare, boot_stub, mupen64plus, tmp_path):
    run_own_dma_cases(bare, boot_stub, tmp_path, CASES, seed=14,
                      kernel="dnn64_rsp_pwconv_s8", fits="dnn64_rsp_pwconv_fits(g, w)",
                      table_cases=TABLE_CASES, edge_cases={EDGE_CASE}, not_fitting=NOT_TAKEN)


def _padded_rows_model():
    """1x1 Convs whose c_in (12, 20, 58, 116) is above 8 and not a multiple of 8: 196
    positions (input rows by one strided SP DMA) and, after a pool, 49 (8 taps a
    transfer); 58 and 116 taps run 2 and 4 chunks, the last one's padding taps zero."""
    from onnx import helper

    from tests.codegen.codegen_cases import onnx_model, rand

    inits = {"w1": rand(20, 12, 1, 1, seed=1), "w2": rand(58, 20, 1, 1, seed=2),
             "w3": rand(116, 58, 1, 1, seed=3) * 0.5, "w4": rand(9, 116, 1, 1, seed=4) * 0.3,
             "w5": rand(12, 58, 1, 1, seed=5)}
    nodes = [
        helper.make_node("Conv", ["input", "w1"], ["a"], name="pw12"),
        helper.make_node("Relu", ["a"], ["ar"], name="relu12"),
        helper.make_node("Conv", ["ar", "w2"], ["b"], name="pw20"),
        helper.make_node("Relu", ["b"], ["br"], name="relu20"),
        helper.make_node("Conv", ["br", "w3"], ["c"], name="pw58"),
        helper.make_node("Relu", ["c"], ["cr"], name="relu58"),
        helper.make_node("Conv", ["cr", "w4"], ["y"], name="pw116"),
        helper.make_node("MaxPool", ["br"], ["p"], name="pool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Conv", ["p", "w5"], ["z"], name="pw58_7x7"),
    ]
    return onnx_model(nodes, {"input": [1, 12, 14, 14]}, ["y", "z"], inits)


@pytest.mark.emulator
def test_padded_rows_in_a_model_match_host_and_the_integer_reference(bare, mupen64plus,
                                                                     tmp_path):
    """Through the CLI with `kernels: auto`, 1x1 Convs of c_in not a multiple of 8 call
    dnn64_rsp_pwconv_padded_s8 (their weight rows padded with zero taps): the ROM's
    outputs equal the host build's (there each channel runs dnn64_conv_s8 on its row's
    first c_in bytes) bit for bit, and `run` checks both against the integer reference."""
    import json

    from tests.emulator.rom_workspace import auto_kernels_rom

    out, c_file = auto_kernels_rom(tmp_path / "ws", "padded_rows", _padded_rows_model(),
                                   seed=9, input_shape=(1, 12, 14, 14))
    meta = json.loads((out / "codegen" / "meta.json").read_text())
    assert {"pw12", "pw20", "pw58", "pw116", "pw58_7x7"} <= set(meta["rsp_nodes"])
    assert c_file.count("dnn64_rsp_pwconv_padded_s8(") == 5


@pytest.mark.emulator
def test_pwconv_on_16_positions_in_a_model_matches_host_and_the_integer_reference(
        bare, mupen64plus, tmp_path):
    """Through the CLI with `kernels: auto`: a 1x1 Conv of 40 taps on a 4x4 plane (as
    zoo mobilenetv3's last block's, 288 taps) runs pwconv_s8 from 8-byte aligned arena
    rows, and the ROM's output equals the host build's bit for bit (`run` checks each
    against the integer reference executor). Its 16-byte tap rows once went by one
    strided transfer of 32-byte rows, whose skip (16 - 32) wrapped to 4080."""
    from onnx import helper

    from tests.codegen.codegen_cases import onnx_model, rand
    from tests.emulator.rom_workspace import auto_kernels_rom

    nodes = [helper.make_node("Conv", ["input", "w"], ["a"], name="pw"),
             helper.make_node("Conv", ["a", "w44"], ["y"], name="pw44")]  # padded rows
    model = onnx_model(nodes, {"input": [1, 40, 4, 4]}, ["y"],
                       {"w": rand(44, 40, 1, 1), "w44": rand(12, 44, 1, 1, seed=2) * 0.5})
    _, c_file = auto_kernels_rom(tmp_path / "ws", "pw16", model, seed=3,
                                 input_shape=(1, 40, 4, 4))
    assert c_file.count("dnn64_rsp_pwconv_s8(") == 1
    assert c_file.count("dnn64_rsp_pwconv_padded_s8(") == 1
