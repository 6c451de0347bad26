"""The bare runtime in mupen64plus: libgcc/libc replacements, long lines,
exception reporting, the runner's time limit. Expected values are computed
here in Python."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from dnn64build.emulator import run_host, run_rom
from dnn64build.errors import UserError
from dnn64build.rom import Asset, build_asset_image, pack_rom
from tests.compile_program import compile_and_link

PROGRAMS = Path(__file__).parent / "programs"
MASK64 = 2**64 - 1


def build_rom(bare, boot_stub, tmp_path: Path, name: str, assets=()) -> Path:
    program = compile_and_link(bare, [PROGRAMS / f"{name}.c"], [], tmp_path / f"{name}.bin")
    rom = tmp_path / f"{name}.z64"
    image = build_asset_image(list(assets)).data
    rom.write_bytes(pack_rom(program.read_bytes(), image, ipl3=boot_stub))
    return rom


def c_div(n: int, d: int) -> tuple[int, int]:
    """C99 signed division: truncate toward zero."""
    q = abs(n) // abs(d)
    q = -q if (n < 0) != (d < 0) else q
    return q, n - q * d


def signed64(v: int) -> int:
    return v - 2**64 if v >= 2**63 else v


def clz32(v: int) -> int:
    return 32 - v.bit_length()


def ctz32(v: int) -> int:
    return (v & -v).bit_length() - 1


def division_pairs() -> list[tuple[int, int]]:
    """(n, d) with d != 0 and never INT64_MIN / -1 (undefined in C)."""
    rng = np.random.default_rng(7)
    pairs = [(12345678901234567, 1000000007), (MASK64, 3), (2**63, 2**63 - 1), (7, 2**40),
             (2**63 + 5, 2**32 + 1), (100, 7), (MASK64 - 1, MASK64)]  # fmt: skip
    for _ in range(20):
        n = int(rng.integers(0, 2**63)) * 2 + int(rng.integers(0, 2))
        d = int(rng.integers(1, 2 ** int(rng.integers(1, 64))))
        pairs.append((n, d))
    return pairs


def expected_division_lines(pairs: list[tuple[int, int]]) -> list[str]:
    lines = []
    for i, (n, d) in enumerate(pairs):
        sq, sr = c_div(signed64(n), signed64(d))
        lines.append(
            f"div {i} {n // d} {n % d} {sq & MASK64} {sr & MASK64} "
            f"{clz32((d & 0xFFFFFFFF) | 1)} {ctz32((n & 0xFFFFFFFF) | 0x80000000)}"
        )
    return lines


def expected_mem_line() -> str:
    mem = bytearray((i * 7 + 3) & 0xFF for i in range(256))
    mem[5:105] = mem[1:101]
    mem[130:220] = mem[133:223]
    mem[17:50] = b"\xa5" * 33
    mem[201:242] = mem[3:44]
    h = 2166136261
    for b in mem:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    first = -1 if bytes(mem[0:10]) < bytes(mem[1:11]) else 1
    return f"mem {h:08x} {first} 0"


@pytest.fixture(scope="module")
def pairs_asset() -> Asset:
    pairs = division_pairs()
    return Asset("pairs", b"".join(struct.pack(">QQ", n, d) for n, d in pairs))


@pytest.mark.emulator
def test_division_and_libc_helpers_on_n64(bare, boot_stub, mupen64plus, pairs_asset, tmp_path):
    rom = build_rom(bare, boot_stub, tmp_path, "runtime_probe", [pairs_asset])
    result = run_rom(rom, timeout=30)
    assert list(result.lines) == expected_division_lines(division_pairs()) + [expected_mem_line()]


def test_division_and_libc_helpers_on_host(host, pairs_asset, tmp_path):
    program = compile_and_link(host, [PROGRAMS / "runtime_probe.c"], [], tmp_path / "probe")
    assets = tmp_path / "assets.bin"
    assets.write_bytes(build_asset_image([pairs_asset]).data)
    result = run_host(program, assets, timeout=30)
    assert list(result.lines) == expected_division_lines(division_pairs()) + [expected_mem_line()]


def long_line_expected() -> list[str]:
    text = "".join(chr(ord("a") + i % 26) for i in range(1300))
    numbers = ("t " + " ".join(str(i) for i in range(100)))[:200]
    return [text[i : i + 200] for i in range(0, 1300, 200)] + [numbers, "truncated 1", "", "end"]


@pytest.mark.emulator
def test_long_lines_split_identically_on_n64_and_host(bare, host, boot_stub, mupen64plus, tmp_path):
    rom = build_rom(bare, boot_stub, tmp_path, "long_line_probe")
    assert list(run_rom(rom, timeout=30).lines) == long_line_expected()
    program = compile_and_link(host, [PROGRAMS / "long_line_probe.c"], [], tmp_path / "long")
    assert list(run_host(program, timeout=30).lines) == long_line_expected()


@pytest.mark.emulator
def test_cpu_exception_is_reported(bare, boot_stub, mupen64plus, tmp_path):
    rom = build_rom(bare, boot_stub, tmp_path, "crash_probe")
    with pytest.raises(UserError, match="DNN64-FAIL exception code 8 .*epc 80"):
        run_rom(rom, timeout=30, emumode=0)  # the interpreter reports the true cause
    with pytest.raises(UserError, match="DNN64-FAIL exception code"):
        run_rom(rom, timeout=30)


@pytest.mark.emulator
def test_time_limit_is_a_clear_error(bare, boot_stub, mupen64plus, tmp_path):
    rom = build_rom(bare, boot_stub, tmp_path, "spin_probe")
    with pytest.raises(UserError, match=r"no DNN64-DONE line within the 3 s time limit") as err:
        run_rom(rom, timeout=3)
    assert "spinning" in str(err.value)  # the output so far is shown


def test_missing_emulator_names_the_debian_package(tmp_path):
    rom = tmp_path / "x.z64"
    rom.write_bytes(b"\0" * 16)
    env = {"PATH": str(tmp_path), "DNN64_MUPEN64PLUS_BINDIR": str(tmp_path / "none")}
    with pytest.raises(UserError) as err:
        run_rom(rom, env=env)
    assert "mupen64plus-ui-console" in str(err.value)


def test_host_program_failure_is_reported(host, tmp_path):
    program = compile_and_link(host, [PROGRAMS / "asset_probe.c"], [], tmp_path / "probe")
    with pytest.raises(UserError, match="DNN64-FAIL dnn64_asset_read: no asset file"):
        run_host(program, None, timeout=30, env={"PATH": "/usr/bin:/bin"})
