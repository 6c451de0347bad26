"""ares, the accurate platform: a bare ROM with a signed IPL3 boots there and equals the
host build; ares refuses the unsigned boot stub, which keeps running in mupen64plus. Those
need ares and a signed IPL3 file (the opt-in `libdragon` tier: `pytest -m libdragon`,
docs/testing.md); how the runner treats ares's output and a missing ares is checked with
stand-ins."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import numpy as np
import pytest

from dnn64build.emulator.ares import run_rom_ares
from dnn64build.errors import UserError
from tests.build.conftest import Workspace
from tests.emulator.rom_workspace import run_outputs

REPO = Path(__file__).resolve().parents[2]
SIGNED_TARGET = """
  - rule: n64_model
    name: digits_signed
    src: digits.onnx
    quantize: {mode: int8, calibration: digits_calib.npz}
    ipl3: ipl3.z64
"""


@pytest.fixture(scope="module")
def digits_ws(tmp_path_factory: pytest.TempPathFactory, signed_ipl3: Path) -> Workspace:
    """The repository's models (toolchain: bare), plus //models:digits_signed: digits int8
    booted by the signed IPL3; three random input samples."""
    ws = Workspace(tmp_path_factory.mktemp("ares") / "ws")
    shutil.copytree(REPO / "models", ws.root / "models")
    # bare, also where $N64_INST is set (toolchain: auto would then be libdragon).
    build = (REPO / "BUILD.yaml").read_text()
    assert "toolchain: auto" in build
    ws.write("BUILD.yaml", build.replace("toolchain: auto", "toolchain: bare", 1))
    shutil.copy(signed_ipl3, ws.root / "models" / "ipl3.z64")
    with open(ws.root / "models" / "BUILD.yaml", "a") as build:
        build.write(SIGNED_TARGET)
    rng = np.random.default_rng(7)
    np.savez(ws.root / "in.npz", input=rng.uniform(0, 16, (3, 1, 64)).astype(np.float32))
    return ws


def _assert_equal_bits(rom: dict[str, np.ndarray], host: dict[str, np.ndarray]) -> None:
    assert rom.keys() == host.keys() and rom
    for name in rom:
        assert rom[name].shape[0] == 3
        assert rom[name].tobytes() == host[name].tobytes(), name


def test_a_bare_rom_with_a_signed_ipl3_boots_in_ares_and_equals_the_host(
        bare, host, ares, signed_ipl3: Path, digits_ws: Workspace) -> None:
    rom_out, stdout = run_outputs(digits_ws, "//models:digits_signed", "ares")
    host_out, _ = run_outputs(digits_ws, "//models:digits_signed", "host")
    _assert_equal_bits(rom_out, host_out)
    assert "vs the reference executor: match" in stdout
    # The layout ipl3_compat expects (libdragon's boot/README.md): its IPL3 at 0x40..0x1000
    # and, in header word 0x10, how much of the program at 0x1000 to load; nothing the
    # program needs lies past that.
    rom = (digits_ws.root / "dnn64-out/bin/models/digits_signed/digits_signed.z64").read_bytes()
    assert rom[0x40:0x1000] == signed_ipl3.read_bytes()[0x40:0x1000]
    (size,) = struct.unpack_from(">I", rom, 0x10)
    assert 0 < size < 0x100000 and size % 8 == 0
    assert not any(rom[0x1000 + size : 0x101000])


def test_the_unsigned_stub_rom_still_runs_in_mupen64plus(
        bare, host, mupen64plus, digits_ws: Workspace) -> None:
    rom_out, _ = run_outputs(digits_ws, "//models:digits", "emulator")
    host_out, _ = run_outputs(digits_ws, "//models:digits", "host")
    _assert_equal_bits(rom_out, host_out)


def test_ares_refuses_the_unsigned_stub_rom(bare, ares, digits_ws: Workspace) -> None:
    proc = digits_ws.run("run", "//models:digits", "--platform", "ares", "--timeout", "120",
                         check=False)
    assert proc.returncode != 0
    assert "ares refused the ROM's IPL3 (invalid IPL2 checksum" in proc.stderr


def _stand_ins(directory: Path, ares_script: str) -> Path:
    """``directory`` holding an `xvfb-run` that drops its ``-a -f FILE`` and runs the rest,
    and ``ares_script`` as `ares`."""
    directory.mkdir()
    for name, text in (("xvfb-run", 'shift 3\nexec "$@"\n'), ("ares", ares_script)):
        (directory / name).write_text("#!/bin/sh\n" + text)
        (directory / name).chmod(0o755)
    return directory


def test_ares_log_lines_are_told_from_the_program_and_the_rom_path_is_absolute(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bindir = _stand_ins(tmp_path / "bin", f"""\
printf '%s\\n' "$@" > {tmp_path}/argv
printf '\033[96m[unusual] \033[0m[PIF::main] a message of ares\n'
echo 'OUT program line'
echo
echo 'DNN64-DONE'
exec sleep 60
""")
    monkeypatch.chdir(tmp_path)
    Path("x.z64").write_bytes(bytes(16))
    result = run_rom_ares(Path("x.z64"), timeout=20,
                          env={"PATH": "/usr/bin:/bin", "DNN64_ARES_BINDIR": str(bindir)})
    assert result.lines == ("OUT program line",)
    assert result.log[0].endswith("[PIF::main] a message of ares")
    argv = (tmp_path / "argv").read_text().splitlines()
    assert argv[-1] == str(tmp_path / "x.z64")
    assert argv[:2] == ["--system", "Nintendo 64"]


def test_an_ipl3_ares_refuses_ends_the_run_at_once(tmp_path: Path) -> None:
    bindir = _stand_ins(tmp_path / "bin", """\
printf '\033[96m[unusual] \033[0m[PIF::main] invalid IPL2 checksum: CIC-NUS-6102:a536 != cpu:4b6c\n'
exec sleep 60
""")
    rom = tmp_path / "x.z64"
    rom.write_bytes(bytes(16))
    with pytest.raises(UserError, match="ares refused the ROM's IPL3 .*CIC-NUS-6102") as err:
        run_rom_ares(rom, timeout=30,
                     env={"PATH": "/usr/bin:/bin", "DNN64_ARES_BINDIR": str(bindir)})
    assert "signed ipl3:" in str(err.value)


def test_missing_ares_says_how_to_build_it(tmp_path: Path) -> None:
    rom = tmp_path / "x.z64"
    rom.write_bytes(bytes(16))
    with pytest.raises(UserError) as err:
        run_rom_ares(rom, env={"PATH": str(tmp_path), "DNN64_ARES_BINDIR": str(tmp_path)})
    assert "tools/setup-ares.sh" in str(err.value)
