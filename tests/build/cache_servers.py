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
from contextlib import contextmanager
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
    GET returns another action's result), slow (answers after ``delay`` seconds)."""

    def __init__(self) -> None:
        self.store: dict[str, bytes] = {}
        self.mode = "ok"
        self.delay = 3.0
        self.gets = 0
        cache = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_PUT(self) -> None:
                length = int(self.headers["Content-Length"])
                cache.store[self.path] = self.rfile.read(length)
                self.send_response(201)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_HEAD(self) -> None:
                self.send_response(200 if self.path in cache.store else 404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                cache.gets += 1
                if cache.mode == "slow":
                    time.sleep(cache.delay)
                if cache.mode == "error500":
                    self.send_error(500)
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
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[: len(body) // 2] if cache.mode == "truncate" else body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FaultyCache:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
