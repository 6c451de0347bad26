"""The remote cache as an attack surface (issue 25, cases 6, 8, 9, 10): a hostile server
(slow, huge, malformed, redirecting, wrong digest, another action's result) and malformed
action results each end in a correct build with one warning, bounded in time and memory;
credentials reach the server and no message; a planted program is not taken by a client
without credentials; a bad timeout is one clear message."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import threading
import time
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.build.cache_servers import FaultyCache
from tests.build.conftest import ROOT_MANIFEST, Workspace

TOKEN = "Bearer ci-token"
SECRET = "s3cret-Pa55"


class PeakRss:
    """The largest peak resident set (VmHWM) of any process whose environment holds this
    object's marker (the build, ninja, the worker and its children), sampled every 20 ms."""

    def __init__(self) -> None:
        self.env = {"DNN64_TEST_MARK": uuid.uuid4().hex}
        self._marker = f"DNN64_TEST_MARK={self.env['DNN64_TEST_MARK']}".encode()
        self.kib = 0
        self._stop = threading.Event()
        self._others: set[str] = set()

    def __enter__(self) -> PeakRss:
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.wait(0.02):
            for pid in os.listdir("/proc"):
                if pid.isdigit() and pid not in self._others:
                    self.kib = max(self.kib, self._peak(pid))

    def _peak(self, pid: str) -> int:
        try:
            if self._marker not in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                self._others.add(pid)
                return 0
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:  # gone, or not ours
            self._others.add(pid)
            return 0
        found = re.search(r"^VmHWM:\s+(\d+) kB", status, re.M)
        return int(found[1]) if found else 0


def _checkout(source: Path, where: Path) -> Workspace:
    shutil.copytree(source, where, ignore=shutil.ignore_patterns("dnn64-out"))
    return Workspace(where)


def _timed_build(ws: Workspace, *args: str) -> SimpleNamespace:
    with PeakRss() as rss:
        start = time.monotonic()
        proc = ws.run("build", *args, "//...", env=rss.env)
    return SimpleNamespace(stderr=proc.stderr, seconds=time.monotonic() - start, kib=rss.kib)


def _warnings(stderr: str) -> list[str]:
    return re.findall(r"^WARNING: remote cache .*$", stderr, re.M)


@pytest.fixture(scope="module")
def populated(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """A one-model workspace (a host program among its outputs); the cache entries a client
    with credentials uploaded for it; the outputs, time and peak RSS of a build without a
    cache."""
    base = tmp_path_factory.mktemp("hostile")
    source = Workspace(base / "source")
    source.write("BUILD.yaml", ROOT_MANIFEST)
    source.add_model("a", seed=1)
    source.write("models/BUILD.yaml", "targets:\n  - {rule: n64_model, name: a, src: a.onnx}\n")
    plain = _checkout(source.root, base / "plain")
    normal = _timed_build(plain)
    with FaultyCache() as cache:
        _checkout(source.root, base / "writer").run(
            "build", "--remote-cache", cache.url, "--remote-header", f"Authorization={TOKEN}",
            "//...")
        store = dict(cache.store)
    assert any("/ac/" in k for k in store)
    return SimpleNamespace(source=source.root, store=store, reference=plain.outputs(),
                           normal=normal)


def _fresh(populated: SimpleNamespace, tmp_path: Path) -> Workspace:
    return _checkout(populated.source, tmp_path / "fresh")


@pytest.mark.parametrize("mode", ["drip", "huge", "malformed", "redirect", "corrupt",
                                  "wrong_result"])
def test_a_hostile_server_costs_one_warning_and_no_time_or_memory(
    populated: SimpleNamespace, tmp_path: Path, mode: str
) -> None:
    with FaultyCache() as cache, FaultyCache() as elsewhere:
        cache.store = dict(populated.store)
        cache.mode = mode
        cache.redirect_to = elsewhere.url
        fresh = _fresh(populated, tmp_path)
        run = _timed_build(fresh, "--remote-cache", cache.url, "--remote-cache-timeout", "1",
                           "--remote-header", f"Authorization={TOKEN}")
    assert len(_warnings(run.stderr)) == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert fresh.outputs() == populated.reference
    assert elsewhere.paths == []  # a redirect is not followed, to any host
    normal = populated.normal
    assert run.seconds < 1.5 * normal.seconds + 10, (run.seconds, normal.seconds)
    assert run.kib < 2 * normal.kib, (run.kib, normal.kib)


def _no_digest(entry: dict) -> object:
    for output in entry["outputs"]:
        del output["digest"]
    return entry


def _no_executable(entry: dict) -> object:
    for output in entry["outputs"]:
        del output["executable"]
    return entry


def _number_digest(entry: dict) -> object:
    for output in entry["outputs"]:
        output["digest"] = 12345
    return entry


def _wrong_types(entry: dict) -> object:
    entry["outputs"] = [output["path"] for output in entry["outputs"]]
    return entry


def _negative_size(entry: dict) -> object:
    for output in entry["outputs"]:
        output["size"] = -1
    return entry


def _not_an_object(entry: dict) -> object:
    return [entry]


def _deep(entry: dict) -> object:
    return b"[" * 100_000 + b"]" * 100_000  # as bytes: json.dumps cannot nest this deep


DAMAGES = [_no_digest, _no_executable, _number_digest, _wrong_types, _negative_size,
           _not_an_object, _deep]


@pytest.mark.parametrize("damage", DAMAGES, ids=lambda f: f.__name__.strip("_"))
def test_a_malformed_action_result_is_a_cache_fault_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: object
) -> None:
    """The client itself, on one action whose blob the server holds intact."""
    from dnn64build.remote_cache.cached import Request, fetch_result
    from dnn64build.remote_cache.http import CacheFault, HttpCache

    blob, key = b"int x;\n", "ab" * 32
    digest = __import__("hashlib").sha256(blob).hexdigest()
    entry = {"key": key, "stderr": "", "outputs": [
        {"path": "out/x.c", "digest": digest, "size": len(blob), "executable": False}]}
    monkeypatch.chdir(tmp_path)
    with FaultyCache() as cache:
        damaged = damage(entry)  # type: ignore
        raw = damaged if isinstance(damaged, bytes) else json.dumps(damaged).encode()
        cache.store = {f"/ac/{key}": raw, f"/cas/{digest}": blob}
        with pytest.raises(CacheFault, match="not an action result"):
            fetch_result(HttpCache(cache.url, headers=(("Authorization", TOKEN),)),
                   Request(key, ["out/x.c"], None))
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_malformed_action_result_in_a_build_is_one_warning_and_a_local_build(
    populated: SimpleNamespace, tmp_path: Path
) -> None:
    with FaultyCache() as cache:
        cache.store = {path: json.dumps(_no_executable(json.loads(data))).encode()
                       if "/ac/" in path else data for path, data in populated.store.items()}
        fresh = _fresh(populated, tmp_path)
        proc = fresh.run("build", "--remote-cache", cache.url,
                         "--remote-header", f"Authorization={TOKEN}", "//...", check=False)
    assert proc.returncode == 0, proc.stderr
    assert len(_warnings(proc.stderr)) == 1, proc.stderr
    assert "not an action result" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert fresh.outputs() == populated.reference


