"""The layering of dnn64build/ that docs/architecture.md writes down: its "Layers" table is
read here, so the doc and the check cannot disagree. Every module belongs to one unit of
the table (a package folder, or a module named on a row of its own); an import may go to
the importer's own row or a row below, never up; no two units import each other, even
through others; no module imports itself through others. Every import statement counts:
inside functions, under ``if TYPE_CHECKING:``, on any branch. Every file the doc's
"Where each fact lives" names exists.

Also: no module imports another module's private name (``from m import _x``, ``m._x``)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "dnn64build"
DOC = ROOT / "docs" / "architecture.md"
UNIT = re.compile(r"`([\w/.]+)`")


def layer_rows(doc: str) -> list[tuple[str, list[str]]]:
    """(layer, units) of each row of the doc's "Layers" table, top row first: units are
    the code spans of its second column (``codegen/``, ``cli.py``, ``worker/client.py``)."""
    section = doc.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:-1] for line in section.splitlines() if line.startswith("|")]
    return [(cells[0].strip(), UNIT.findall(cells[1])) for cells in rows[2:]]


@cache
def modules() -> dict[str, Path]:
    """Every module of the package by dotted name."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


@cache
def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


@cache
def imports(name: str) -> tuple[tuple[str, int], ...]:
    """(imported project module, line) of every import statement of module ``name``:
    ``from m import x`` imports the module m.x when there is one, else m."""
    return tuple(_imports(name))


def _imports(name: str) -> Iterator[tuple[str, int]]:
    path = modules()[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules() else base
                       for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules():  # `import a.b.c` names a.b.c
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target, node.lineno


def unit_of(name: str, units: dict[str, int]) -> str | None:
    """The most specific unit of the table that holds module ``name``."""
    rel = modules()[name].relative_to(PACKAGE).as_posix()
    holding = [u for u in units if rel == u or (u.endswith("/") and rel.startswith(u))]
    return max(holding, key=len, default=None)


def test_the_table_places_every_module_once() -> None:
    rows = layer_rows(DOC.read_text())
    named = [u for _, units in rows for u in units]
    assert len(rows) > 3 and len(set(named)) == len(named), "a unit named twice"
    for unit in named:
        assert (PACKAGE / unit).exists(), f"docs/architecture.md names {unit}: no such path"
    units = {u: 0 for u in named}
    unplaced = [m for m in modules() if unit_of(m, units) is None]
    assert not unplaced, f"modules in no row of docs/architecture.md's Layers: {unplaced}"


def test_every_file_the_doc_names_for_a_fact_exists() -> None:
    facts = DOC.read_text().split("\n## Where each fact lives\n", 1)[1]
    named = [u for line in facts.splitlines() if line.startswith("|")
             for u in UNIT.findall(line.split("|")[2])]
    assert named and not [u for u in named if not (PACKAGE / u).exists()]


def test_imports_go_down_the_layers_only() -> None:
    layer = {u: depth for depth, (_, units) in enumerate(layer_rows(DOC.read_text()))
             for u in units}
    up = [f"{modules()[m].relative_to(ROOT)}:{line}: {m} ({unit_of(m, layer)}) imports "
          f"{t} ({unit_of(t, layer)}), a layer above"
          for m in modules() for t, line in imports(m)
          if layer[unit_of(t, layer)] < layer[unit_of(m, layer)]]
    assert not up, "\n".join(up)


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    try:
        TopologicalSorter(edges).prepare()
    except CycleError as exc:
        return exc.args[1]
    return None


def test_no_unit_imports_itself_through_others() -> None:
    units = {u: 0 for _, us in layer_rows(DOC.read_text()) for u in us}
    edges: dict[str, set[str]] = {}
    for m in modules():
        for t, _ in imports(m):
            a, b = unit_of(m, units), unit_of(t, units)
            if a != b:
                edges.setdefault(a, set()).add(b)
    assert _cycle(edges) is None, f"units in a circle: {' -> '.join(_cycle(edges))}"


def test_no_module_imports_itself_through_others() -> None:
    edges = {m: {t for t, _ in imports(m)} for m in modules()}
    assert _cycle(edges) is None, f"modules in a circle: {' -> '.join(_cycle(edges))}"


def private_imports(path: Path) -> Iterator[str]:
    """``from m import _x`` of a project module m, and ``m._x`` of a module imported as m
    (dunder names are no one's private)."""
    tree = parsed(path)
    private = re.compile(r"_(?!_)")
    bound: set[str] = set()  # local names of project modules
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "")
                                                  .startswith("dnn64build")):
            for alias in node.names:
                if private.match(alias.name):
                    yield f"{path.relative_to(ROOT)}:{node.lineno}: imports {alias.name}"
                bound.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names
                         if a.name.startswith("dnn64build"))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and private.match(node.attr)
                and isinstance(node.value, ast.Name) and node.value.id in bound):
            yield f"{path.relative_to(ROOT)}:{node.lineno}: uses {node.value.id}.{node.attr}"


def test_no_module_imports_a_private_name() -> None:
    found = [line for folder in ("dnn64build", "tools", "tests")
             for path in sorted((ROOT / folder).rglob("*.py")) for line in private_imports(path)]
    assert not found, "private names used across modules (make them public):\n" + \
        "\n".join(found)
