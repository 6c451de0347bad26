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

import pytest

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


def test_a_request_still_running_dies_with_its_killed_build(tmp_path: Path) -> None:
    """A stage blocked reading its config (a FIFO no one writes) when the build is
    SIGKILLed: the worker's forked child must end with the worker, not live on to write
    later."""
    os.mkfifo(tmp_path / "fifo.json")
    request = ["stage", "import", "--config", "fifo.json", "--in", "onnx=model.onnx",
               "--depfile", "out/import.d", "--out", "graph=out/graph.json",
               "--out", "weights=out/weights.npz"]
    script = (
        "import os, subprocess, sys, time\n"
        "from dnn64build.graph.generate import CLIENT\n"
        "from dnn64build.worker.launch import stage_worker\n"
        "with stage_worker() as handle:\n"
        f"    subprocess.Popen([sys.executable, '-S', '-E', str(CLIENT), *{request!r}],\n"
        f"                     cwd={str(tmp_path)!r}, env={{**os.environ, **handle.env}},\n"
        "                     pass_fds=handle.pass_fds)\n"
        "    print(handle.env['DNN64_WORKER'], flush=True)\n"
        "    time.sleep(60)\n"
    )
    build = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             cwd=Path(__file__).resolve().parents[2], start_new_session=True)
    assert build.stdout
    socket_path = build.stdout.readline().strip()
    try:
        deadline = time.monotonic() + 30
        while len(_workers(socket_path)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(_workers(socket_path)) == 2, "no worker child runs the request"
        build.send_signal(signal.SIGKILL)
        build.wait()
        deadline = time.monotonic() + 30
        while _workers(socket_path) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _workers(socket_path) == []
        with pytest.raises(OSError):  # ENXIO: nothing reads the FIFO any more
            os.close(os.open(tmp_path / "fifo.json", os.O_WRONLY | os.O_NONBLOCK))
    finally:
        for pid in _workers(socket_path):
            os.kill(pid, signal.SIGKILL)
        os.killpg(build.pid, signal.SIGKILL)  # the client, if it still waits


def test_an_action_of_a_superseded_build_writes_nothing(tmp_path: Path) -> None:
    """Its build was killed and a newer one has started (another token in the generation
    file): neither a stage's nor a command's output lands."""
    import onnx

    onnx.save(tiny_mlp(seed=3), tmp_path / "model.onnx")
    (tmp_path / "config.json").write_text('{"label": "//m:m"}')
    (tmp_path / ".generation").write_text("newer")
    stage = ["stage", "import", "--config", "config.json", "--in", "onnx=model.onnx",
             "--depfile", "{0}/import.d", "--out", "graph={0}/graph.json",
             "--out", "weights={0}/weights.npz"]
    command = ["command", "--out", "{0}/copy.onnx", "--", "cp", "model.onnx",
               "{0}/copy.onnx.tmp"]

    def run(argv: list[str], token: str, out: str) -> subprocess.CompletedProcess:
        (tmp_path / out).mkdir()
        env = {k: v for k, v in os.environ.items() if k != "DNN64_WORKER"}
        env["DNN64_GENERATION"] = f"{token}:{tmp_path / '.generation'}"
        return subprocess.run([sys.executable, "-S", "-E", str(CLIENT),
                               *(a.format(out) for a in argv)],
                              cwd=tmp_path, env=env, capture_output=True, text=True)

    for argv in (stage, command):
        late = run(argv, "older", f"late-{argv[0]}")
        assert late.returncode == 1 and "a newer build has started" in late.stderr
        assert "Traceback" not in late.stderr
        assert [p.name for p in (tmp_path / f"late-{argv[0]}").iterdir()] == []
        current = run(argv, "newer", f"current-{argv[0]}")
        assert current.returncode == 0, current.stderr
        assert any((tmp_path / f"current-{argv[0]}").iterdir())


def test_a_worker_that_cannot_bind_its_socket_is_one_note(tmp_path: Path) -> None:
    """A socket path longer than AF_UNIX takes: the worker says so in one line (no
    traceback) and the action runs in a process of its own."""
    deep = tmp_path / ("d" * 100) / ("e" * 40)
    deep.mkdir(parents=True)
    lifeline_read, lifeline_write = os.pipe()
    log = deep / "worker.log"
    handle = WorkerHandle({"DNN64_WORKER": str(deep / "socket"),
                           "DNN64_WORKER_SPAWN": f"{lifeline_read}\n{log}"},
                          (lifeline_read,), str(log))
    try:
        result = _client(["stage", "import", "--config", "nothing.json"], tmp_path, handle)
    finally:
        os.close(lifeline_write)
        os.close(lifeline_read)
    assert result.returncode == 1 and "nothing.json" in result.stderr  # the stage's own error
    note = log.read_text()
    assert "Traceback" not in note and len(note.strip().splitlines()) == 1, note
    assert "the stage worker could not start" in note


def test_a_worker_that_dies_before_binding_costs_no_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker that exits at start (here: its cache config is missing) must not make an
    action wait out the connect deadline before running on its own: the action that started
    it sees it die and marks it failed for all."""
    from dnn64build.worker import client

    monkeypatch.setattr(client, "CONNECT_SECONDS", 120.0)
    lifeline_read, lifeline_write = os.pipe()
    log = tmp_path / "worker.log"
    monkeypatch.setenv(client.SPAWN_ENV, f"{lifeline_read}\n{log}\n--cache-config\n"
                       f"{tmp_path / 'missing.json'}")
    start = time.monotonic()
    try:
        assert client.ask_worker(str(tmp_path / "socket"), ["stage"]) is None
    finally:
        os.close(lifeline_write)
        os.close(lifeline_read)
    assert time.monotonic() - start < 60  # a worker start, not the 120 s deadline
    assert os.path.exists(tmp_path / f"socket{client.FAILED_SUFFIX}")
    assert "missing.json" in log.read_text()


def test_a_build_with_a_deep_tmpdir_uses_a_worker_socket_that_fits(
    ws_a: Workspace, tmp_path: Path,
) -> None:
    deep = tmp_path / ("t" * 80) / ("u" * 40)
    deep.mkdir(parents=True)
    proc = ws_a.run("plan", "//models:a", env={"TMPDIR": str(deep)}, check=False)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "could not start" not in proc.stderr
