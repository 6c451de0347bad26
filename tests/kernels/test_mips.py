"""The kernels on the N64's CPU: freestanding VR4300 objects, and a big-endian run under qemu."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from kernels_ctypes import KERNEL_DIR, ConvGeom, act_f32, bcast, kernel_sources, q8_out
from kernels_refs import conv_acc_int, output_stage, resize_linear_s8_ref

from dnn64build.quant import intmath as im
from dnn64build.quant.qparams import QParams, quantize_values

# The bare-metal flags of the `bare` platform (see N64-NOTES.md), with warnings as errors.
FREESTANDING = ("-std=c99", "-march=vr4300", "-mabi=32", "-mno-abicalls", "-fno-pic",
                "-ffreestanding", "-G0", "-EB", "-O2", "-Wall", "-Wextra", "-Werror")
# What the platform layer provides to the kernels: gcc may emit calls to memcpy/memset for
# copy loops; the RSP kernels reference the RSP job runner weakly (bare defines it).
PLATFORM_SYMBOLS = {"memcpy", "memset", "dnn64_rsp_available", "dnn64_rsp_write",
                    "dnn64_rsp_write_rows", "dnn64_rsp_start", "dnn64_rsp_wait",
                    "dnn64_rsp_read", "dnn64_rsp_start_dwconv", "dnn64_rsp_start_pwconv",
                    "dnn64_rsp_start_gemv_dma", "dnn64_rsp_start_stem", "dnn64_rsp_start_sums",
                    "dnn64_rsp_flush", "dnn64_dcache_claim",
                    "dnn64_rsp_dram_address",
                    "dnn64_rsp_start_at", "dnn64_rsp_write_beside",
                    "dnn64_rsp_write_rows_beside", "dnn64_rsp_read_beside"}

def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def mips_objects(cross_gcc: str, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    out = tmp_path_factory.mktemp("mips")
    objs = []
    for src in kernel_sources():
        obj = out / (src.stem + ".o")
        _run([cross_gcc, *FREESTANDING, "-c", str(src), "-o", str(obj)])
        objs.append(obj)
    return objs


def test_kernels_are_freestanding_vr4300_objects(mips_objects: list[Path], tmp_path: Path) -> None:
    for obj in mips_objects:
        head = obj.read_bytes()[:20]
        # ELF, 32-bit, big-endian (EI_DATA = 2), e_machine = EM_MIPS (8), big-endian u16
        assert head[:4] == b"\x7fELF" and head[4] == 1 and head[5] == 2, obj.name
        assert int.from_bytes(head[18:20], "big") == 8, obj.name
    merged = tmp_path / "kernels.o"
    _run(["mips-linux-gnu-ld", "-r", "-o", str(merged), *map(str, mips_objects)])
    undefined = _run(["mips-linux-gnu-nm", "-u", str(merged)]).stdout.split()
    names = {tok for tok in undefined if tok not in ("U", "w")}  # w: weak (the RSP's)
    assert names <= PLATFORM_SYMBOLS, f"kernels need more than the platform gives: {names}"


class _Lcg:
    """The driver's generator: x = x * 1103515245 + 12345 mod 2^32."""

    def __init__(self) -> None:
        self.state = 12345

    def next(self) -> int:
        self.state = (self.state * 1103515245 + 12345) & 0xFFFFFFFF
        return self.state

    def s8(self, n: int) -> np.ndarray:
        return np.array([((self.next() >> 16) & 0xFF) - 128 for _ in range(n)], np.int8)

    def f32(self, n: int) -> np.ndarray:
        vals = [np.float32((self.next() >> 8) & 0xFFFF) / np.float32(32768) - np.float32(1)
                for _ in range(n)]
        return np.array(vals, np.float32)


def _values(v: np.ndarray, values: str) -> np.ndarray:
    """The driver's fill_values: as drawn, or 127/-128 by the drawn value's low bit."""
    if values == "extreme":
        return np.where(v & 1, 127, -128).astype(np.int8)
    return v


def _parse(stdout: str) -> dict[str, list[str]]:
    return {line.split()[0]: line.split()[1:] for line in stdout.splitlines() if line.strip()}


