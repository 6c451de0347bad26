"""Where ``dnn64build run`` / ``test`` can run a program (no heavy imports: the CLI
parser reads these)."""

HOST = "host"  # the native build (the same name as the host output group)
EMULATOR = "emulator"  # mupen64plus: fast; its CP0 Count counts instructions
CEN64 = "cen64"  # cycle-accurate: CP0 Count x 2 is CPU cycles
ARES = "ares"  # accurate, checks the IPL3's signature: ROMs need a signed `ipl3:`
PLATFORMS = (HOST, EMULATOR, CEN64, ARES)
