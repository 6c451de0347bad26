"""The platform layer end to end: asset_probe.c on bare (mupen64plus) and host.

Every expected line is computed here, independently, from the same bytes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dnn64build.emulator import RunResult, run_host, run_rom
from dnn64build.rom import Asset, build_asset_image, pack_rom
from tests.compile_program import compile_and_link
from tests.emulator.hex_dump import parse_hex_dump

PROBE = Path(__file__).parent / "programs" / "asset_probe.c"
FNV_OFFSET = 2166136261
FNV_PRIME = 16777619


def fnv1a(data: bytes) -> int:
    h = FNV_OFFSET
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & 0xFFFFFFFF
    return h


def f32_hex(value: np.float32) -> str:
    return f"{int(np.float32(value).view(np.uint32)):08x}"


@pytest.fixture(scope="module")
def blobs() -> tuple[bytes, bytes]:
    rng = np.random.default_rng(20261122)
    blob = rng.integers(0, 256, 64 * 1024, dtype=np.uint8).tobytes()
    tail = rng.integers(0, 256, 1001, dtype=np.uint8).tobytes()  # odd size
    return blob, tail


@pytest.fixture(scope="module")
def expected(blobs: tuple[bytes, bytes]) -> list[str]:
    blob, tail = blobs
    x = np.frombuffer(blob, dtype=np.int8).astype(np.float32) * np.float32(0.03125)
    k = (np.arange(len(blob)) % 7).astype(np.float32)
    term = (x * k) - (np.float32(0.5) * x)  # each op rounded to float32, as in C
    total = np.add.accumulate(x, dtype=np.float32)[-1]  # sequential float32 sums
    dot = np.add.accumulate(term, dtype=np.float32)[-1]
    big = (len(blob) * 1000000007 // 3) & (2**64 - 1)
    return [
        f"sizes {len(blob)} {len(tail)}",
        f"blob-fnv {fnv1a(blob):08x}",
        f"floats {f32_hex(total)} {f32_hex(dot)} {f32_hex(total / np.float32(3.0))}",
        f"tail-fnv {fnv1a(tail[1:]):08x}",
        f"ints -123456 -2147483648 4294967295 {2**64 - 1} {big}",
    ]


def check_probe(result: RunResult, blobs: tuple[bytes, bytes], expected: list[str]) -> None:
    lines = [line for line in result.lines if not line.startswith(("i8 ", "f32 ", "ticks "))]
    assert lines == expected
    first = np.frombuffer(blobs[0][:38], dtype=np.int8)
    np.testing.assert_array_equal(parse_hex_dump(result.lines, "i8", "int8", 38), first)
    # The partial last word is padded with zero bytes.
    padded = parse_hex_dump(result.lines, "i8", "int8")
    assert len(padded) == 40 and list(padded[38:]) == [0, 0]
    values = parse_hex_dump(result.lines, "f32", "float32")
    want = first[:10].astype(np.float32) / np.float32(7.0)
    np.testing.assert_array_equal(values.view(np.uint32), want.view(np.uint32))
    assert int(result.value("ticks")) > 0


@pytest.fixture(scope="module")
def asset_image(blobs: tuple[bytes, bytes]) -> bytes:
    blob, tail = blobs
    return build_asset_image([Asset("blob", blob), Asset("tail", tail)]).data


@pytest.mark.emulator
def test_probe_on_bare_in_mupen64plus(
    bare, boot_stub, mupen64plus, asset_image, blobs, expected, tmp_path
):
    program = compile_and_link(bare, [PROBE], [], tmp_path / "probe.bin")
    rom = tmp_path / "probe.z64"
    rom.write_bytes(pack_rom(program.read_bytes(), asset_image, ipl3=boot_stub))
    result = run_rom(rom, timeout=30)
    check_probe(result, blobs, expected)


def test_probe_on_host_with_asset_image(host, asset_image, blobs, expected, tmp_path):
    program = compile_and_link(host, [PROBE], [], tmp_path / "probe")
    assets = tmp_path / "assets.bin"
    assets.write_bytes(asset_image)
    check_probe(run_host(program, assets, timeout=30), blobs, expected)


def test_probe_on_host_reads_a_whole_rom(host, asset_image, blobs, expected, tmp_path):
    program = compile_and_link(host, [PROBE], [], tmp_path / "probe")
    rom = tmp_path / "probe.z64"
    rom.write_bytes(pack_rom(b"\0" * 64, asset_image, ipl3=bytes(0xFC0)))
    check_probe(run_host(program, rom, timeout=30), blobs, expected)
