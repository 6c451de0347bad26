"""Hostile names and label lists: refused at load with one clean message naming the culprit,
or, where ninja can represent them, built correctly (issue 13, items 10 and 11)."""

from __future__ import annotations

import re
import shutil

import pytest

from dnn64build import TOOL_ROOT
from tests.build.conftest import MODEL, ROOT_MANIFEST, Workspace
from tests.build.test_errors import _fails


def _root_targets(ws: Workspace, targets: str) -> None:
    ws.write("BUILD.yaml", ws.root.joinpath("BUILD.yaml").read_text().replace(
        "targets: []", "targets:\n" + targets))


@pytest.mark.parametrize("directory", ["bad dir", "a$b", "a;b", "new\nline", "a|b", "a:b"])
def test_a_package_directory_that_is_no_package_name_is_named(
    workspace: Workspace, directory: str
) -> None:
    workspace.add_model("a", seed=1, package=directory)
    workspace.write(f"{directory}/BUILD.yaml", MODEL)
    err = _fails(workspace, "query", "//...")
    assert f"package directory {directory!r} is not a valid package name" in err


def test_an_odd_directory_without_a_manifest_is_left_alone(workspace: Workspace) -> None:
    """Data directories named any way at all do not concern the graph."""
    workspace.add_model("a", seed=1)
    workspace.write("models/BUILD.yaml", MODEL)
    for name in ("my data", "cost$", "x\ny", "a|b"):
        (workspace.root / "models" / name).mkdir()
    for _ in range(2):  # the second one reads build.ninja back
        assert workspace.run("query", "//...").stdout.split() == ["//models:a"]


@pytest.mark.parametrize("name", ["a\\n", "a\\nb", "a b", "a$"])
def test_a_target_name_with_a_newline_or_dollar_is_refused(workspace: Workspace,
                                                           name: str) -> None:
    workspace.add_model("a", seed=1)
    workspace.write("models/BUILD.yaml", MODEL.replace("name: a", f'name: "{name}"'))
    err = _fails(workspace)
    assert "attribute 'name'" in err and "does not match" in err


def test_a_source_ninja_cannot_represent_is_refused(workspace: Workspace) -> None:
    workspace.add_model("a\nb", seed=1)
    workspace.write("models/BUILD.yaml", MODEL.replace("src: a.onnx", 'src: "a\\nb.onnx"'))
    err = _fails(workspace)
    assert "//models:a" in err and "attribute 'src'" in err
    assert "'\\n', which ninja cannot represent" in err


def test_a_source_named_with_dollars_spaces_and_colons_builds(workspace: Workspace) -> None:
    """ninja's escapes carry these names through build.ninja and the shell unchanged."""
    workspace.add_model("we$ird na:me$ $$x", seed=1)
    workspace.write("models/BUILD.yaml",
                    MODEL.replace("src: a.onnx", "src: 'we$ird na:me$ $$x.onnx'"))
    ran = {m for m, _ in workspace.build("//...")}
    assert {"Import", "Quantize", "Plan", "Codegen", "Compile", "Link", "Pack"} <= ran
    assert workspace.build("//...") == []


def test_the_same_model_twice_in_a_bundle_is_refused(workspace: Workspace) -> None:
    workspace.add_model("tiny", seed=1)
    tiny = MODEL.replace("name: a", "name: tiny").replace("a.onnx", "tiny.onnx")
    workspace.write("models/BUILD.yaml", tiny + "  - {rule: n64_rom, name: r, "
                    "models: [':tiny', '//models:tiny']}\n")
    err = _fails(workspace)
    assert "target //models:r: attribute 'models' names //models:tiny twice" in err
    assert "':tiny'" in err and "'//models:tiny'" in err


@pytest.mark.parametrize("first, second", [
    ("//models:x.y", "//models:x_y"),
    ("//models:b_c", "//models/b:c"),
])
def test_two_models_with_one_c_symbol_in_a_rom_are_refused(
    workspace: Workspace, first: str, second: str
) -> None:
    for label in (first, second):
        package, name = label.removeprefix("//").split(":")
        workspace.add_model(name, seed=1, package=package)
        path = workspace.root / package / "BUILD.yaml"
        text = path.read_text() if path.exists() else "targets:\n"
        workspace.write(f"{package}/BUILD.yaml",
                        text + f"  - {{rule: n64_model, name: {name}, src: {name}.onnx}}\n")
    _root_targets(workspace, f"  - {{rule: n64_rom, name: r, models: ['{first}', '{second}']}}")
    err = _fails(workspace)
    assert f"models {first} and {second} would both be C symbol" in err


def test_memory_with_a_trailing_newline_is_refused(workspace: Workspace) -> None:
    workspace.add_model("a", seed=1)
    workspace.write("models/BUILD.yaml", MODEL + '    memory: "4MiB\\n"\n')
    assert "attribute 'memory'" in _fails(workspace, "query", "//...")


