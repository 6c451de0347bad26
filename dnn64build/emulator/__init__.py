"""Run built programs: ROMs in mupen64plus, cen64 or ares, host builds natively."""

from dnn64build.emulator.ares import run_rom_ares
from dnn64build.emulator.cen64 import run_rom_cen64
from dnn64build.emulator.host import run_host
from dnn64build.emulator.mupen64plus import emulator_argv, run_rom
from dnn64build.emulator.process import RunResult

__all__ = [
    "RunResult",
    "emulator_argv",
    "run_host",
    "run_rom",
    "run_rom_ares",
    "run_rom_cen64",
]
