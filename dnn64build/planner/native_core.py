"""The exact search's compiled core (exact_core.c), built for the host on first use.

The host C compiler (third_party/host-cc.yaml) builds it into a shared library
in the per-user cache directory, named by the hash of the source, the compiler
and its flags: an edited source or another compiler builds anew, and processes
that race to build it each write a file of their own and rename it into place.
Without a compiler (or when the build fails) the exact search runs in Python,
which is the reference implementation; that is said once per process.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from dnn64build.errors import UserError
from dnn64build.toolchains.tools import find_tool

SOURCE = Path(__file__).with_name("exact_core.c")
FLAGS = ("-std=c99", "-O2", "-fPIC", "-shared")
# Set to "python" to run the Python search (benchmarks, debugging).
ENGINE_ENV = "DNN64_EXACT_ENGINE"

_i64 = ctypes.c_int64
_p = ctypes.c_void_p
SIGNATURES = {  # name: (result, argument types)
    "exact_new": (_p, [ctypes.c_int, _p, _p, _p, _p, _p, ctypes.c_char_p, _i64, _i64,
                       ctypes.c_double]),
    "exact_free": (None, [_p]),
    "exact_counters": (ctypes.POINTER(_i64), [_p]),
    "exact_set_order": (ctypes.c_int, [_p, _p, _p, ctypes.c_char_p]),
    "exact_reset": (None, [_p]),
    "exact_forget": (None, [_p]),
    "exact_use_memo": (ctypes.c_int, [_p, ctypes.c_int]),
    "exact_solve": (ctypes.c_int, [_p, _i64, _p]),
}


def cache_dir() -> Path:
    """$XDG_CACHE_HOME/dnn64build (~/.cache/dnn64build by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "dnn64build"


def _note(message: str) -> None:
    print(f"dnn64build: note: {message}; the exact allocator runs its Python search "
          "(slower, same plans)", file=sys.stderr)


def _build(cc: str, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=out.stem, suffix=".tmp", dir=out.parent)
    os.close(fd)
    try:
        subprocess.run([cc, *FLAGS, "-o", tmp, str(SOURCE)], check=True,
                       capture_output=True, text=True)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


@functools.cache
def load() -> ctypes.CDLL | None:
    """The compiled core, built if needed; None (and a note, once) when it cannot be."""
    if os.environ.get(ENGINE_ENV) == "python":
        return None
    try:
        cc = find_tool("host-cc")["cc"]
    except UserError as e:
        _note(f"no C compiler for its compiled core ({e.message})")
        return None
    try:
        source = SOURCE.read_bytes()
    except OSError as e:
        _note(f"its compiled core's source is missing ({e})")
        return None
    key = hashlib.sha256(source + "\0".join((cc, *FLAGS)).encode()).hexdigest()
    try:  # Path.home() raises RuntimeError when there is no home directory
        path = cache_dir() / f"exact_core-{key[:16]}.so"
        if not path.exists():
            _build(cc, path)
    except (OSError, RuntimeError, subprocess.CalledProcessError) as e:
        detail = (getattr(e, "stderr", "") or "").strip().splitlines() or [str(e)]
        _note(f"building its compiled core failed ({detail[-1]})")
        return None
    lib = ctypes.CDLL(str(path))
    for name, (result, args) in SIGNATURES.items():
        func = getattr(lib, name)
        func.restype, func.argtypes = result, args
    return lib
