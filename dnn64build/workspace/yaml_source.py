"""Read BUILD.yaml files keeping line numbers, and refuse duplicate keys and bombs.

PyYAML silently keeps the last of two equal keys; a manifest with two
``name:`` entries is almost always a mistake, so it is an error here. Every
mapping is loaded as a ``SourceMap``: a dict that remembers where it started.

A YAML alias is a reference, so a few hundred bytes of nested aliases ("billion
laughs") stand for billions of values once anything walks them (the schema check, an
error message quoting the value), and a few hundred nested brackets exhaust Python's
recursion. The loader counts, while it composes the document, the nodes the
document holds with every alias expanded, and how deep they nest: past
``MAX_NODES`` or ``MAX_DEPTH`` the file is refused at the node that crosses the line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from dnn64build.errors import UserError, short_repr

MAX_NODES = 100_000  # values in one BUILD.yaml, aliases expanded (a big one holds hundreds)
MAX_DEPTH = 32  # collections nested in one another (a BUILD.yaml needs about 6)
# Characters of one integer: int64 takes 19 digits, and Python converts no more than 4300
# (a longer one raised ValueError, an internal error).
MAX_INT_TEXT = 100


class SourceMap(dict):
    """A YAML mapping that knows its file, line and column (1-based)."""

    file: str = "?"
    line: int = 0
    column: int = 0
    key_where: dict[Any, str]  # key -> "file:line:column" where it is written

    def where_of(self, key: Any) -> str:
        """Where ``key`` is written (where the mapping starts if it is not there)."""
        return getattr(self, "key_where", {}).get(key, self.where)

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


def _loader_for(file: str) -> type[yaml.SafeLoader]:
    def refuse(problem: str, mark: yaml.Mark, hint: str) -> UserError:
        return UserError(problem, where=f"{file}:{mark.line + 1}:{mark.column + 1}", hint=hint)

    class Loader(yaml.SafeLoader):
        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self.nodes = 0  # composed so far, each alias counted as the nodes it stands for
            self.depth = 0  # of the node being composed
            self.expanded: dict[str, int] = {}  # anchor -> the nodes its value stands for
            self.open: set[str] = set()  # anchors whose value is being composed

        def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
            event = self.peek_event()
            if isinstance(event, yaml.AliasEvent):
                if event.anchor in self.open:  # a value that holds itself never ends
                    raise refuse(f"alias *{event.anchor} is inside the value it names",
                                 event.start_mark, "an alias may only repeat a finished value")
                self._count(self.expanded.get(event.anchor, 1), event.start_mark)
                return super().compose_node(parent, index)
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise refuse(f"values nested more than {MAX_DEPTH} deep", event.start_mark,
                             "a BUILD.yaml needs a few levels: flatten the structure")
            before = self.nodes
            self._count(1, event.start_mark)
            if event.anchor is not None:
                self.open.add(event.anchor)
            node = super().compose_node(parent, index)
            self.depth -= 1
            if event.anchor is not None:
                self.open.discard(event.anchor)
                self.expanded[event.anchor] = self.nodes - before
            return node

        def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
            if len(node.value) > MAX_INT_TEXT:
                raise refuse(f"an integer of {len(node.value)} characters (at most "
                             f"{MAX_INT_TEXT})", node.start_mark,
                             "no attribute takes a number this big")
            return super().construct_yaml_int(node)

        def _count(self, nodes: int, mark: yaml.Mark) -> None:
            self.nodes += nodes
            if self.nodes > MAX_NODES:
                raise refuse(f"more than {MAX_NODES} values with aliases expanded",
                             mark, "aliases that repeat aliases multiply: write the "
                             "values out, or split the file")

        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> SourceMap:
            seen: dict[Any, yaml.Node] = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                if key in seen:
                    mark = key_node.start_mark
                    raise UserError(
                        f"duplicate key {short_repr(key)} "
                        f"(first at line {seen[key].start_mark.line + 1})",
                        where=f"{file}:{mark.line + 1}:{mark.column + 1}",
                        hint="each key may appear once in a mapping",
                    )
                seen[key] = key_node
            mapping = SourceMap(super().construct_mapping(node, deep=True))
            mapping.file = file
            mapping.line = node.start_mark.line + 1
            mapping.column = node.start_mark.column + 1
            mapping.key_where = {
                self.construct_object(k, deep=True):
                    f"{file}:{k.start_mark.line + 1}:{k.start_mark.column + 1}"
                for k, _ in node.value
            }
            return mapping

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, Loader.construct_mapping)
    Loader.add_constructor("tag:yaml.org,2002:int", Loader.construct_yaml_int)
    return Loader


def load_yaml(path: Path, display_name: str) -> Any:
    """Parse one YAML file; syntax errors become a UserError at file:line:column."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise UserError(f"cannot read: {e.strerror}", where=display_name) from None
    try:
        return yaml.load(text, Loader=_loader_for(display_name))  # noqa: S506 - SafeLoader subclass
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f"{display_name}:{mark.line + 1}:{mark.column + 1}" if mark else display_name
        raise UserError(f"malformed YAML: {e.problem or e.context}", where=where) from None
    except yaml.reader.ReaderError as e:  # a character YAML does not allow
        line = text.count("\n", 0, e.position) + 1
        column = e.position - (text.rfind("\n", 0, e.position) + 1) + 1
        raise UserError(f"malformed YAML: character {e.character!r} is not allowed",
                        where=f"{display_name}:{line}:{column}") from None
