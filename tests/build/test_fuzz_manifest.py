"""Random workspaces thrown at load + graph generation + ``ninja -n``.

Whatever the package tree, names and attribute values, generation either succeeds with a
build.ninja that ninja reads back path for path, or fails with one UserError; any other
exception is a bug. The default tier tries a bounded number of examples; ``-m slow`` many.
"""

from __future__ import annotations

import datetime
import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from dnn64build.errors import UserError
from dnn64build.graph.generate import evaluate, generate
from dnn64build.graph.runner import ninja_binary
from dnn64build.workspace.manifest import load_workspace
from dnn64build.workspace.rule_loader import load_rules

# Characters that have broken build.ninja or the label grammar, plus ordinary ones.
_HOSTILE = " $:;|\n\r\t'\"\\#*?é{}[],&!"
_name_text = st.text(alphabet=st.sampled_from(list("abc_.+-09" + _HOSTILE)),
                     min_size=1, max_size=6)
_valid_names = st.sampled_from(["a", "b", "x.y", "x_y", "b_c", "c"])
names = st.one_of(_valid_names, _name_text)
# Mostly valid directories, so that most trees get as far as the graph.
directory_names = st.one_of(_valid_names, _valid_names, _valid_names, _name_text).filter(
    lambda n: "/" not in n and n not in (".", ".."))
packages = st.lists(directory_names, min_size=1, max_size=2).map("/".join)


def _label_texts(known: list[str]) -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from([":a", ":b", "//:a", "//models:a", "//...", ":"]),
                     names.map(lambda n: ":" + n), st.sampled_from(known or [":a"]), st.text())


def _values() -> st.SearchStrategy[Any]:
    scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True),
                        st.text(max_size=8))
    return st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
        max_leaves=6)