def test_big_endian_kernels_under_qemu(kernels, mips_objects: list[Path], cross_gcc: str,
                                       qemu_mips: str, tmp_path: Path) -> None:
    exe = tmp_path / "driver"
    _run([cross_gcc, "-std=c99", "-march=vr4300", "-mabi=32", "-EB", "-O2", f"-I{KERNEL_DIR}",
          "-static", "-Wl,--no-warn-mismatch", "-o", str(exe),
          str(Path(__file__).with_name("qemu_driver.c")), *map(str, mips_objects)])
    got = _parse(_run([qemu_mips, str(exe)], timeout=60).stdout)

    rng = _Lcg()
    # int8 Conv: group 2, stride (2, 1), pads 1: bit-exact against the numpy reference
    cx = rng.s8(120).reshape(1, 4, 6, 5)
    cw = rng.s8(108).reshape(6, 2, 3, 3)
    cb = np.array([(rng.next() >> 20) - 2048 for _ in range(6)], np.int32)
    mult = np.array([1518500250, 1200000000, 1800000000, 1073741824, 2000000000, 1300000000])
    shift = np.array([-9, -8, -10, -7, -9, 1])
    want = output_stage(conv_acc_int(cx, -3, cw, cb, (2, 1), (1, 1, 1, 1), (1, 1), 2), mult,
                        shift, 5, -128, 127, None)
    assert [int(v) for v in got["conv_s8"]] == want.reshape(-1).tolist()
    host = np.empty_like(want)
    kernels.dnn64_conv_s8(ConvGeom(1, 4, 6, 5, 6, 3, 5, 3, 3, 2, 1, 1, 1, 1, 1, 2), cx, -3, cw,
                          cb, mult.astype(np.int32), shift.astype(np.int32), 0, 6, q8_out(5), host)
    np.testing.assert_array_equal(host, want)

    # fp32 Gemm + sigmoid and Softmax: the same IEEE bits as the host build, and close to float64
    ga, gb, gbias = rng.f32(21).reshape(3, 7), rng.f32(35).reshape(5, 7), rng.f32(5)
    host_g = np.empty((3, 5), np.float32)
    kernels.dnn64_gemm_f32(3, 7, 5, ga, gb, 1, gbias, 0, 5, act_f32("sigmoid"), host_g)
    mips_g = np.array([int(h, 16) for h in got["gemm_f32"]], np.uint32).view(np.float32)
    np.testing.assert_array_equal(mips_g, host_g.reshape(-1))
    ref = 1 / (1 + np.exp(-(ga.astype(np.float64) @ gb.T.astype(np.float64) + gbias)))
    np.testing.assert_allclose(mips_g.reshape(3, 5), ref, rtol=1e-5)

    sx = (rng.f32(18) * np.float32(8)).reshape(2, 9)
    host_s = np.empty_like(sx)
    kernels.dnn64_softmax_f32(2, 9, 1, sx, host_s)
    mips_s = np.array([int(h, 16) for h in got["softmax_f32"]], np.uint32).view(np.float32)
    np.testing.assert_array_equal(mips_s, host_s.reshape(-1))
    e = np.exp(sx.astype(np.float64) - sx.max(axis=1, keepdims=True))
    np.testing.assert_allclose(mips_s.reshape(2, 9), e / e.sum(axis=1, keepdims=True),
                               rtol=1e-5, atol=1e-9)

    # int8 Add with broadcasting, and int8 bilinear resize: bit-exact against intmath
    ea, eb = rng.s8(24).reshape(2, 3, 4), rng.s8(3).reshape(3, 1)
    want_add = im.add_s8(ea, eb, im.add_params(0.05, -3, 0.02, 10, 0.06, 5))
    assert [int(v) for v in got["add_s8"]] == want_add.reshape(-1).tolist()
    assert bcast((2, 3, 4), (2, 3, 4), (3, 1)).b_strides[:3] == [0, 1, 0]  # as the driver's

    rx = rng.s8(24).reshape(2, 3, 4)
    want_rs = resize_linear_s8_ref(rx, (5, 7), (5 / 3, 7 / 4), "half_pixel")
    assert [int(v) for v in got["resize_linear_s8"]] == want_rs.reshape(-1).tolist()

    # int8 Convs through the specialised paths (conv_paths_s8 in the driver): bit-exact
    # against the numpy reference, the pointwise kernel's MIPS assembly included
    mult9 = np.array([1518500250, 1200000000, 1800000000, 1073741824, 2000000000, 1300000000,
                      1100000000, 1900000000, 1400000000])
    shift9 = np.array([-9, -8, -10, -7, -9, 1, -8, -9, -10])
    for name, (c_in, h, w, c_out, k, s, pad, group), x_zp, values in [
            ("conv_pw_s8", (5, 1, 7, 9, 1, 1, 0, 1), 7, "any"),
            ("conv_chunked_s8", (300, 3, 4, 5, 1, 1, 0, 1), -2, "any"),
            ("conv_dw5_s8", (3, 7, 9, 3, 5, 1, 2, 3), 3, "any"),
            ("conv_stem_s8", (3, 9, 10, 4, 3, 2, 1, 1), -5, "any"),
            # 1x1 by channel pairs: odd counts, and the extremes its sums reach
            ("conv_pairs_s8", (7, 3, 3, 9, 1, 1, 0, 1), 5, "any"),
            ("conv_pairs_extreme_s8", (7, 3, 3, 9, 1, 1, 0, 1), 0, "extreme")]:
        x = _values(rng.s8(c_in * h * w), values).reshape(1, c_in, h, w)
        wt = _values(rng.s8(c_out * c_in // group * k * k), values).reshape(
            c_out, c_in // group, k, k)
        b = np.array([(rng.next() >> 20) - 2048 for _ in range(c_out)], np.int32)
        acc = conv_acc_int(x, x_zp, wt, b, (s, s), (pad,) * 4, (1, 1), group)
        want = output_stage(acc, mult9[:c_out], shift9[:c_out], -4, -128, 127, None)
        assert [int(v) for v in got[name]] == want.reshape(-1).tolist(), name

    _check_node_paths(got)


def _check_node_paths(got: dict[str, list[str]]) -> None:
    """The driver's node_paths: bit-exact against intmath and the reference quantisation."""
    a = np.tile(np.arange(-128, 128), 256)
    b = np.repeat(np.arange(-128, 128), 256)
    small_e = im.AddParams(5, -7, 100, 2147483647, 0, 1073741825, -1, 2147483647, -1,
                           left_shift=8)
    usual = im.AddParams(-3, 10, 5, 1073741824, 0, 1717986918, -2, 1789569707, -19)
    assert [int(v) for v in got["add_folded_s8"]] == im.add_s8(a, b, small_e, -100, 90).tolist()
    assert [int(v) for v in got["sub_folded_s8"]] == im.add_s8(a, b, usual,
                                                               subtract=True).tolist()

    g = (((np.arange(1, 5 * 1029 + 1) * 37 + 11) & 255) - 128).reshape(5, 1029)
    assert [int(v) for v in got["gap_s8"]] == im.divide_round_half_away(
        g.sum(axis=1), 1029).tolist()
    mean = im.multiply_by_quantized_multiplier(g.sum(axis=1) - 3 * 1029, 1407374884, -9)
    assert [int(v) for v in got["reduce_mean_s8"]] == np.clip(
        np.asarray(mean, np.int64) - 5, -128, 127).tolist()
    assert [int(v) for v in got["gap_min_s8"]] == [-128]

    v = np.arange(-1030, 1031).astype(np.float32) * np.float32(0.5) * np.float32(0.0385445058)
    bits = (v.view(np.uint32)[:, None].astype(np.int64) + np.arange(-3, 4)) & 0xFFFFFFFF
    specials = [0x7FC00000, 0x7F800000, 0xFF800000, 0x00000001, 0x80000001, 0x007FFFFF,
                0x7F7FFFFF, 0xFF7FFFFF]
    x = np.concatenate([bits.reshape(-1), specials]).astype(np.uint32).view(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        want_q = quantize_values(x, QParams(0.0385445058, -8))
    assert [int(v) for v in got["quantize_s8"]] == want_q.tolist()
