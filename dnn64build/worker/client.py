"""What ninja runs for every action (through action.py): ``python -S -E action.py stage
STAGE ARGS...`` or ``... action.py command --out PATH ... -- ARGV...``.

Kept to the standard library and started with ``-S -E`` so it costs a few
milliseconds. It imports only builtin modules on the way of an action: one ``import
subprocess``, ``socket`` or ``signal`` (each pulls in ``enum``, ``re`` or both) costs
more than the rest of the client, and the client runs once per action.

With ``$DNN64_WORKER`` naming a live worker socket it sends a stage request there (and
a command too when the worker has a remote cache to ask), together with its
stdin/stdout/stderr (so the action's messages reach ninja as if it ran here), and exits
with the status the worker returns. Otherwise (``ninja`` run by hand, or the worker
gone) it runs the request itself: a command directly, a stage in a fresh ``python -m
dnn64build.stages``.

A command writes each output ``PATH`` as ``PATH.tmp``; only a changed result
replaces ``PATH``, so ``restat = 1`` stops the rebuild at an unchanged object.
"""

from __future__ import annotations

import _signal  # signal and socket without their enum wrappers (see above)
import _socket
import os
import struct
import sys
import time

TYPE_CHECKING = False  # typing itself is not imported on an action's way
if TYPE_CHECKING:
    import subprocess

WORKER_ENV = "DNN64_WORKER"
CACHE_ENV = "DNN64_WORKER_CACHES"  # set when the worker uses a remote cache
SPAWN_ENV = "DNN64_WORKER_SPAWN"  # lifeline fd, log file, worker options: one per line
# "TOKEN:FILE": the build this action belongs to wrote TOKEN into FILE as it started
GENERATION_ENV = "DNN64_GENERATION"
STATUS = struct.Struct("!i")  # the worker's replies: its child's pid, then the exit status
WORKER_LOST = 70  # status when the worker vanished mid-request
SOCKET_NAME = "socket"  # the worker's socket, in the build's worker directory
FAILED_SUFFIX = ".failed"  # beside the socket: the worker could not start
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
    status = _spawn_and_wait(argv)
    if status == 0 and superseded():
        print(SUPERSEDED, file=sys.stderr)
        status = 1
    for out in outputs:
        tmp = out + ".tmp"
        if status != 0 or _same_bytes(tmp, out):
            _remove(tmp)
        else:
            os.replace(tmp, out)
    return status


SUPERSEDED = "ERROR: a newer build has started since this action's: its outputs are not written"


def superseded() -> bool:
    """Whether a newer build has started in this action's output base since the build this
    action belongs to (one killed while the action still ran): then its outputs must not
    land over the newer build's. False outside a build (ninja run by hand)."""
    token, _, path = os.environ.get(GENERATION_ENV, "").partition(":")
    if not path:
        return False
    try:
        with open(path) as f:
            return f.read() != token
    except OSError:  # removed by clean: no build of ours is current
        return True


def _spawn_and_wait(argv: list[str]) -> int:
    """``subprocess.run(argv).returncode`` without importing subprocess: the exit status,
    or minus the signal that ended the command."""
    pid = os.posix_spawnp(argv[0], argv, os.environ)
    try:
        _, status = os.waitpid(pid, 0)
    except BaseException:  # interrupted: do not leave the command running
        os.kill(pid, _signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    return os.waitstatus_to_exitcode(status)


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


def _connect(path: str) -> _socket.socket | None:
    """A connection to the worker; the build starts it as ninja starts, so give it a moment
    to bind its socket."""
    deadline = time.monotonic() + CONNECT_SECONDS
    started = None
    while True:
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            sock.connect(path)
            return sock
        except OSError:
            sock.close()
            if started is not None and started.poll() is not None:
                # It died before binding (its log says why): tell the other actions too,
                # rather than have each wait out the deadline.
                open(path + FAILED_SUFFIX, "w").close()
            if (time.monotonic() > deadline or not os.path.isdir(os.path.dirname(path))
                    or os.path.exists(path + FAILED_SUFFIX)):
                return None
            started = started or _start_worker(path)
            time.sleep(0.005)


def _start_worker(path: str) -> subprocess.Popen | None:
    """Start the build's worker unless another action already has (a marker file decides
    which one). It gets the build's lifeline, its own session (ninja must not count it as
    part of this action) and a log file (not this action's output pipe, which ninja reads
    to its end)."""
    spec = os.environ.get(SPAWN_ENV)
    if not spec:
        return None
    try:
        os.close(os.open(path + ".starting", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except OSError:
        return None
    import subprocess

    lifeline, log, *options = spec.split("\n")
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "dnn64build.worker", path, lifeline, *options],
            pass_fds=[int(lifeline)], stdin=subprocess.DEVNULL, stdout=out, stderr=out,
            start_new_session=True,
        )


def encode_request(cwd: str, argv: list[str]) -> bytes:
    """The working directory and the arguments, NUL-separated (no json: it imports re)."""
    return "\0".join([cwd, *argv]).encode("utf-8", "surrogateescape")


def decode_request(data: bytes) -> tuple[str, list[str]]:
    cwd, *argv = data.decode("utf-8", "surrogateescape").split("\0")
    return cwd, argv


def ask_worker(path: str, argv: list[str]) -> int | None:
    """Hand ``argv`` to the worker at ``path``; None if there is no worker to ask."""
    sock = _connect(path)
    if sock is None:
        return None
    try:
        request = encode_request(os.getcwd(), argv)
        # socket.send_fds, spelled out: our stdin, stdout and stderr go with the request.
        sock.sendmsg([struct.pack("!I", len(request)) + request],
                     [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, struct.pack("3i", 0, 1, 2))])
        child = _receive_int(sock)
        if child is None:
            return _lost()
        # Ninja interrupts an action by signalling its process group, which the worker's
        # child is not in: pass the signal on, so the stage cleans up as it would here.
        for sig in (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP):
            _signal.signal(sig, lambda number, _frame: os.kill(child, number))
        status = _receive_int(sock)
    finally:
        sock.close()
    return _lost() if status is None else status


def _receive_int(sock: _socket.socket) -> int | None:
    data = b""
    while len(data) < STATUS.size:
        chunk = sock.recv(STATUS.size - len(data))
        if not chunk:
            return None
        data += chunk
    return STATUS.unpack(data)[0]


def _lost() -> int:
    print("ERROR: the dnn64build worker ended during this action", file=sys.stderr)
    return WORKER_LOST


def run_here(argv: list[str]) -> int:
    if argv[0] == "command":
        return run_command(*command_outputs(argv[1:]))
    # A fresh interpreter with the user's environment (this one ignored it: -S -E).
    os.execv(sys.executable, [sys.executable, "-m", "dnn64build.stages", *argv[1:]])
    raise AssertionError("unreachable")


def main(argv: list[str]) -> int:
    worker = os.environ.get(WORKER_ENV)
    # A command gains nothing from the worker unless the worker has a cache to ask.
    if argv[0] == "command" and not os.environ.get(CACHE_ENV):
        worker = None
    status = ask_worker(worker, argv) if worker else None
    return run_here(argv) if status is None else status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
