"""The stage worker (``python -m dnn64build.worker``, started by launch.py).

Binds SOCKET first (clients that connect early wait in the backlog), then imports every
stage's code once, then serves: for each request it forks a child that takes over the
client's stdin/stdout/stderr, runs the action exactly as ``python -m dnn64build.stages``
would, and replies with its exit status. A child per request keeps requests apart (a
crash or a leaked global in one cannot reach the next) and lets ninja's parallel actions
run in parallel. The worker exits when LIFELINE_FD reaches end of file: the build that
started it holds the other end, so it ends with the build, however the build ends.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import selectors
import shutil
import signal
import socket
import struct
import sys
import traceback

from dnn64build.remote_cache.cached import CacheSession
from dnn64build.stages.registry import STAGES
from dnn64build.worker.client import FAILED_SUFFIX, STATUS, decode_request
from dnn64build.worker.execute import execute

_LENGTH = struct.Struct("!I")
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def preload() -> None:
    """Import what the stages import, and do their one-time initialisations, so that every
    forked child starts with them done."""
    for spec in STAGES.values():
        importlib.import_module(spec.module)
    importlib.import_module("dnn64build.quant")  # imported lazily by the quantize stage
    # zipfile decodes the member names of numpy's .npz files as cp437.
    importlib.import_module("encodings.cp437")
    _warm_onnx_checker()


def _warm_onnx_checker() -> None:
    """onnx's checker builds its operator tables on its first use (about 12 ms, more than
    the import stage's own work on a small model): build them here, once."""
    import onnx
    from onnx import helper

    def value(name: str) -> onnx.ValueInfoProto:
        return helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, [1])

    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "warm-up",
                              [value("x")], [value("y")])
    onnx.checker.check_model(helper.make_model(graph))


def serve(path: str, lifeline: int, cache: CacheSession | None = None) -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(path)
    except OSError as e:
        # One note in the build's output, and the actions, told by the marker, run in
        # processes of their own instead of waiting for a worker that will not come.
        print(f"note: the stage worker could not start (socket {path}: {e.strerror}); "
              "each action ran in a process of its own", file=sys.stderr)
        open(path + FAILED_SUFFIX, "w").close()
        return
    listener.listen(128)
    preload()
    if cache:
        import http.client  # noqa: F401  (loaded once, not in every child)

        from dnn64build.remote_cache import action_result, keys

        keys.prepare()
        action_result.prepare()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(lifeline, selectors.EVENT_READ)
    while True:
        for key, _ in selector.select():
            if key.fileobj == lifeline:  # the build ended: so do we, and our files
                shutil.rmtree(os.path.dirname(path), ignore_errors=True)
                _end_children()
                return
            conn, _ = listener.accept()
            _dispatch(conn, listener, lifeline, cache)


def _end_children() -> None:
    """Kill whatever of our requests still runs, and what they started: the build that asked
    is gone (a killed build; after a normal end nothing runs). The worker leads a process
    group of its own (client.py starts it in a new session), which this kills, itself too."""
    if os.getpgrp() == os.getpid():
        os.killpg(0, signal.SIGKILL)


def _die_with(parent: int) -> None:
    """Have the kernel kill this child when the worker dies, however it dies (Linux's
    PR_SET_PDEATHSIG; elsewhere the lifeline's end is the only guard)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the worker died before prctl took effect
        os._exit(1)


def _dispatch(conn: socket.socket, listener: socket.socket, lifeline: int,
              cache: CacheSession | None) -> None:
    try:
        request, fds = _receive(conn)
    except (OSError, ValueError):
        conn.close()
        return
    parent = os.getpid()
    if os.fork() == 0:  # the child: never returns
        status = 1
        try:
            _die_with(parent)
            conn.sendall(STATUS.pack(os.getpid()))
            listener.close()
            os.close(lifeline)
            status = _run_child(request, fds, cache)
        finally:
            try:
                conn.sendall(STATUS.pack(status))
            finally:
                os._exit(status)
    conn.close()
    for fd in fds:
        os.close(fd)


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
    if len(data) < _LENGTH.size:
        raise ValueError("short request")
    (length,) = _LENGTH.unpack_from(data)
    while len(data) < _LENGTH.size + length:
        chunk = conn.recv(1 << 16)
        if not chunk:
            raise ValueError("truncated request")
        data += chunk
    cwd, argv = decode_request(data[_LENGTH.size:])
    return {"cwd": cwd, "argv": argv}, fds


def _run_child(request: dict, fds: list[int], cache: CacheSession | None) -> int:
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # subprocess.run must reap its own
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    try:
        return execute(request["argv"], cache)
    except SystemExit as e:  # as a fresh interpreter would end
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
            return 1
        return e.code or 0
    except KeyboardInterrupt:  # passed on by the client: ninja is stopping
        return 130
    except BaseException:  # a bug in a stage: report it as a crash of this action only
        traceback.print_exc()
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
