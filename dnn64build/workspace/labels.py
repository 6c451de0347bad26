"""Labels (``//pkg/path:name``) and target patterns (``//...``, ``//pkg/...``, ``//pkg:all``).

A package is a directory holding a BUILD.yaml, named by its path from the
workspace root ('' for the root itself). Relative labels (``:name``) are
resolved against the package they are written in.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from dnn64build.errors import UserError

_NAME = r"[A-Za-z0-9_][A-Za-z0-9_.+-]*"
_PACKAGE = rf"(?:{_NAME}(?:/{_NAME})*)?"
# Matched whole (fullmatch, or \Z in a schema): Python's "$" also matches before a final
# newline, which would let "name\n" through.
_LABEL_RE = re.compile(rf"//(?P<pkg>{_PACKAGE})(?::(?P<name>{_NAME}))?")
_RELATIVE_RE = re.compile(rf":(?P<name>{_NAME})")
_RECURSIVE_RE = re.compile(rf"//(?:(?P<pkg>{_PACKAGE})/)?\.\.\.")
_PACKAGE_RE = re.compile(_PACKAGE)
NAME_SCHEMA_PATTERN = rf"^{_NAME}\Z"  # a target name, for JSON schemas

SYNTAX_HINT = (
    "labels look like //pkg/path:name (or :name inside the same package); "
    "patterns are //..., //pkg/... and //pkg:all"
)


# NamedTuples, not dataclasses: labels are parsed on every command's way, and importing
# dataclasses (it imports inspect) costs more than a no-op build's own work.
class Label(NamedTuple):
    """A target's name: the package path (no leading //) and the target name; ordered by
    package, then name."""

    package: str
    name: str

    def __str__(self) -> str:
        return f"//{self.package}:{self.name}"

    @property
    def path(self) -> str:
        """A filesystem-safe relative path for this target's outputs."""
        return f"{self.package}/{self.name}" if self.package else self.name


def is_package_path(path: str) -> bool:
    """Whether ``path`` (relative, '/'-separated) can name a package."""
    return _PACKAGE_RE.fullmatch(path) is not None


def parse_label(text: str, *, package: str | None = None, where: str | None = None) -> Label:
    """Parse an absolute label, or a relative ``:name`` when ``package`` is given.

    ``//pkg`` alone means ``//pkg:pkg``'s last path element, as in Bazel.
    """
    if package is not None and (m := _RELATIVE_RE.fullmatch(text)):
        return Label(package, m["name"])
    m = _LABEL_RE.fullmatch(text)
    if not m:
        raise UserError(f"malformed label {text!r}", where=where, hint=SYNTAX_HINT)
    pkg = m["pkg"]
    name = m["name"] or (pkg.rsplit("/", 1)[-1] if pkg else None)
    if name is None:
        raise UserError(f"malformed label {text!r}: no target name", where=where, hint=SYNTAX_HINT)
    return Label(pkg, name)


class Pattern(NamedTuple):
    """A set of targets: one label, all targets of a package, or a package subtree."""

    package: str
    name: str | None  # None: every target of the package (":all")
    recursive: bool  # "//pkg/..." : every target of pkg and the packages below it

    def matches(self, label: Label) -> bool:
        if self.recursive:
            return not self.package or label.package == self.package or (
                label.package.startswith(self.package + "/")
            )
        return label.package == self.package and self.name in (None, label.name)

    def __str__(self) -> str:
        if self.recursive:
            return f"//{self.package}/..." if self.package else "//..."
        return f"//{self.package}:{self.name or 'all'}"


def parse_pattern(text: str) -> Pattern:
    """Parse a command-line target pattern."""
    if m := _RECURSIVE_RE.fullmatch(text):
        return Pattern(m["pkg"] or "", None, recursive=True)
    label = parse_label(text)
    if label.name in ("all", "*") and text.endswith((":all", ":*")):
        return Pattern(label.package, None, recursive=False)
    return Pattern(label.package, label.name, recursive=False)
