"""Bazel's HTTP remote cache protocol: ``GET``/``PUT`` on ``/ac/<sha256>`` (action
results) and ``/cas/<sha256>`` (output blobs). The server is content-agnostic: any
WebDAV-capable HTTP server (nginx with ``dav_methods PUT``) or bazel-remote will do."""

from __future__ import annotations

import hashlib
import http.client
import urllib.error
import urllib.request
from dataclasses import dataclass


class CacheFault(Exception):
    """The server failed or lied: the build goes on without it."""


@dataclass(frozen=True)
class HttpCache:
    url: str  # base URL, e.g. http://cache:8080/dnn64
    read_only: bool = False
    timeout: float = 10.0

    def get(self, kind: str, digest: str) -> bytes | None:
        """The entry ``kind`` (ac/cas) ``digest``; None if the server has none."""
        try:
            with urllib.request.urlopen(self._address(kind, digest), timeout=self.timeout) as r:
                data = r.read()
                length = r.headers.get("Content-Length")
        except urllib.error.HTTPError as e:
            if e.code == 404:
                return None
            raise CacheFault(f"GET {kind}/{digest[:12]}: HTTP {e.code}") from None
        except (OSError, ValueError, http.client.HTTPException) as e:  # refused, timeout, cut
            raise CacheFault(f"GET {kind}/{digest[:12]}: {e}") from None
        if length is not None and int(length) != len(data):
            raise CacheFault(f"GET {kind}/{digest[:12]}: truncated ({len(data)} of {length} bytes)")
        return data

    def get_blob(self, digest: str, size: int) -> bytes:
        """The CAS blob ``digest``, checked against its digest and size."""
        data = self.get("cas", digest)
        if data is None:
            raise CacheFault(f"cas/{digest[:12]} is missing although an action result names it")
        if len(data) != size or hashlib.sha256(data).hexdigest() != digest:
            raise CacheFault(f"cas/{digest[:12]}: content does not match its digest")
        return data

    def has(self, kind: str, digest: str) -> bool:
        """``HEAD``: whether the server holds the entry (False when unsure: then upload)."""
        request = urllib.request.Request(self._address(kind, digest), method="HEAD")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as r:
                return r.status == 200
        except urllib.error.HTTPError:
            return False
        except (OSError, ValueError, http.client.HTTPException) as e:
            raise CacheFault(f"HEAD {kind}/{digest[:12]}: {e}") from None

    def put(self, kind: str, digest: str, data: bytes) -> None:
        request = urllib.request.Request(self._address(kind, digest), data=data, method="PUT")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as r:
                r.read()
        except (OSError, ValueError, http.client.HTTPException) as e:
            raise CacheFault(f"PUT {kind}/{digest[:12]}: {e}") from None

    def _address(self, kind: str, digest: str) -> str:
        return f"{self.url.rstrip('/')}/{kind}/{digest}"
