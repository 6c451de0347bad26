"""HTTP cache servers for the remote cache tests: a real nginx with WebDAV PUT, and a small
in-memory server of our own that can be told to misbehave."""

from __future__ import annotations

import getpass
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from dnn64build.toolchains import find_tool


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def nginx_cache(directory: Path) -> Iterator[str]:
    """nginx on a free loopback port, storing PUTs under ``directory/data``; yields its URL.
    Raises UserError when nginx is not installed."""
    nginx = find_tool("nginx", check_version=False)["nginx"]
    port = free_port()
    (directory / "data").mkdir(parents=True)
    user = f"user {getpass.getuser()};" if os.geteuid() == 0 else ""
    temp = " ".join(f"{kind}_temp_path {directory}/{kind};"
                    for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    (directory / "nginx.conf").write_text(f"""
        {user}
        daemon off;
        worker_processes 1;
        pid {directory}/nginx.pid;
        error_log {directory}/error.log;
        events {{ worker_connections 64; }}
        http {{
          access_log {directory}/access.log;
          {temp}
          client_max_body_size 0;
          server {{
            listen 127.0.0.1:{port};
            location / {{
              root {directory}/data;
              dav_methods PUT;
              create_full_put_path on;
            }}
          }}
        }}
        """)
    proc = subprocess.Popen([nginx, "-p", str(directory), "-e", str(directory / "error.log"),
                             "-c", str(directory / "nginx.conf")])
    try:
        _wait_for(port, proc)
        yield f"http://127.0.0.1:{port}/cache"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _wait_for(port: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"nginx exited with status {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError("nginx did not start listening")


class FaultyCache:
    """An in-memory Bazel HTTP cache; ``mode`` makes it misbehave on GET:
    ok, error500, truncate, corrupt (flips a byte of every CAS blob), wrong_result (every AC
    GET returns another action's result), slow (answers after ``delay`` seconds), drip (an
    AC body one byte every 0.2 s, for at most DRIP_SECONDS), huge (a CAS blob announced as
    4 GiB, at most HUGE_SENT bytes of it sent), malformed (every AC entry nested 100,000
    deep), redirect (every GET sent on to ``redirect_to``).

    It records each request's Authorization header in ``authorizations`` and its path in
    ``paths``; with ``token`` set, a PUT without that Authorization gets HTTP 401."""

    DRIP_SECONDS = 60.0
    HUGE_SENT = 256 << 20

    def __init__(self) -> None:
        self.store: dict[str, bytes] = {}
        self.mode = "ok"
        self.delay = 3.0
        self.gets = 0
        self.authorizations: list[str | None] = []
        self.paths: list[str] = []
        self.token: str | None = None
        self.redirect_to = ""
        cache = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _record(self) -> None:
                cache.authorizations.append(self.headers.get("Authorization"))
                cache.paths.append(self.path)

            def do_PUT(self) -> None:
                self._record()
                length = int(self.headers["Content-Length"])
                data = self.rfile.read(length)
                if cache.token and self.headers.get("Authorization") != cache.token:
                    self.send_response(401)
                else:
                    cache.store[self.path] = data
                    self.send_response(201)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_HEAD(self) -> None:
                self._record()
                self.send_response(200 if self.path in cache.store else 404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                self._record()
                cache.gets += 1
                if cache.mode == "slow":
                    time.sleep(cache.delay)
                if cache.mode == "error500":
                    self.send_error(500)
                    return
                if cache.mode == "redirect":
                    self.send_response(302)
                    self.send_header("Location", cache.redirect_to + self.path)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = cache.store.get(self.path)
                if cache.mode == "wrong_result" and "/ac/" in self.path:
                    body = next((v for k, v in cache.store.items()
                                 if "/ac/" in k and k != self.path), body)
                if body is None:
                    self.send_error(404)
                    return
                if cache.mode == "corrupt" and "/cas/" in self.path:
                    body = bytes([body[0] ^ 1]) + body[1:]
                if cache.mode == "malformed" and "/ac/" in self.path:
                    body = b"[" * 100_000 + b"]" * 100_000
                self.send_response(200)
                if cache.mode == "huge" and "/cas/" in self.path:
                    self._send_huge()
                    return
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if cache.mode == "drip" and "/ac/" in self.path:
                    self._drip(body)
                    return
                self.wfile.write(body[: len(body) // 2] if cache.mode == "truncate" else body)

            def _send_huge(self) -> None:
                self.send_header("Content-Length", str(4 << 30))
                self.end_headers()
                chunk = bytes(1 << 20)
                with suppress(OSError):  # the client hung up
                    for _ in range(cache.HUGE_SENT // len(chunk)):
                        self.wfile.write(chunk)

            def _drip(self, body: bytes) -> None:
                deadline = time.monotonic() + cache.DRIP_SECONDS
                with suppress(OSError):  # the client hung up
                    for byte in body:
                        if time.monotonic() > deadline:
                            return  # a client that waited this long is broken: stop
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(0.2)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FaultyCache:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