def _targets(known: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    model = st.fixed_dictionaries({
        "rule": st.just("n64_model"), "name": names,
        "src": st.one_of(st.just("m.onnx"), st.sampled_from(["m$ 1.onnx", "../m.onnx"]),
                         _name_text),
    }, optional={
        "memory": st.one_of(st.sampled_from(["4MiB", "8MiB", "16MiB", "65536 B"]),
                            st.integers(), st.floats(), st.text(max_size=6)),
        "toolchain": st.sampled_from(["host", "bare", "auto", "libdragon", "nope"]),
        "quantize": st.one_of(st.just({"mode": "none"}), _values()),
        "planner": st.one_of(st.just({"alignment": 16}), _values()),
        "title": st.text(max_size=24),
        "inputs": _values(),
    })
    rom = st.fixed_dictionaries({
        "rule": st.just("n64_rom"), "name": names,
        "models": st.lists(_label_texts(known), min_size=0, max_size=3),
    }, optional={"toolchain": st.sampled_from(["host", "auto"])})
    other = st.dictionaries(st.sampled_from(["rule", "name", "src", "models"]), _values(),
                            max_size=4)
    return st.one_of(model, model, rom, other)


@st.composite
def workspaces(draw: st.DrawFn) -> dict[str, Any]:
    """package path -> BUILD.yaml content (a structure to dump, or raw text); the root's
    is the workspace block's defaults."""
    tree: dict[str, Any] = {"": draw(st.one_of(
        st.just({"toolchain": "host"}),
        st.dictionaries(st.sampled_from(["memory", "toolchain", "quantize", "planner", "src"]),
                        _values(), max_size=3),
    ))}
    for package in draw(st.lists(packages, min_size=1, max_size=3, unique=True)):
        known = [f"//{p}:{t['name']}" for p, ts in tree.items() if isinstance(ts, dict)
                 for t in ts.get("targets", []) if isinstance(t.get("name"), str)]
        tree[package] = draw(st.one_of(
            st.fixed_dictionaries({"targets": st.lists(_targets(known), max_size=3)}),
            st.text(max_size=30).map(lambda t: ("raw", t)),
        ))
    return tree


# Raw YAML the structures above never produce: anchors whose aliases multiply (bombs of
# any width and depth), merge keys, brackets nested hundreds deep, any unicode, integers
# far beyond int64 (and digits beyond what Python converts).
_huge_ints = st.one_of(st.integers(), st.integers(-(10**30), 10**30),
                       st.sampled_from([2**31, 2**63, -(2**63), 10**100]))


def _bomb(levels: int, width: int) -> str:
    """A flow sequence of anchors, each ``width`` aliases of the one before."""
    parts = [f"&b0 [{', '.join(['lol'] * width)}]"]
    parts += [f"&b{i} [{', '.join([f'*b{i - 1}'] * width)}]" for i in range(1, levels)]
    return f"[{', '.join(parts)}]"


_raw_values = st.one_of(
    _huge_ints.map(str),
    st.integers(90, 6000).map(lambda n: "9" * n),  # Python converts at most 4300 digits
    st.builds(_bomb, st.integers(1, 9), st.integers(1, 12)),
    st.integers(0, 400).map(lambda depth: "[" * depth + "]" * depth),
    st.integers(0, 400).map(lambda depth: "{a: " * depth + "1" + "}" * depth),
    st.text(max_size=8).map(json.dumps),  # any unicode, escaped as YAML reads JSON
    st.lists(_huge_ints, min_size=1, max_size=4).map(str),
    st.sampled_from(["*m", "{<<: *m}", "{<<: [*m, *m], alignment: 3}", "{<<: *nope}",
                     "!!python/object:os.system ls", "&x [*x]", "~", "[]", "{}"]),
)
_raw_attrs = st.sampled_from(["memory", "title", "inputs", "planner", "quantize", "name",
                              "toolchain", "kernels", "test", "unknown", "1", "<<"])


@st.composite
def raw_manifests(draw: st.DrawFn) -> str:
    """A BUILD.yaml of n64_model targets with raw attribute values; the first defines the
    anchor ``m`` (a planner mapping) that later values merge or alias."""
    lines = ["targets:"]
    for k in range(draw(st.integers(1, 3))):
        name = draw(st.one_of(st.just(f"t{k}"), st.text(max_size=6).map(json.dumps)))
        lines += ["  - rule: n64_model", f"    name: {name}", "    src: m.onnx"]
        if k == 0:
            lines.append(f"    planner: &m {{alignment: {draw(_huge_ints)}}}")
        attrs = draw(st.dictionaries(_raw_attrs, _raw_values, max_size=3))
        lines += [f"    {attr}: {value}" for attr, value in attrs.items()
                  if not (k == 0 and attr == "planner")]
    return "\n".join(lines) + "\n"


def _write(root: Path, tree: dict[str, Any]) -> None:
    root.mkdir()
    workspace = {"name": "fuzz", "defaults": tree.get("", {"toolchain": "host"})}
    (root / "BUILD.yaml").write_text(yaml.safe_dump({"workspace": workspace, "targets": []}),
                                     encoding="utf-8", errors="replace")
    for package, content in tree.items():
        if not package:
            continue
        directory = root / package
        if package:
            try:
                directory.mkdir(parents=True, exist_ok=True)
            except OSError:  # a name the file system refuses: not this test's subject
                continue
        (directory / "m.onnx").write_bytes(b"")
        text = content[1] if isinstance(content, tuple) else yaml.safe_dump(content)
        (directory / "BUILD.yaml").write_text(text, encoding="utf-8", errors="replace")


def _check(root: Path) -> None:
    try:
        generate(root)
    except UserError as e:
        assert str(e).strip(), "an empty error message"
        assert len(str(e)) < 2000, f"a message of {len(str(e))} characters"
        event("refused: " + str(e).split(":")[-1].strip()[:30])
        return
    event("generated")
    out = root / "dnn64-out"
    proc = subprocess.run([ninja_binary(), "-n", "-C", str(out)], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # ninja reads back exactly the paths the graph holds: nothing lost to escaping.
    proc = subprocess.run([ninja_binary(), "-C", str(out), "-t", "targets", "all"],
                          capture_output=True, text=True, check=True)
    listed = {line.rsplit(": ", 1)[0] for line in proc.stdout.splitlines()}
    graph = evaluate(load_workspace(root, load_rules(root)))
    expected = {p for a in graph.actions.values() for p in a.outputs.values()}
    expected |= set(graph.groups) | {"build.ninja"}
    assert listed == expected


def _fuzz(tree: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory(prefix="dnn64fuzz") as tmp:
        root = Path(tmp) / "ws"
        _write(root, tree)
        _check(root)


_SETTINGS = dict(suppress_health_check=[HealthCheck.too_slow], derandomize=True)


@settings(max_examples=60, deadline=datetime.timedelta(seconds=10), **_SETTINGS)
@given(workspaces())
@example({"a": ("raw", "\x1f")})  # found by this test: a YAML ReaderError traceback
@example({"a": {"targets": [{"rule": []}]}})  # found by this test: unhashable rule kind
def test_random_workspaces_give_a_graph_or_one_clean_error(tree: dict[str, Any]) -> None:
    _fuzz(tree)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workspaces())
def test_random_workspaces_many(tree: dict[str, Any]) -> None:
    _fuzz(tree)


@settings(max_examples=60, deadline=datetime.timedelta(seconds=10), **_SETTINGS)
@given(raw_manifests())
@example(f"targets:\n  - rule: n64_model\n    title: {_bomb(9, 9)}\n")  # 387M strings
@example("targets:\n  - {rule: n64_model, name: a, src: m.onnx, 1: 2, zz: 3}\n")  # TypeError
def test_raw_yaml_gives_a_graph_or_one_clean_error(text: str) -> None:
    """Aliases, merge keys, nesting, unicode and huge integers (issue 25): bounded in
    time and message size, and never a traceback."""
    _fuzz({"models": ("raw", text)})


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw_manifests())
def test_raw_yaml_many(text: str) -> None:
    _fuzz({"models": ("raw", text)})
