"""The RGB stem Conv (3 input channels, 3x3, stride 2) through stem_s8.rsp: the RSP
fetches its own input rows, splits them into even and odd columns and writes its
outputs by SP DMA. dnn64_rsp_conv_s8 takes that path for the shapes dnn64_rsp_stem_fits
accepts; in mupen64plus with the low-level RSP plugin, bit-exact against the numpy
integer reference and against dnn64_conv_s8 on the same ROM. Shapes it refuses run
dnn64_rsp_conv_s8's other paths, with the same results.
"""

from __future__ import annotations

import pytest

from tests.emulator.test_rsp_dwconv import OWN_DMA_PROBE, run_own_dma_cases

# (n, c_in, h, w, c_out, k, stride, pads (top, left, bottom, right), dil, group, tile),
# through stem_s8 unless said
CASES = [
    (1, 3, 30, 64, 16, 3, 2, (1, 1, 1, 1), 1, 1, None),     # a stem: 16 channels
    (1, 3, 17, 33, 20, 3, 2, (0, 0, 0, 0), 1, 1, None),     # odd rows, 2 lists, no pads
    (1, 3, 9, 31, 5, 3, 2, (2, 2, 1, 0), 1, 1, None),       # uneven pads, pads of 2
    (1, 3, 1, 15, 8, 3, 2, (1, 1, 1, 1), 1, 1, None),       # a plane of one row
    (2, 3, 12, 16, 12, 3, 2, (1, 1, 0, 0), 1, 1, (3, 8)),   # batch 2, a tile
    (1, 3, 5, 224, 16, 3, 2, (1, 1, 1, 1), 1, 1, None),     # 224-byte rows
    (1, 3, 10, 32, 9, 3, 2, (1, 1, 1, 1), 1, 1, None),      # a table, narrower clamp
    (1, 3, 6, 14, 8, 3, 2, (0, 1, 2, 2), 1, 1, None),       # right pads read by both parities
    (1, 3, 40, 32, 20, 3, 2, (1, 1, 1, 1), 1, 1, None),     # a table: bands of 8 rows, 2 lists
    (1, 3, 10, 16, 8, 3, 2, (1, 1, 1, 1), 1, 1, None),      # a table, 40-byte planes: one band
    (1, 3, 11, 16, 9, 3, 2, (1, 1, 1, 1), 1, 1, None),      # -shift 1 and 16: not stem_s8
    (1, 3, 9, 9, 8, 3, 2, (1, 1, 1, 1), 1, 1, None),        # not: W_out 5
    (1, 3, 1, 1, 8, 3, 2, (1, 1, 1, 1), 1, 1, None),        # not: one pixel
    (1, 3, 8, 8, 8, 3, 1, (1, 1, 1, 1), 1, 1, None),        # not: stride 1
    (1, 4, 8, 16, 8, 3, 2, (1, 1, 1, 1), 1, 1, None),       # not: 4 input channels
    (1, 3, 4, 240, 8, 3, 2, (1, 1, 1, 1), 1, 1, None),      # not: 240-byte rows
]
TABLE_CASES = {6, 8, 9}
EDGE_CASE = 10  # channels whose output stage the RSP cannot take
NOT_STEM = {11, 12, 13, 14, 15}


@pytest.mark.emulator
def test_rsp_stem_bit_exact_in_mupen64plus(bare, boot_stub, mupen64plus, tmp_path):
    run_own_dma_cases(bare, boot_stub, tmp_path, CASES, seed=13,
                      kernel="dnn64_rsp_conv_s8", fits="dnn64_rsp_stem_fits(g)",
                      table_cases=TABLE_CASES, edge_cases={EDGE_CASE}, not_fitting=NOT_STEM)


@pytest.mark.emulator
def test_rsp_stem_quantizing_its_float_input_bit_exact_in_mupen64plus(bare, boot_stub,
                                                                      mupen64plus, tmp_path):
    """dnn64_rsp_conv_quantized_s8 (a QuantizeLinear and the stem in one call, the CPU
    quantizing the next band's input rows while the RSP computes one) on the same cases
    from a float input: the same outputs. Even-numbered cases write y over the float
    input, which the kernel must notice and quantize it all first (case 0 would otherwise
    write rows of channel 10 over input rows not yet quantized)."""
    run_own_dma_cases(bare, boot_stub, tmp_path, CASES, seed=13,
                      kernel="dnn64_rsp_conv_quantized_s8", fits="dnn64_rsp_stem_fits(g)",
                      table_cases=TABLE_CASES, edge_cases={EDGE_CASE}, not_fitting=NOT_STEM,
                      probe=OWN_DMA_PROBE.parent / "rsp_quantized_stem_probe.c")


def _stem_model(h: int, w: int, pads: list[int], activation: str | None):
    """float input [1, 3, h, w] -> stem Conv 3->16, 3x3, stride 2 (-> activation) ->
    1x1 Conv 16->8: the int8 build quantizes the input, then runs the stem."""
    from onnx import helper

    from tests.codegen.codegen_cases import onnx_model, rand

    nodes = [helper.make_node("Conv", ["input", "w1"], ["a"], name="stem", pads=pads,
                              strides=[2, 2])]
    if activation:
        nodes.append(helper.make_node(activation, ["a"], ["b"], name="act"))
    nodes.append(helper.make_node("Conv", ["b" if activation else "a", "w2"], ["y"],
                                  name="pw"))
    return onnx_model(nodes, {"input": [1, 3, h, w]}, ["y"],
                      {"w1": rand(16, 3, 3, 3, seed=1) * 0.3, "w2": rand(8, 16, 1, 1, seed=2)})


@pytest.mark.emulator
@pytest.mark.parametrize("h, w, pads, activation", [
    (32, 32, [1, 1, 1, 1], "HardSwish"),  # a table the CPU applies one band behind
    (40, 48, [1, 1, 0, 0], "Relu"),       # the clamp: no table
    (33, 33, [0, 0, 0, 0], None),         # no pads, odd rows
])
def test_quantize_and_stem_in_one_call_match_host_and_reference(bare, mupen64plus, tmp_path,
                                                                h, w, pads, activation):
    """Through the CLI with `kernels: auto`: the float input's QuantizeLinear runs inside
    the stem's dnn64_rsp_conv_quantized_s8 (plan.json records the pair), and the ROM's
    outputs equal the host build's bit for bit, `run` checking each against the integer
    reference executor."""
    import json

    from tests.emulator.rom_workspace import auto_kernels_rom

    out, c_file = auto_kernels_rom(tmp_path / "ws", "qstem", _stem_model(h, w, pads, activation),
                                   seed=5, input_shape=(1, 3, h, w))
    plan = json.loads((out / "plan" / "plan.json").read_text())
    assert [p["conv"] for p in plan["quantize_stem"]["pairs"]] == ["stem"]
    assert "dnn64_rsp_conv_quantized_s8(" in c_file
    assert "dnn64_quantize_f32_s8(" not in c_file
