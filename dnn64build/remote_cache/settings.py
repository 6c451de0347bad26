"""The remote cache's settings as a user gives them: the timeout, extra headers
(``--remote-header NAME=VALUE``, ``$DNN64_REMOTE_HEADER``), and credentials from the URL's
``user:password@`` or the netrc file. Every error is a UserError that never shows a secret.
"""

from __future__ import annotations

import base64
import math
import netrc
import os
import re
from typing import NamedTuple
from urllib.parse import unquote, urlsplit, urlunsplit

from dnn64build.errors import UserError

MAX_TIMEOUT = 3600.0  # seconds; a cache slower than this is no cache
HEADER_ENV = "DNN64_REMOTE_HEADER"  # NAME=VALUE, one per line
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP header name (RFC 9110 token)


class Endpoint(NamedTuple):
    """Where the cache is and how to speak to it: ``url`` holds no credentials."""

    url: str
    headers: tuple[tuple[str, str], ...] = ()

    @property
    def display(self) -> str:
        return redact_url(self.url)


def seconds(text: str | float) -> float:
    """A timeout in seconds: a finite number in (0, MAX_TIMEOUT]; ValueError says why not."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ValueError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or not 0 < value <= MAX_TIMEOUT:
        raise ValueError(f"{text!r}: give a number of seconds above 0 and at most "
                         f"{MAX_TIMEOUT:g}")
    return value


def header(text: str) -> tuple[str, str]:
    """``NAME=VALUE`` -> (NAME, VALUE); ValueError (which never shows VALUE) if malformed."""
    name, equals, value = text.partition("=")
    name = name.strip()
    if not equals:  # the text may be a secret: do not show it
        raise ValueError("expected NAME=VALUE (no '=' found)")
    if not _TOKEN.fullmatch(name):
        raise ValueError(f"{name[:40]!r} is not an HTTP header name (expected NAME=VALUE)")
    if any(c in value for c in "\r\n\0"):
        raise ValueError(f"the value of header {name} holds a line break or NUL")
    return name, value.strip()


def redact_url(url: str) -> str:
    """``url`` with its ``user:password@`` replaced by ``***@``."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc="***@" + parts.netloc.rpartition("@")[2]))


def endpoint(url: str, flag_headers: list[str] | None) -> Endpoint:
    """The cache at ``url`` with its headers: the flags' (else $DNN64_REMOTE_HEADER's);
    when none of them is Authorization, the URL's userinfo, else the netrc entry for the
    host, as Basic authentication."""
    shown = redact_url(url)
    try:
        parts = urlsplit(url)
        port = parts.port  # ValueError on a port that is no number
    except ValueError as e:
        raise UserError(f"remote cache {shown}: not a URL ({e})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(f"remote cache {shown}: not an http:// or https:// URL with a host")
    headers = dict(_given_headers(flag_headers))
    if not any(name.lower() == "authorization" for name in headers):
        login = _userinfo(parts.username, parts.password) or _netrc_login(parts.hostname)
        if login:
            headers["Authorization"] = "Basic " + base64.b64encode(login.encode()).decode()
    netloc = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    netloc += f":{port}" if port is not None else ""
    return Endpoint(urlunsplit(parts._replace(netloc=netloc)), tuple(headers.items()))


def _given_headers(flag_headers: list[str] | None) -> list[tuple[str, str]]:
    given = [("--remote-header", text) for text in flag_headers or []] or [
        (f"${HEADER_ENV}", line) for line in os.environ.get(HEADER_ENV, "").splitlines()
        if line.strip()]
    headers = []
    for where, text in given:
        try:
            headers.append(header(text))
        except ValueError as e:
            raise UserError(f"{where}: {e}") from None
    return headers


def _userinfo(user: str | None, password: str | None) -> str | None:
    return f"{unquote(user)}:{unquote(password or '')}" if user else None


def _netrc_login(host: str) -> str | None:
    """``login:password`` from $NETRC (else ~/.netrc) for ``host``; None without one."""
    path = os.environ.get("NETRC") or os.path.expanduser("~/.netrc")
    if not os.path.exists(path):
        return None
    try:
        # Without an explicit file, the module also refuses a ~/.netrc others can read.
        entry = netrc.netrc(os.environ.get("NETRC") or None).authenticators(host)
    except netrc.NetrcParseError as e:  # its message may quote a token: name the line only
        reason = "readable by others" if "too permissive" in e.msg else "cannot be parsed"
        raise UserError(f"{path}: line {e.lineno}: {reason}",
                        hint="fix the netrc file or unset $NETRC") from None
    except OSError as e:
        raise UserError(f"{path}: {e.strerror}") from None
    if entry is None or not entry[0]:
        return None
    return f"{entry[0]}:{entry[2] or ''}"
