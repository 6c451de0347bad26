"""docs/benchmarks.md: a benchmark script replaces its own section, and only that."""

from __future__ import annotations

from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"


def write_section(heading: str, text: str) -> None:
    """Replace the section starting with ``heading`` (up to the next ``## ``) by ``text``,
    or append ``text`` when there is no such section yet."""
    docs = DOCS.read_text()
    start = docs.find(heading)
    if start < 0:
        docs = docs.rstrip("\n") + "\n\n" + text
    else:
        end = docs.find("\n## ", start + len(heading))
        rest = "\n" + docs[end + 1:] if end >= 0 else ""  # a blank line before the next heading
        docs = docs[:start] + text.rstrip("\n") + "\n" + rest
    DOCS.write_text(docs)
