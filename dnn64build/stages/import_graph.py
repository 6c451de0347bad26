"""The project files a module runs, found by reading its import statements (``ast``) and
theirs, transitively: what a stage's actions depend on, and what a rule step's do.

Every import statement counts, inside functions too (stages import some code lazily)
and on whichever branch it sits: the result is a superset of what one run imports, never
less. Importing ``a.b.c`` runs ``a/__init__.py`` and ``a/b/__init__.py`` too, so they
count. Names outside ``packages`` (the standard library, numpy, onnx) are not followed:
their versions are part of the keys already (remote_cache/keys.py).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from pathlib import Path

_IMPORT = re.compile(r"[ \t]*(import|from)[ \t]")
SOURCE_SUFFIXES = {".py", ".c", ".h", ".S", ".ld", ".yaml", ".json"}  # what a tool file is


def code_files(modules: Iterable[str], packages: Mapping[str, Path]) -> set[Path]:
    """``imported_files``, and the data files in the folders of those modules (such as
    codegen/kernel_sizes.json, which codegen/program_size.py reads)."""
    files = imported_files(modules, packages)
    return files | {p for folder in {f.parent for f in files} for p in folder.iterdir()
                    if p.suffix in SOURCE_SUFFIXES - {".py"} and p.is_file()}


def imported_files(modules: Iterable[str], packages: Mapping[str, Path]) -> set[Path]:
    """The files of ``modules`` (dotted names) and of every project module they import,
    transitively. ``packages`` maps a package name (``dnn64build``,
    ``dnn64build_rules.builtin``) to its directory."""
    found: set[Path] = set()
    seen: set[str] = set()
    todo = list(modules)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for module, path in _files_of(name, tuple(packages.items())):
            if path not in found:
                found.add(path)
                todo += _imports(path, module)
    return found


@cache
def _files_of(name: str, packages: tuple[tuple[str, Path], ...]) -> list[tuple[str, Path]]:
    """(module name, file) of module ``name`` and of each package above it that lies inside
    ``packages``; empty when ``name`` is no project module (or is a package's attribute)."""
    for top, directory in packages:
        if name != top and not name.startswith(top + "."):
            continue
        files = []
        parts = name[len(top):].split(".")[1:]
        for depth in range(len(parts) + 1):
            module = ".".join([top, *parts[:depth]])
            base = directory.joinpath(*parts[:depth])
            if (base / "__init__.py").is_file():
                files.append((module, base / "__init__.py"))
            elif depth and depth == len(parts) and base.with_suffix(".py").is_file():
                files.append((module, base.with_suffix(".py")))
            elif depth and not base.is_dir():  # no such module: an attribute of its package
                break
        return files
    return []


@cache
def _imports(path: Path, module: str) -> list[str]:
    """The absolute names every import statement of ``path`` (module ``module``) may load:
    for ``from x import y``, both ``x`` and ``x.y`` (y may be a submodule)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: list[str] = []
    for node in _import_statements(path.read_text(encoding="utf-8")):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            names.append(base)
            names += [f"{base}.{alias.name}" for alias in node.names if alias.name != "*"]
    return names


def _import_statements(source: str) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements of ``source``, each parsed on its own: parsing only them is
    some 20 times faster than parsing the whole module, which matters since the graph's
    generation scans the tool's code. A line of a string that reads like an import is
    parsed too: a name more, never one less (what does not parse is prose, and the lines
    after it are scanned on their own)."""
    lines = source.splitlines()
    start = 0
    while start < len(lines):
        line, start = lines[start], start + 1
        if not _IMPORT.match(line):
            continue
        statement, end = _code(line), start
        while end < len(lines) and (statement.endswith("\\")
                                    or statement.count("(") > statement.count(")")):
            statement, end = f"{statement}\n{_code(lines[end])}", end + 1
        try:
            tree = ast.parse(statement)
        except SyntaxError:
            continue
        start = end
        yield from (n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom))


def _code(line: str) -> str:
    """A line of an import statement without its comment (no string can be part of one)."""
    return line.partition("#")[0].strip()
