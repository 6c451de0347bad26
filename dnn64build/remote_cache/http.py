"""Bazel's HTTP remote cache protocol: ``GET``/``PUT`` on ``/ac/<sha256>`` (action
results) and ``/cas/<sha256>`` (output blobs). The server is content-agnostic: any
WebDAV-capable HTTP server (nginx with ``dav_methods PUT``) or bazel-remote will do.

The client trusts nothing the server says: each request has one deadline for all of it
(connecting, the headers, every byte of the body), an announced size is checked before
the body is read, a blob is hashed while it streams to disk (never held in memory),
redirects are refused (the cache must answer itself: a redirect could send the
credentials elsewhere), and no message shows a credential.
"""

from __future__ import annotations

import hashlib
import http.client
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import BinaryIO
from urllib.parse import urlsplit

from dnn64build.remote_cache.settings import redact_url

CHUNK = 1 << 16


class CacheFault(Exception):
    """The server failed or lied: the build goes on without it."""


@dataclass(frozen=True)
class HttpCache:
    url: str  # base URL without credentials, e.g. http://cache:8080/dnn64
    read_only: bool = False
    timeout: float = 10.0  # seconds for a whole request
    headers: tuple[tuple[str, str], ...] = ()  # sent with every request; never printed

    @property
    def display(self) -> str:
        return redact_url(self.url)

    @property
    def authenticated(self) -> bool:
        """Whether this client presents credentials (see docs/ci.md, "Trust")."""
        return bool(self.headers)

    def get(self, kind: str, digest: str, limit: int) -> bytes | None:
        """The entry ``kind`` (ac/cas) ``digest`` of at most ``limit`` bytes; None if the
        server has none."""
        with self._exchange("GET", kind, digest) as response:
            if response is None:
                return None
            what = f"GET {kind}/{digest[:12]}"
            if response.length is not None and response.length > limit:
                raise CacheFault(f"{what}: announces {response.length} bytes, more than the "
                                 f"{limit} such an entry may have")
            return b"".join(_body(what, response, limit))

    def get_blob(self, digest: str, size: int, into: BinaryIO) -> None:
        """Write the CAS blob ``digest`` of ``size`` bytes to ``into``, hashing it as it
        arrives; CacheFault unless exactly that blob arrived."""
        what = f"GET cas/{digest[:12]}"
        with self._exchange("GET", "cas", digest) as response:
            if response is None:
                raise CacheFault(f"cas/{digest[:12]} is missing although an action result "
                                 "names it")
            if response.length is not None and response.length != size:
                raise CacheFault(f"{what}: announces {response.length} bytes; the action "
                                 f"result says {size}")
            hasher, received = hashlib.sha256(), 0
            for chunk in _body(what, response, size):
                received += len(chunk)
                hasher.update(chunk)
                into.write(chunk)
        if received != size or hasher.hexdigest() != digest:
            raise CacheFault(f"cas/{digest[:12]}: content does not match its digest")

    def has(self, kind: str, digest: str) -> bool:
        """``HEAD``: whether the server holds the entry."""
        with self._exchange("HEAD", kind, digest) as response:
            return response is not None

    def put(self, kind: str, digest: str, data: bytes) -> None:
        with self._exchange("PUT", kind, digest, data) as response:
            if response is None:
                raise CacheFault(f"PUT {kind}/{digest[:12]}: HTTP 404")
            response.read(CHUNK)  # a short reply; the rest, if any, is dropped with the socket

    @contextmanager
    def _exchange(self, method: str, kind: str, digest: str,
                  body: bytes | None = None) -> Iterator[http.client.HTTPResponse | None]:
        """One request and its response (None for 404), all of it within ``timeout``: a
        watchdog shuts the socket down at the deadline, however the server dribbles."""
        what = f"{method} {kind}/{digest[:12]}"
        parts = urlsplit(self.url)
        connection_type = (http.client.HTTPSConnection if parts.scheme == "https"
                           else http.client.HTTPConnection)
        connection = connection_type(parts.hostname or "", parts.port, timeout=self.timeout)
        deadline = time.monotonic() + self.timeout
        watchdog = response = None
        try:
            connection.connect()  # bounded by the timeout itself
            # The response may take the socket over from the connection: hold it here.
            watchdog = threading.Timer(max(0.0, deadline - time.monotonic()), _cut,
                                       (connection.sock,))
            watchdog.daemon = True
            watchdog.start()
            connection.request(method, f"{parts.path.rstrip('/')}/{kind}/{digest}", body=body,
                               headers=dict(self.headers))
            response = connection.getresponse()
            if 300 <= response.status < 400:
                raise CacheFault(f"{what}: HTTP {response.status} redirect refused (give the "
                                 "cache's own URL)")
            if response.status in (401, 403):
                raise CacheFault(f"{what}: HTTP {response.status}: the server refused the "
                                 "credentials (--remote-header, $DNN64_REMOTE_HEADER, netrc)")
            if response.status == 404:
                yield None
            elif response.status not in (200, 201, 204):
                raise CacheFault(f"{what}: HTTP {response.status}")
            else:
                yield response
        except (CacheFault, OSError, ValueError, http.client.HTTPException) as e:
            if time.monotonic() >= deadline:  # cut by the watchdog
                raise CacheFault(f"{what}: no complete answer within {self.timeout:g} s") \
                    from None
            if isinstance(e, CacheFault):
                raise
            raise CacheFault(self._redact(f"{what}: {e}")) from None  # refused, cut, garbled
        finally:
            if watchdog:
                watchdog.cancel()
            if response:
                response.close()
            connection.close()

    def _redact(self, text: str) -> str:
        for _, value in self.headers:
            text = text.replace(value, "***") if value else text
        return text


def _body(what: str, response: http.client.HTTPResponse, limit: int) -> Iterator[bytes]:
    """The body's chunks; CacheFault past ``limit`` bytes, or when it ends short of what was
    announced (http.client ends such a body silently)."""
    received = 0
    while chunk := response.read(min(CHUNK, limit + 1 - received)):
        received += len(chunk)
        if received > limit:
            raise CacheFault(f"{what}: more than the {limit} bytes it may have")
        yield chunk
    if response.length:  # what is left of the announced length
        raise CacheFault(f"{what}: truncated ({received} of {received + response.length} "
                         "bytes)")


def _cut(sock: socket.socket) -> None:
    """End the request at its deadline: a blocked read or write returns at once."""
    with suppress(OSError):  # already closed
        sock.shutdown(socket.SHUT_RDWR)