@pytest.mark.parametrize("toolchain, memory, accepted", [
    ("bare", "8MiB", True),
    ("bare", "16MiB", False),
    ("bare", 99999999999999999999, False),
    ("libdragon", "9000 KiB", False),
    ("host", "16MiB", True),
    ("host", 99999999999999999999, False),
])
def test_memory_is_at_most_what_the_machine_has(workspace: Workspace, toolchain: str,
                                                memory: str | int, accepted: bool) -> None:
    workspace.add_model("a", seed=1)
    workspace.write("models/BUILD.yaml",
                    MODEL + f"    toolchain: {toolchain}\n    memory: {memory}\n")
    env = {"N64_INST": "/nonexistent"}  # libdragon resolves no tool while loading
    if accepted:
        assert workspace.run("query", "//...", env=env).stdout.split() == ["//models:a"]
    else:
        err = _fails(workspace, "query", "//...")
        assert f"target //models:a: memory {memory!r}" in err and "is more than" in err


def test_query_kind_of_an_unknown_rule_says_so(two_models: Workspace) -> None:
    proc = two_models.run("query", "kind(n64_modle, //...)", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "unknown rule kind 'n64_modle' (did you mean 'n64_model'?)" in proc.stderr
    # A known kind without targets is an empty answer, not an error.
    assert two_models.run("query", "kind(n64_rom, //...)").stdout == ""


@pytest.mark.parametrize("command", ["run", "plan"])
def test_a_pattern_naming_several_targets_is_refused_before_building(
    two_models: Workspace, command: str
) -> None:
    proc = two_models.run(command, "//models:all", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert f"names 2 targets (//models:a, //models:b); {command} takes one" in proc.stderr
    assert two_models.outputs() == {}, "it built first"


def test_a_rule_override_works_in_a_folder_named_like_the_tool(tmp_path) -> None:
    """Rule modules were cached by their folder's basename: a workspace folder named like
    the tool's checkout had its rules/n64_rom.py taken for the built-in one."""
    ws = Workspace(tmp_path / TOOL_ROOT.name)
    ws.write("BUILD.yaml", ROOT_MANIFEST.replace(
        "targets: []", "targets:\n  - {rule: n64_rom, name: r, models: ['//models:a']}"))
    ws.add_model("a", seed=1)
    ws.write("models/BUILD.yaml", MODEL)
    ws.write("rules/n64_rom.py", """\
        from dnn64build.rules_api import Attr, Rule

        RULE = Rule(kind="n64_rom", doc="replaced", implementation=lambda ctx: None,
                    attrs={"models": Attr({"type": "array"}, "models", labels=True)})
        """)
    proc = ws.run("build", "//:r", check=False)
    assert proc.returncode == 1 and "no default outputs" in proc.stderr


def test_switching_the_compiler_directory_reruns_what_it_compiled(workspace: Workspace,
                                                                   tmp_path) -> None:
    workspace.add_model("a", seed=1)
    workspace.write("models/BUILD.yaml", MODEL)
    workspace.build("//...")
    bindir, log = tmp_path / "bin", tmp_path / "used.log"
    bindir.mkdir()
    for tool in ("cc", "ar"):  # wrappers that note their use, then run the real tool
        wrapper = bindir / tool
        wrapper.write_text(f'#!/bin/sh\necho {tool} >> "{log}"\nexec {shutil.which(tool)} "$@"\n')
        wrapper.chmod(0o755)
    env = {"DNN64_HOST_BINDIR": str(bindir)}
    ran = workspace.run("build", "//...", env=env).stderr
    assert {"Compile", "Archive", "Link", "Pack"} <= set(re.findall(r"\] (\w+) ", ran))
    assert {"Import", "Quantize", "Plan", "Codegen"}.isdisjoint(re.findall(r"\] (\w+) ", ran))
    assert set(log.read_text().split()) == {"cc", "ar"}
    assert "0 actions run" in workspace.run("build", "//...", env=env).stderr
    # Back to the compiler on PATH: rebuilt with it again.
    assert set(re.findall(r"\] (\w+) ", workspace.run("build", "//...").stderr)) == {
        "Compile", "Archive", "Link", "Pack"}


def test_a_bug_while_regenerating_says_internal_error_with_its_traceback(
    two_models: Workspace,
) -> None:
    two_models.write("rules/boom.py", """\
        from dnn64build.rules_api import Rule

        RULE = Rule(kind="boom", doc="", implementation=lambda ctx: 1 // 0, attrs={})
        """)
    two_models.run("query", "//...")  # build.ninja exists: the next change regenerates it
    _root_targets(two_models, "  - {rule: boom, name: b}")
    proc = two_models.run("query", "//...", check=False)
    assert proc.returncode != 0
    assert "internal error" in proc.stderr
    assert "Traceback" in proc.stderr and "ZeroDivisionError" in proc.stderr


def test_a_rule_module_named_unlike_a_module_is_refused(two_models: Workspace) -> None:
    two_models.write("rules/a|b.py", """\
        from dnn64build.rules_api import Rule

        RULE = Rule(kind="ab", doc="", implementation=lambda ctx: None, attrs={})
        """)
    for _ in range(2):  # the second one would read back a build.ninja naming the file
        assert "rule module 'a|b.py' is not named like a Python module" in _fails(
            two_models, "query", "//...")
