"""cen64, the cycle-accurate platform: our PIF ROM boots dnn64's own ROMs, a model's
outputs there equal the host build's and the reference executor's, and the runner's
failures (CPU exception, time limit) are clear errors that leave no process behind."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from dnn64build.emulator.cen64 import run_rom_cen64
from dnn64build.emulator.pif import pif_rom
from dnn64build.errors import UserError
from tests.build.conftest import Workspace
from tests.emulator.rom_workspace import run_outputs
from tests.emulator.test_bare_runtime import build_rom

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.cen64

# What IPL2 does for a bare ROM (N64-NOTES.md, "cen64"), as binutils disassembles it.
PIF_LISTING = """\
lui t0,0xb000
ori t0,t0,0x40
lui t1,0xa400
ori t1,t1,0x40
lui t2,0xb000
ori t2,t2,0x1000
lw t3,0(t0)
addiu t0,t0,4
sw t3,0(t1)
bne t0,t2,0x18
addiu t1,t1,4
lui sp,0xa400
ori sp,sp,0x1ff0
li s3,0
li s4,1
li s5,0
li s6,63
li s7,0
lui t0,0xa400
ori t0,t0,0x40
jr t0
nop"""


def test_the_pif_rom_disassembles_to_the_ipl2_recipe(bare, tmp_path: Path) -> None:
    image = pif_rom()
    assert len(image) == 2048 and not image[22 * 4 :].strip(b"\0")
    (tmp_path / "pif.bin").write_bytes(image)
    listing = subprocess.run(
        [bare.objdump, "-b", "binary", "-m", "mips:4300", "-EB", "-D",
         "--stop-address=0x58", str(tmp_path / "pif.bin")],
        capture_output=True, text=True, check=True).stdout
    found = re.findall(r"^\s+[0-9a-f]+:\t[0-9a-f]{8} \t(.*)$", listing, re.MULTILINE)
    assert [" ".join(f.split()) for f in found] == PIF_LISTING.splitlines()


@pytest.fixture(scope="module")
def models_ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """A copy of the repository's models (small_cnn, digits) with two random samples."""
    ws = Workspace(tmp_path_factory.mktemp("cen64") / "ws")
    shutil.copytree(REPO / "models", ws.root / "models")
    shutil.copy(REPO / "BUILD.yaml", ws.root / "BUILD.yaml")
    rng = np.random.default_rng(5)
    np.savez(ws.root / "in.npz", input=rng.standard_normal((2, 1, 1, 16, 16)).astype(np.float32))
    return ws


@pytest.mark.parametrize("target", ["//models:small_cnn", "//models:small_cnn_fp32"])
def test_a_model_in_cen64_equals_the_host_build_and_the_reference(
        bare, cen64, models_ws: Workspace, target: str) -> None:
    rom, stdout = run_outputs(models_ws, target, "cen64")
    host, _ = run_outputs(models_ws, target, "host")
    assert rom.keys() == host.keys() and rom
    for name in rom:
        assert rom[name].shape[0] == 2
        if target.endswith("fp32"):
            assert np.abs(rom[name] - host[name]).max() <= 1e-5 * np.abs(host[name]).max()
        else:
            assert rom[name].tobytes() == host[name].tobytes(), name
    assert "vs the reference executor: match" in stdout and "MISMATCH" not in stdout
    cycles, ms = re.search(r"(\d+) CPU cycles \(CP0 Count x 2\) per inference "
                           r"\(([\d.]+) ms at 93.75 MHz\)", stdout).groups()
    assert abs(int(cycles) / 93.75e3 - float(ms)) < 1e-3
    # small_cnn has 0.24 M multiply-accumulates; no VR4300 loop does one a cycle.
    assert int(cycles) > 240_000


def test_cen64_run_reports_the_cartridge_aware_time(bare, cen64, models_ws: Workspace
                                                   ) -> None:
    """At 1 kB/s every transfer outlasts the compute beside it, so the cartridge-aware
    time is the bytes at 1 kB/s plus at most the whole run's compute."""
    out = models_ws.run("run", "//models:small_cnn", "--platform", "cen64", "--input",
                        "in.npz", "--cartridge-mbps", "0.001").stdout
    run_cycles = int(re.search(r"(\d+) CPU cycles \(CP0 Count x 2\) per inference", out)[1])
    found = re.search(r"cartridge: (\d+) bytes per inference \((\d+) waited for, (\d+) "
                      r"prefetched in (\d+) tiles\); (\d+) compute cycles \(reads excluded\); "
                      r"cartridge-aware ([\d.]+) ms at 0.001 MB/s", out)
    assert found, out
    total, waited, prefetched, tiles, compute, ms = found.groups()
    assert int(total) == int(waited) + int(prefetched) > 0 and int(tiles) >= 1
    assert 0 < int(compute) < run_cycles
    bytes_ms = int(total) / 1e3 * 1e3  # ms at 1,000 bytes a second
    assert bytes_ms <= float(ms) <= bytes_ms + int(compute) / 93.75e3 + 1e-3


def _processes_mentioning(text: str) -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if text.encode() in cmdline:
            found.append(cmdline.decode(errors="replace"))
    return found


def test_a_cpu_exception_is_reported(bare, boot_stub, cen64, tmp_path: Path) -> None:
    rom = build_rom(bare, boot_stub, tmp_path, "crash_probe")
    with pytest.raises(UserError, match="DNN64-FAIL exception code 8 "):
        run_rom_cen64(rom, timeout=30)


def test_the_time_limit_stops_cen64_and_its_x_server(bare, boot_stub, cen64,
                                                      tmp_path: Path) -> None:
    rom = build_rom(bare, boot_stub, tmp_path, "spin_probe")
    with pytest.raises(UserError, match=r"no DNN64-DONE line within the 4 s time limit") as err:
        run_rom_cen64(rom, timeout=4)
    assert "spinning" in str(err.value)
    assert _processes_mentioning(str(rom)) == []


def test_missing_cen64_names_the_debian_packages(tmp_path: Path) -> None:
    rom = tmp_path / "x.z64"
    rom.write_bytes(b"\0" * 16)
    with pytest.raises(UserError) as err:
        run_rom_cen64(rom, env={"PATH": str(tmp_path), "DNN64_CEN64_BINDIR": str(tmp_path)})
    assert "apt-get install cen64 xvfb xauth" in str(err.value)


def test_digits_test_set_in_cen64_matches_the_host(bare, cen64, models_ws: Workspace) -> None:
    lines = {}
    for platform in ("cen64", "host"):
        out = models_ws.run("test", "//models:digits", "--platform", platform).stdout
        (lines[platform],) = [x for x in out.splitlines() if x.startswith(("PASSED", "FAILED"))]
        assert lines[platform].startswith("PASSED") and "bit-exact" in lines[platform]
    assert (lines["cen64"].rsplit("top-1 accuracy ", 1)[1]
            == lines["host"].rsplit("top-1 accuracy ", 1)[1])
    assert re.search(r"; \d+ CPU cycles \(CP0 Count x 2\) per inference", lines["cen64"])
