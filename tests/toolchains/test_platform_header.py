"""dnn64_platform.h: self-contained C99 for every compiler, dnn64_-prefixed."""

from __future__ import annotations

import re
import subprocess

import pytest

from dnn64build.toolchains.base import PLATFORM_DIR

HEADER = PLATFORM_DIR / "dnn64_platform.h"
# (the compiler's fixture in tests/conftest.py, its flags), with the fixture's tool marker
COMPILERS = [
    pytest.param("host_cc", ["-std=c99", "-pedantic"], marks=pytest.mark.host_cc, id="cc"),
    pytest.param("cross_gcc", ["-std=c99", "-pedantic", "-march=vr4300", "-mabi=32", "-EB"],
                 marks=pytest.mark.cross, id="mips-linux-gnu-gcc"),
]


@pytest.mark.parametrize(("compiler_fixture", "flags"), COMPILERS)
def test_header_compiles_on_its_own(compiler_fixture, flags, request, tmp_path):
    compiler = [request.getfixturevalue(compiler_fixture), *flags]
    unit = tmp_path / "only_header.c"
    unit.write_text('#include "dnn64_platform.h"\n#include "dnn64_platform.h"\nint x;\n')
    proc = subprocess.run(
        [*compiler, "-Wall", "-Wextra", "-Werror", f"-I{PLATFORM_DIR}", "-fsyntax-only", str(unit)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr


def test_every_public_name_is_prefixed():
    text = re.sub(r"/\*.*?\*/", "", HEADER.read_text(), flags=re.DOTALL)
    functions = re.findall(r"^\w[\w ]*?\b(\w+)\(", text, re.MULTILINE)
    macros = re.findall(r"^#define (\w+)", text, re.MULTILINE)
    types = re.findall(r"typedef struct (\w+)", text) + re.findall(r"^\} (\w+);", text, re.M)
    assert len(functions) >= 20 and macros and types
    assert all(name.startswith("dnn64_") for name in functions + types), functions + types
    assert all(name.startswith("DNN64_") for name in macros), macros
