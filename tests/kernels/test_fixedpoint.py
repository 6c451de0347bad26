"""The C fixed-point primitives against intmath (edge values and random ones), and the API table."""

from __future__ import annotations

import re
import subprocess

import numpy as np
from kernels_ctypes import _SIGNATURES, KERNEL_DIR

from dnn64build.quant import intmath as im

EDGES = [im.INT32_MIN, im.INT32_MIN + 1, -(1 << 30), -3, -2, -1, 0, 1, 2, 3, 1 << 30,
         im.INT32_MAX - 1, im.INT32_MAX]


def _random_i32(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    wide = rng.integers(im.INT32_MIN, im.INT32_MAX, n, endpoint=True)
    small = rng.integers(-70000, 70000, n)
    return np.concatenate([EDGES, wide, small]).astype(np.int64)


def test_srdhm_c_equals_intmath(kernels) -> None:
    a = _random_i32(1500, 1)
    b = np.concatenate([_random_i32(1500, 2)[::-1]])
    want = im.saturating_rounding_doubling_high_mul(a, b)
    got = [kernels.dnn64_srdhm(int(p), int(q)) for p, q in zip(a, b, strict=True)]
    np.testing.assert_array_equal(got, want)
    pairs = [(p, q) for p in EDGES for q in EDGES]
    got = [kernels.dnn64_srdhm(p, q) for p, q in pairs]
    want = [int(im.saturating_rounding_doubling_high_mul(p, q)) for p, q in pairs]
    assert got == want


def test_rdbp_c_equals_intmath(kernels) -> None:
    x = _random_i32(800, 3)
    for e in (0, 1, 2, 7, 15, 22, 30, 31):
        got = [kernels.dnn64_rdbp(int(v), e) for v in x]
        np.testing.assert_array_equal(got, im.rounding_divide_by_pot(x, e))


def test_mbqm_c_equals_intmath(kernels) -> None:
    x = _random_i32(300, 4)
    rng = np.random.default_rng(5)
    for real in [*rng.uniform(1e-6, 4.0, 12), 2.0**-31, 1e9, 0.0]:
        m, s = im.quantize_multiplier(float(real))
        got = [kernels.dnn64_mbqm(int(v), m, s) for v in x]
        np.testing.assert_array_equal(got, im.multiply_by_quantized_multiplier(x, m, s))


def test_signature_table_matches_header() -> None:
    """Every public function of dnn64_kernels.h is wrapped, with its number of parameters."""
    text = re.sub(r"/\*.*?\*/", "", (KERNEL_DIR / "dnn64_kernels.h").read_text(), flags=re.S)
    protos = dict(re.findall(r"\b(dnn64_\w+)\(([^)]*)\);", text))
    math_h = re.sub(r"/\*.*?\*/", "", (KERNEL_DIR / "dnn64_math.h").read_text(), flags=re.S)
    protos.update(re.findall(r"\b(dnn64_\w+)\(([^)]*)\);", math_h))
    assert set(protos) == set(_SIGNATURES)
    for name, params in protos.items():
        kinds = ["p" if "*" in p else ("f" if p.split()[0] == "float" else "i")
                 for p in params.split(",")]
        assert "".join(kinds) == _SIGNATURES[name][0], name


def test_public_headers_compile_on_their_own(host_cc: str, tmp_path) -> None:
    for header in ("dnn64_kernels.h", "dnn64_math.h"):
        src = tmp_path / "only_header.c"
        src.write_text(f'#include "{header}"\n#include "{header}"\nint dnn64_probe;\n')
        proc = subprocess.run([host_cc, "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror",
                               f"-I{KERNEL_DIR}", "-c", str(src), "-o", str(tmp_path / "o.o")],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
