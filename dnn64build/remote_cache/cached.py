"""Run an action through the remote cache: a hit writes the cached outputs (each checked
against its digest) instead of running; a successful run uploads its outputs.

Any fault of the server (unreachable, slow, an HTTP error, a redirect, a truncated,
oversized or corrupted blob, a malformed action result or one for another action) switches
the cache off for the rest of the build, with one warning, and the action runs locally:
the cache can make a build faster, never wrong. A client without credentials neither takes
nor uploads a result holding a program (docs/ci.md, "Trust").
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dnn64build import TOOL_ROOT
from dnn64build.atomic_write import write_if_changed
from dnn64build.errors import UserError
from dnn64build.remote_cache import action_result
from dnn64build.remote_cache.http import CacheFault, HttpCache
from dnn64build.remote_cache.keys import TOOL_TOKEN, command_key, stage_key, stage_reads
from dnn64build.stages.io import write_depfile

# What --explain says of an action.
HIT = "remote cache hit"
MISS = "remote cache miss: ran locally"
UNTRUSTED_PROGRAM = f"{MISS} (a program is never taken from a cache without credentials)"


@dataclass(frozen=True)
class CacheSession:
    """One build's use of the cache; ``state_dir`` is shared by the worker's children."""

    cache: HttpCache
    state_dir: str
    explain: bool = False

    @property
    def _off(self) -> str:
        return os.path.join(self.state_dir, "cache-off")

    def usable(self) -> bool:
        return not os.path.exists(self._off)

    def fault(self, error: CacheFault) -> None:
        """Switch the cache off for this build; the first action to get here warns."""
        try:
            os.close(os.open(self._off, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return
        print(f"WARNING: remote cache {self.cache.display}: {error}; building locally without "
              "it for the rest of this build", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Request:
    key: str
    outputs: list[str]
    depfile: str | None  # an output holding paths: stored with the tool's root replaced
    # A stage's depfile and the files it names: not cached, written on a hit (the files a
    # stage reads besides its inputs are part of its key).
    stage_depfile: str | None = None
    stage_reads: tuple[str, ...] = ()


def parse_request(argv: list[str]) -> Request:
    """The key and outputs of a client request (``stage ...`` or ``command ...``); UserError
    when a stage's inputs cannot be read (the stage itself then says what is wrong)."""
    if argv[0] == "stage":
        pairs = list(zip(argv[2::2], argv[3::2], strict=True))
        config = next(v for f, v in pairs if f == "--config")
        named = {f: [tuple(v.split("=", 1)) for g, v in pairs if g == f]
                 for f in ("--in", "--out")}
        reads = stage_reads(argv[1], named["--in"])
        key, _ = stage_key(argv[1], config, named["--in"], named["--out"], reads)
        depfile = next((v for f, v in pairs if f == "--depfile"), None)
        return Request(key, [p for _, p in named["--out"]], None, depfile,
                       (*(p for _, p in named["--in"]), *reads))
    split = argv.index("--")
    flags, command = argv[1:split], argv[split + 1:]
    pairs = list(zip(flags[::2], flags[1::2], strict=True))
    outputs = [v for f, v in pairs if f == "--out"]
    depfile = command[command.index("-MF") + 1] if "-MF" in command else None
    key, _ = command_key(command, [v for f, v in pairs if f == "--read"],
                         outputs + ([depfile] if depfile else []),
                         next((v for f, v in pairs if f == "--toolchain"), None))
    return Request(key, outputs + ([depfile] if depfile else []), depfile)


def run_cached(argv: list[str], session: CacheSession, run: Callable[[list[str]], int]) -> int:
    if not session.usable():
        return run(argv)
    try:
        request = parse_request(argv)
    except UserError:  # an unreadable input: the action says so when it runs
        return run(argv)
    why = MISS
    try:
        why = fetch_result(session.cache, request) or MISS
        if why == HIT:
            _explain(session, request, why)
            return 0
    except CacheFault as e:
        session.fault(e)
    _explain(session, request, why)
    status, messages = _run_recording_stderr(run, argv)
    if status == 0 and not session.cache.read_only and session.usable():
        try:
            _upload(session.cache, request, messages)
        except CacheFault as e:
            session.fault(e)
    return status


