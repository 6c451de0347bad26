"""Rerun the kernel tests against a build with AddressSanitizer and UBSan.

The kernels are loaded into Python through ctypes, so the sanitizer runtimes
are preloaded into a child pytest; any report aborts it (no recovery).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from kernels_ctypes import PREBUILT_ENV, build_library

from dnn64build.errors import UserError
from tests.tool_required import missing_tool

SANITIZE = ("-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined",
            "-fno-sanitize-recover=all")
# Every test file that calls the kernels on numpy buffers (exact sizes, so ASan sees
# overruns); the random-geometry searches are left to the normal build.
RERUN = ["test_conv.py", "test_gemm.py", "test_pool.py", "test_eltwise.py", "test_layout.py",
         "test_resize.py", "test_softmax_reduce.py", "test_quantize.py", "test_activation.py",
         "test_accumulator_bound.py"]


def _runtime(cc: str, name: str) -> str | None:
    path = subprocess.run([cc, f"-print-file-name={name}"], capture_output=True,
                          text=True).stdout.strip()
    return path if os.path.isabs(path) else None


@pytest.mark.skipif(PREBUILT_ENV in os.environ, reason="already running under the sanitizers")
def test_kernels_clean_under_asan_and_ubsan(host_cc: str, tmp_path: Path) -> None:
    runtimes = [_runtime(host_cc, "libasan.so"), _runtime(host_cc, "libubsan.so")]
    if None in runtimes:
        missing_tool(UserError("cc has no sanitizer runtimes (libasan.so, libubsan.so)",
                               hint="apt-get install gcc"))
    lib = build_library(tmp_path / "libdnn64k_san.so", SANITIZE)
    here = Path(__file__).parent
    env = {**os.environ, PREBUILT_ENV: str(lib), "LD_PRELOAD": ":".join(runtimes),
           "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1"}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-s", "-p", "no:cacheprovider",
         "-k", "not random", *[str(here / f) for f in RERUN]],
        capture_output=True, text=True, env=env, cwd=here, timeout=600)
    report = (proc.stdout + proc.stderr)[-6000:]
    assert proc.returncode == 0, report
    assert "Sanitizer" not in proc.stderr and "runtime error" not in proc.stderr, report
    assert " passed" in proc.stdout, report
