"""Target selection for the command line: patterns and the small query language.

    //...  //pkg/...  //pkg:all  //pkg:name   patterns
    deps(EXPR)                                the targets and everything they depend on
    rdeps(EXPR)                               the targets and everything depending on them
    kind(RULE, EXPR)                          the targets of one rule kind

Works on the target index the graph generator writes, so it needs no manifest
parsing.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from dnn64build.errors import UserError, did_you_mean
from dnn64build.workspace.labels import parse_label, parse_pattern

_CALL = re.compile(r"^\s*(deps|rdeps|kind)\s*\((.*)\)\s*$", re.DOTALL)


def select(patterns: list[str], targets: Mapping[str, Any]) -> list[str]:
    """The labels (as text) the patterns name, in sorted order; unknown ones are errors."""
    chosen: set[str] = set()
    for text in patterns:
        pattern = parse_pattern(text)
        found = {label for label in targets if pattern.matches(parse_label(label))}
        if not found:
            raise UserError(
                f"no target matches {text!r}",
                hint=_suggest(text, targets) or "list the targets with: dnn64build query //...",
            )
        chosen |= found
    return sorted(chosen)


def evaluate_query(expr: str, targets: Mapping[str, Any], kinds: Collection[str]) -> list[str]:
    """The labels ``expr`` selects; ``kinds`` are the workspace's rule kinds."""
    m = _CALL.match(expr)
    if not m:
        return select(expr.split(), targets)
    func, args = m[1], m[2]
    if func == "kind":
        kind, _, rest = (part.strip() for part in args.partition(","))
        if kind not in kinds:
            raise UserError(f"kind({kind}, ...): unknown rule kind {kind!r}"
                            + did_you_mean(kind, kinds),
                            hint=f"rule kinds: {', '.join(sorted(kinds))}")
        return [t for t in evaluate_query(rest, targets, kinds) if targets[t]["rule"] == kind]
    roots = set(evaluate_query(args, targets, kinds))
    edges = (
        {t: targets[t]["deps"] for t in targets}
        if func == "deps"
        else {t: [u for u in targets if t in targets[u]["deps"]] for t in targets}
    )
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        t = stack.pop()
        if t not in seen:
            seen.add(t)
            stack.extend(edges[t])
    return sorted(seen)


def _suggest(text: str, targets: Mapping[str, Any]) -> str | None:
    import difflib

    close = difflib.get_close_matches(text, list(targets), n=3)
    return f"did you mean {', '.join(close)}?" if close else None
