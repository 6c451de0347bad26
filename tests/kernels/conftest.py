"""The kernel library, compiled once per session with the host compiler."""

from __future__ import annotations

import os
import shlex

import pytest
from kernels_ctypes import PREBUILT_ENV, Kernels, build_library


@pytest.fixture(scope="session")
def kernels(tmp_path_factory: pytest.TempPathFactory) -> Kernels:
    prebuilt = os.environ.get(PREBUILT_ENV)
    if prebuilt:
        return Kernels(prebuilt)
    extra = shlex.split(os.environ.get("DNN64_TEST_KERNEL_CFLAGS", ""))
    return Kernels(build_library(tmp_path_factory.mktemp("kernels") / "libdnn64k.so", extra))
