"""Read BUILD.yaml files keeping line numbers, and refuse duplicate keys.

PyYAML silently keeps the last of two equal keys; a manifest with two
``name:`` entries is almost always a mistake, so it is an error here. Every
mapping is loaded as a ``SourceMap``: a dict that remembers where it started.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from dnn64build.errors import UserError


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
    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> SourceMap:
            seen: dict[Any, yaml.Node] = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                if key in seen:
                    mark = key_node.start_mark
                    raise UserError(
                        f"duplicate key {key!r} (first at line {seen[key].start_mark.line + 1})",
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
