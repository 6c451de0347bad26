"""The generated microcode C file is what the .rsp sources assemble to today."""

from __future__ import annotations

from dnn64build.rsp import microcode


def test_generated_c_file_is_up_to_date():
    assert microcode.C_FILE.read_text() == microcode.c_source(), (
        "kernels/platform/bare/dnn64_rsp_microcode.c is stale: "
        "run `python -m dnn64build.rsp.microcode`"
    )


def test_every_kernel_fits_imem_and_ends_in_break():
    for name in microcode.KERNELS:
        code = microcode.assemble_kernel(name)
        assert len(code.words) * 4 <= 4096
        assert 0x0000000D in code.words  # break: the RSP halts with broke set
