"""What ninja runs for every action: ``python -S -E client.py stage STAGE ARGS...`` or
``... client.py command --out PATH ... -- ARGV...``.

Kept to the standard library and started with ``-S -E`` so it costs a few
milliseconds. With ``$DNN64_WORKER`` naming a live worker socket it sends the
request there, together with its stdin/stdout/stderr (so the action's messages
reach ninja as if it ran here), and exits with the status the worker returns.
Without one (``ninja`` run by hand, or the worker gone) it runs the request
itself: a command directly, a stage in a fresh ``python -m dnn64build.stages``.

A command writes each output ``PATH`` as ``PATH.tmp``; only a changed result
replaces ``PATH``, so ``restat = 1`` stops the rebuild at an unchanged object.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import time

WORKER_ENV = "DNN64_WORKER"
STATUS = struct.Struct("!i")  # the worker's reply: the action's exit status
WORKER_LOST = 70  # status when the worker vanished mid-request
CONNECT_SECONDS = 5.0


def command_outputs(argv: list[str]) -> tuple[list[str], list[str]]:
    """``--out PATH ... [--read PATH | --toolchain ID]... -- ARGV`` -> (outputs, argv)."""
    split = argv.index("--")
    flags, command = argv[:split], argv[split + 1:]
    return [flags[i + 1] for i in range(0, len(flags), 2) if flags[i] == "--out"], command


def run_command(outputs: list[str], argv: list[str]) -> int:
    """Run one toolchain command that writes ``OUT.tmp`` for each output; move each result
    into place unless identical to what is there."""
    for out in outputs:
        _remove(out + ".tmp")  # `ar` appends to a stale archive
        os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    status = subprocess.run(argv, check=False).returncode
    for out in outputs:
        tmp = out + ".tmp"
        if status != 0 or _same_bytes(tmp, out):
            _remove(tmp)
        else:
            os.replace(tmp, out)
    return status


def _same_bytes(a: str, b: str) -> bool:
    try:
        if os.path.getsize(a) != os.path.getsize(b):
            return False
        with open(a, "rb") as fa, open(b, "rb") as fb:
            return fa.read() == fb.read()
    except OSError:
        return False


def _remove(path: str) -> None:
    if os.path.lexists(path):
        os.unlink(path)


def _connect(path: str) -> socket.socket | None:
    """A connection to the worker; the build starts it as ninja starts, so give it a moment
    to bind its socket."""
    deadline = time.monotonic() + CONNECT_SECONDS
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
            return sock
        except OSError:
            sock.close()
            if time.monotonic() > deadline or not os.path.isdir(os.path.dirname(path)):
                return None
            time.sleep(0.005)


def ask_worker(path: str, argv: list[str]) -> int | None:
    """Hand ``argv`` to the worker at ``path``; None if there is no worker to ask."""
    sock = _connect(path)
    if sock is None:
        return None
    with sock:
        request = json.dumps({"argv": argv, "cwd": os.getcwd()}).encode()
        socket.send_fds(sock, [struct.pack("!I", len(request)) + request], [0, 1, 2])
        reply = b""
        while len(reply) < STATUS.size:
            chunk = sock.recv(STATUS.size - len(reply))
            if not chunk:
                print("ERROR: the dnn64build worker ended during this action", file=sys.stderr)
                return WORKER_LOST
            reply += chunk
    return STATUS.unpack(reply)[0]


def run_here(argv: list[str]) -> int:
    if argv[0] == "command":
        return run_command(*command_outputs(argv[1:]))
    # A fresh interpreter with the user's environment (this one ignored it: -S -E).
    os.execv(sys.executable, [sys.executable, "-m", "dnn64build.stages", *argv[1:]])
    raise AssertionError("unreachable")


def main(argv: list[str]) -> int:
    worker = os.environ.get(WORKER_ENV)
    status = ask_worker(worker, argv) if worker else None
    return run_here(argv) if status is None else status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