def _basic(login: str) -> str:
    return "Basic " + base64.b64encode(login.encode()).decode()


@pytest.mark.parametrize("source", ["flag", "env", "netrc", "userinfo"])
def test_credentials_reach_the_cache_and_no_message(
    populated: SimpleNamespace, tmp_path: Path, source: str
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text(f"machine 127.0.0.1 login ci password {SECRET}\n")
    with FaultyCache() as cache:
        cache.token = _basic(f"ci:{SECRET}")
        url = cache.url
        args, env = [], {"NETRC": str(tmp_path / "no-netrc")}
        if source == "flag":
            args = ["--remote-header", f"Authorization={cache.token}"]
        elif source == "env":
            env["DNN64_REMOTE_HEADER"] = f"X-Other=1\nAuthorization={cache.token}"
        elif source == "netrc":
            env["NETRC"] = str(netrc)
        else:
            url = url.replace("http://", f"http://ci:{SECRET}@")
        writer = _checkout(populated.source, tmp_path / "writer")
        proc = writer.run("build", "--remote-cache", url, *args, "//...", env=env)
        assert set(cache.authorizations) == {cache.token}, proc.stderr
        assert any("/ac/" in path for path in cache.store), proc.stderr  # accepted
        assert not any(SECRET in path for path in cache.paths)
        assert SECRET not in proc.stderr + proc.stdout
        if source != "userinfo":
            return
        cache.mode = "error500"
        reader = _checkout(populated.source, tmp_path / "reader")
        proc = reader.run("build", "--remote-cache", url, *args, "//...", env=env)
    warnings = _warnings(proc.stderr)
    assert len(warnings) == 1 and "HTTP 500" in warnings[0], proc.stderr
    assert f"remote cache {cache.url}:" in warnings[0]  # the URL without its userinfo
    assert SECRET not in proc.stderr + proc.stdout
    assert reader.outputs() == populated.reference


def test_a_planted_program_is_not_taken_by_a_client_without_credentials(
    populated: SimpleNamespace, tmp_path: Path
) -> None:
    """Two PUTs plant a program for the link action (its key is the real one; the blob's
    digest is right): a client that presents no credentials builds the program itself."""
    planted = b"#!/bin/sh\necho planted\n"
    digest = __import__("hashlib").sha256(planted).hexdigest()
    with FaultyCache() as cache:
        cache.store = dict(populated.store)
        links = 0
        for path, data in populated.store.items():
            entry = json.loads(data) if "/ac/" in path else None
            if entry and any(o["executable"] for o in entry["outputs"]):
                for output in entry["outputs"]:
                    output.update(digest=digest, size=len(planted))
                cache.store[path] = json.dumps(entry).encode()
                links += 1
        cache.store[f"/cas/{digest}"] = planted
        assert links == 1
        reader = _fresh(populated, tmp_path)
        proc = reader.run("build", "--remote-cache", cache.url, "--remote-cache-read-only",
                          "--explain", "//...")
    assert "never taken from a cache without credentials" in proc.stderr
    assert reader.outputs() == populated.reference
    assert planted not in reader.outputs().values()


@pytest.mark.parametrize("value", ["inf", "nan", "-5", "0", "abc", "1e999", "86400"])
def test_a_bad_timeout_flag_is_one_clear_message(ws_a: Workspace, value: str) -> None:
    proc = ws_a.run("build", "--remote-cache", "http://127.0.0.1:9/",
                         "--remote-cache-timeout", value, "//...", check=False)
    assert proc.returncode == 2, proc.stderr
    assert "argument --remote-cache-timeout: " in proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr


@pytest.mark.parametrize("value", ["abc", "inf", "nan", "-5"])
def test_a_bad_timeout_in_the_environment_or_workspace_is_one_clear_message(
    ws_a: Workspace, value: str
) -> None:
    proc = ws_a.run("build", "--remote-cache", "http://127.0.0.1:9/", "//...", check=False,
                    env={"DNN64_REMOTE_CACHE_TIMEOUT": value})
    assert proc.returncode == 1, proc.stderr
    assert f"$DNN64_REMOTE_CACHE_TIMEOUT: {value!r}" in proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    yaml_value = {"abc": "abc", "inf": ".inf", "nan": ".nan", "-5": "-5"}[value]
    root = ws_a.root / "BUILD.yaml"
    root.write_text(root.read_text().replace(
        "  name: testws\n",
        f"  name: testws\n  remote_cache: {{url: 'http://127.0.0.1:9/', timeout: {yaml_value}}}\n"))
    proc = ws_a.run("build", "//...", check=False)
    assert proc.returncode == 1, proc.stderr
    assert "BUILD.yaml" in proc.stderr and "timeout" in proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr


def test_a_malformed_header_or_url_is_one_clear_message_without_the_secret(
    ws_a: Workspace
) -> None:
    for args in (["--remote-header", f"Authorization {SECRET}"],
                 ["--remote-header", f"Bad Name={SECRET}"]):
        proc = ws_a.run("build", "--remote-cache", "http://127.0.0.1:9/", *args, "//...",
                        check=False)
        assert proc.returncode == 1 and "--remote-header" in proc.stderr, proc.stderr
        assert SECRET not in proc.stderr
    proc = ws_a.run("build", "--remote-cache", f"http://ci:{SECRET}@127.0.0.1:port/", "//...",
                    check=False)
    assert proc.returncode == 1 and "not a URL" in proc.stderr, proc.stderr
    assert SECRET not in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("flags", [["--remote-header", f"Authorization=Bearer {SECRET}"],
                                   ["--remote-cache-read-only"],
                                   ["--remote-cache-timeout", "5"]])
def test_a_cache_flag_without_a_cache_is_one_clear_message(
    ws_a: Workspace, flags: list[str]
) -> None:
    """A typo'd or unset cache URL must not silently drop the credentials or the mode."""
    proc = ws_a.run("build", *flags, "//...", check=False, env={"DNN64_REMOTE_CACHE": ""})
    assert proc.returncode == 1, proc.stderr
    assert f"{flags[0]} given, but no remote cache is set" in proc.stderr
    assert SECRET not in proc.stderr and "Traceback" not in proc.stderr
    assert not (ws_a.root / "dnn64-out").exists() or not any(
        (ws_a.root / "dnn64-out").rglob("*.z64"))


def test_the_worker_gets_the_credentials_in_a_private_file_not_on_its_command_line() -> None:
    from dnn64build.worker.client import SPAWN_ENV
    from dnn64build.worker.launch import WorkerOptions, stage_worker

    options = WorkerOptions(remote_cache="http://127.0.0.1:9/cache",
                            headers=(("Authorization", f"Bearer {SECRET}"),))
    with stage_worker(options) as handle:
        _lifeline, _log, *argv = handle.env[SPAWN_ENV].split("\n")
        assert SECRET not in " ".join(argv)
        config = Path(argv[argv.index("--cache-config") + 1])
        assert config.stat().st_mode & 0o077 == 0
        assert json.loads(config.read_text())["headers"] == [["Authorization",
                                                              f"Bearer {SECRET}"]]