def _run_recording_stderr(run: Callable[[list[str]], int], argv: list[str]) -> tuple[int, str]:
    """Run, passing its stderr (its warnings) through and keeping a copy: a hit replays it."""
    with tempfile.TemporaryFile() as record:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(record.fileno(), 2)
        try:
            status = run(argv)
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        record.seek(0)
        messages = record.read()
    os.write(2, messages)
    return status, messages.decode("utf-8", "replace")


def _explain(session: CacheSession, request: Request, what: str) -> None:
    if session.explain:
        print(f"dnn64build explain: {request.outputs[0]}: {what} (key {request.key[:12]})",
              file=sys.stderr, flush=True)


def fetch_result(cache: HttpCache, request: Request) -> str | None:
    """Write the cached outputs of ``request``: HIT, else None or why not. Nothing is
    written unless the entry is valid and every blob arrived intact; blobs stream to
    temporary files."""
    raw = cache.get("ac", request.key, action_result.MAX_BYTES)
    if raw is None:
        return None
    result = action_result.decode(raw, request.key, request.outputs)
    if not cache.authenticated and any(e["executable"] for e in result["outputs"]):
        return UNTRUSTED_PROGRAM  # anyone may have written it: build it (docs/ci.md, Trust)
    staged: dict[str, Path] = {}
    try:
        for entry in result["outputs"]:
            staged[entry["path"]] = tmp = _scratch(Path(entry["path"]))
            with open(tmp, "wb") as f:
                cache.get_blob(entry["digest"], entry["size"], f)
        for entry in result["outputs"]:
            _install(staged.pop(entry["path"]), Path(entry["path"]), entry,
                     entry["path"] == request.depfile)
    finally:
        for tmp in staged.values():
            tmp.unlink(missing_ok=True)
    if request.stage_depfile:
        write_depfile(Path(request.stage_depfile), [Path(p) for p in request.outputs],
                      [Path(p) for p in request.stage_reads])
    sys.stderr.write(result["stderr"])  # the action's warnings, as when it ran
    return HIT


def _scratch(path: Path) -> Path:
    """A temporary name beside ``path``: renamed into place once every blob is in."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.with_name(f".{path.name}.fetch{os.getpid()}")


def _install(tmp: Path, path: Path, entry: dict[str, Any], depfile: bool) -> None:
    """Move the fetched ``tmp`` to ``path`` unless ``path`` holds those bytes already (so
    ninja's restat stops there)."""
    if depfile:  # small: its placeholder for the tool's root is replaced
        data = tmp.read_bytes().replace(TOOL_TOKEN.encode(), str(TOOL_ROOT).encode())
        write_if_changed(path, data)
        tmp.unlink()
        return
    if _sha256(path) == entry["digest"]:
        tmp.unlink()
    else:
        os.replace(tmp, path)
    if entry["executable"]:
        os.chmod(path, 0o755)


def _sha256(path: Path) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except FileNotFoundError:
        return None


def _upload(cache: HttpCache, request: Request, messages: str) -> None:
    """Blobs first, the action result last: a reader never sees a result without its blobs."""
    executable = {path: os.access(path, os.X_OK) for path in request.outputs}
    if not cache.authenticated and any(executable.values()):
        return  # no reader would take it (see fetch_result)
    outputs: list[dict[str, Any]] = []
    for path in request.outputs:
        data = Path(path).read_bytes()
        if path == request.depfile:
            data = data.replace(str(TOOL_ROOT).encode(), TOOL_TOKEN.encode())
        digest = hashlib.sha256(data).hexdigest()
        if not cache.has("cas", digest):  # many actions share blobs (headers, libraries)
            cache.put("cas", digest, data)
        outputs.append({"path": path, "digest": digest, "size": len(data),
                        "executable": executable[path]})
    cache.put("ac", request.key, action_result.encode(request.key, outputs, messages))
