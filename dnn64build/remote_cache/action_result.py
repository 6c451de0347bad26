"""The ``ac/`` entry: dnn64build's action result (docs/ci.md), and its strict reading. An
entry is bounded in size and nesting before it is parsed and checked against a schema
before anything of it is used: a malformed or foreign entry is a CacheFault, never a
traceback."""

from __future__ import annotations

import json
import re
from functools import cache
from itertools import accumulate
from typing import Any

from dnn64build.remote_cache.http import CacheFault

MAX_BYTES = 4 << 20  # an entry lists a few outputs and the action's warnings
MAX_DEPTH = 3  # object > outputs list > output object
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')

SCHEMA = {
    "type": "object",
    "properties": {
        "key": {"type": "string"},
        "outputs": {"type": "array", "items": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "digest": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                "size": {"type": "integer", "minimum": 0},
                "executable": {"type": "boolean"},
            },
            "required": ["path", "digest", "size", "executable"],
            "additionalProperties": False,
        }},
        "stderr": {"type": "string"},
    },
    "required": ["key", "outputs", "stderr"],
    "additionalProperties": False,
}


def encode(key: str, outputs: list[dict[str, Any]], stderr: str) -> bytes:
    result = {"key": key, "outputs": outputs, "stderr": stderr}
    return json.dumps(result, indent=1, sort_keys=True).encode()


def decode(raw: bytes, key: str, outputs: list[str]) -> dict[str, Any]:
    """The action result in ``raw`` for the action ``key`` with exactly ``outputs``."""
    where = f"ac/{key[:12]}"
    if _depth(raw) > MAX_DEPTH:
        raise CacheFault(f"{where}: not an action result (nested more than {MAX_DEPTH} deep)")
    try:
        result = json.loads(raw)
    except (ValueError, RecursionError):
        raise CacheFault(f"{where}: not an action result (not JSON)") from None
    error = next(_validator().iter_errors(result), None)
    if error is not None:
        at = "/".join(str(p) for p in error.absolute_path) or "the entry"
        raise CacheFault(f"{where}: not an action result ({at}: {error.validator} "
                         f"{error.validator_value!r:.40} not met)")
    paths = [e["path"] for e in result["outputs"]]
    if result["key"] != key or sorted(paths) != sorted(outputs):
        raise CacheFault(f"{where}: an action result for another action")
    return result


@cache
def _validator() -> Any:
    import jsonschema

    return jsonschema.Draft7Validator(SCHEMA)


def _depth(raw: bytes) -> int:
    """How deeply ``raw``'s arrays and objects nest, counted without parsing it."""
    brackets = _STRING.sub(b"", raw).translate(None, bytes(set(range(256)) - set(b"[]{}")))
    return max(accumulate((1 if c in b"[{" else -1 for c in brackets), initial=0))


def prepare() -> None:
    """Build the validator once, before the worker forks its children."""
    _validator()
