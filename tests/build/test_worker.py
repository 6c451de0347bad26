"""The persistent stage worker: the same outputs as fresh processes, the same failure
semantics, and it ends with the build."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from dnn64build.graph.generate import CLIENT  # what ninja runs for every action
from dnn64build.graph.runner import ninja_binary
from dnn64build.worker.launch import WorkerHandle, stage_worker
from tests.build.conftest import Workspace, tiny_mlp


def _client(argv: list[str], cwd: Path, handle: WorkerHandle | None) -> subprocess.CompletedProcess:
    """Run the client as ninja would: with the build's worker environment and lifeline."""
    return subprocess.run([sys.executable, "-S", "-E", str(CLIENT), *argv], cwd=cwd,
                          env={**os.environ, **(handle.env if handle else {})},
                          pass_fds=handle.pass_fds if handle else (), capture_output=True,
                          text=True)


def test_worker_outputs_equal_those_of_ninja_run_by_hand(
    two_models: Workspace, tmp_path: Path
) -> None:
    by_hand = Workspace(tmp_path / "by_hand")
    shutil.copytree(two_models.root, by_hand.root)
    two_models.build("//...")  # through the worker
    by_hand.run("query", "//...")  # writes the graph only
    env = {k: v for k, v in os.environ.items() if k != "DNN64_WORKER"}
    subprocess.run([ninja_binary()], cwd=by_hand.root / "dnn64-out", check=True, env=env,
                   capture_output=True)  # no worker: every action runs in its own process
    assert by_hand.outputs() == two_models.outputs()


def test_errors_fail_only_their_own_request(tmp_path: Path) -> None:
    import onnx

    onnx.save(tiny_mlp(seed=3), tmp_path / "good.onnx")
    (tmp_path / "bad.onnx").write_bytes(b"not onnx")
    (tmp_path / "config.json").write_text('{"label": "//m:m"}')
    (tmp_path / "broken.json").write_text("{")  # a damaged config: a clean error
    request = ["stage", "import", "--config", "config.json", "--in", "onnx={}",
               "--depfile", "{}/import.d",
               "--out", "graph={}/graph.json", "--out", "weights={}/weights.npz"]

    def ask(handle: WorkerHandle | None, onnx_file: str, out: str, config: str = "config.json",
            drop_weights: bool = False):
        argv = [a.format(out) if "{}/" in a else a.format(onnx_file) for a in request]
        argv[argv.index("config.json")] = config
        if drop_weights:  # the stage then writes an output it was not given: a bug
            argv = argv[:-2]
        return _client(argv, tmp_path, handle)

    with stage_worker() as handle:
        user_error = ask(handle, "bad.onnx", "w1")
        damaged = ask(handle, "good.onnx", "w2", config="broken.json")
        crash = ask(handle, "good.onnx", "w4", drop_weights=True)
        good = ask(handle, "good.onnx", "w3")
        assert Path(handle.env["DNN64_WORKER"]).is_socket()  # a worker answered them
    fresh = ask(None, "good.onnx", "fresh")  # no worker: a fresh interpreter
    assert user_error.returncode == 1
    assert len(user_error.stderr.strip().splitlines()) == 1
    assert "ERROR: //m:m: not a readable ONNX model" in user_error.stderr
    assert damaged.returncode == 1 and "Traceback" not in damaged.stderr
    assert "broken.json is damaged" in damaged.stderr
    assert crash.returncode == 70 and "Traceback" in crash.stderr
    assert "internal error in the import stage" in crash.stderr
    assert good.returncode == 0 and fresh.returncode == 0, good.stderr + fresh.stderr
    for name in ("graph.json", "weights.npz"):
        assert (tmp_path / "w3" / name).read_bytes() == (tmp_path / "fresh" / name).read_bytes()
    assert not (tmp_path / "w1").exists() and not (tmp_path / "w2").exists()


def _workers(socket_path: str) -> list[int]:
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and socket_path.encode() in (proc / "cmdline").read_bytes():
                pids.append(int(proc.name))
        except OSError:
            pass
    return pids


def test_the_worker_ends_when_its_build_is_killed(tmp_path: Path) -> None:
    # The "build": provides a worker, asks it one thing (which starts it), then hangs.
    script = (
        "import sys, time\n"
        "from dnn64build.worker.launch import WorkerHandle, stage_worker\n"
        "from tests.build.test_worker import _client\n"
        "with stage_worker() as handle:\n"
        "    _client(['stage', 'import', '--config', 'nothing.json'], '.', handle)\n"
        "    print(handle.env['DNN64_WORKER'], flush=True)\n"
        "    time.sleep(60)\n"
    )
    build = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             cwd=Path(__file__).resolve().parents[2])
    assert build.stdout
    socket_path = build.stdout.readline().strip()
    deadline = time.monotonic() + 30
    while not _workers(socket_path) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _workers(socket_path), "the worker did not start"
    build.send_signal(signal.SIGKILL)  # no cleanup code runs in the build
    build.wait()
    deadline = time.monotonic() + 30
    while _workers(socket_path) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _workers(socket_path) == []
