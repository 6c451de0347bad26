"""Commands that need no compiler stage: query, clean, the workspace lock, custom rules."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dnn64build.graph.runner import workspace_lock
from tests.build.conftest import Workspace

BUNDLE = "targets:\n  - {rule: n64_rom, name: demo_rom, models: ['//models:a', '//models:b']}\n"


def test_query_patterns_and_functions(two_models: Workspace) -> None:
    root = two_models.root.joinpath("BUILD.yaml")
    root.write_text(root.read_text().replace("targets: []\n", BUNDLE))
    assert two_models.run("query", "//...").stdout.split() == [
        "//:demo_rom", "//models:a", "//models:b"]
    assert two_models.run("query", "//models:all").stdout.split() == ["//models:a", "//models:b"]
    assert two_models.run("query", "//models/...").stdout.split() == [
        "//models:a", "//models:b"]
    assert two_models.run("query", "deps(//:demo_rom)").stdout.split() == [
        "//:demo_rom", "//models:a", "//models:b"]
    assert two_models.run("query", "rdeps(//models:a)").stdout.split() == [
        "//:demo_rom", "//models:a"]
    assert two_models.run("query", "kind(n64_rom, //...)").stdout.split() == ["//:demo_rom"]


def test_query_from_a_subdirectory_finds_the_root(two_models: Workspace) -> None:
    out = two_models.run("query", "//...", cwd=two_models.root / "models").stdout.split()
    assert out == ["//models:a", "//models:b"]


def test_manifest_edit_regenerates_the_graph(two_models: Workspace) -> None:
    assert two_models.run("query", "//...").stdout.split() == ["//models:a", "//models:b"]
    two_models.write("models/BUILD.yaml", "targets:\n  - {rule: n64_model, name: z, src: a.onnx}\n")
    assert two_models.run("query", "//...").stdout.split() == ["//models:z"]


def test_clean_expunge_removes_the_output_base(two_models: Workspace) -> None:
    two_models.run("query", "//...")
    assert (two_models.root / "dnn64-out" / "build.ninja").exists()
    two_models.run("clean", "--expunge")
    assert not (two_models.root / "dnn64-out").exists()


def test_a_second_command_waits_for_the_workspace_lock(two_models: Workspace) -> None:
    with workspace_lock(two_models.root):
        proc = subprocess.Popen(
            [sys.executable, "-m", "dnn64build", "query", "//..."], cwd=two_models.root,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        time.sleep(1.5)
        assert proc.poll() is None, "the second command did not wait for the lock"
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert "another build is running in this workspace" in stderr
    assert stdout.split() == ["//models:a", "//models:b"]


def test_a_workspace_can_add_its_own_rule_kind(two_models: Workspace) -> None:
    two_models.write(
        "rules/model_group.py",
        '''\
        from dnn64build.rules_api import Attr, Rule


        def _impl(ctx):
            return ctx.attrs["members"]


        RULE = Rule(
            kind="model_group",
            doc="names a group of models",
            implementation=_impl,
            attrs={"members": Attr({"type": "array", "items": {"type": "string"}}, "models",
                                   labels=True)},
        )
        ''',
    )
    two_models.write("BUILD.yaml", two_models.root.joinpath("BUILD.yaml").read_text().replace(
        "targets: []", "targets:\n  - {rule: model_group, name: g, members: ['//models:a']}"))
    assert two_models.run("query", "kind(model_group, //...)").stdout.split() == ["//:g"]
    assert two_models.run("query", "deps(//:g)").stdout.split() == ["//:g", "//models:a"]


def test_deleting_a_package_regenerates_the_graph(two_models: Workspace) -> None:
    two_models.add_model("c", seed=3, package="more")
    two_models.write("more/BUILD.yaml", "targets:\n  - {rule: n64_model, name: c, src: c.onnx}\n")
    assert "//more:c" in two_models.run("query", "//...").stdout.split()
    shutil.rmtree(two_models.root / "more")
    assert two_models.run("query", "//...").stdout.split() == ["//models:a", "//models:b"]


def test_the_graph_follows_the_environment_the_rules_read(two_models: Workspace) -> None:
    manifest = two_models.root / "BUILD.yaml"
    manifest.write_text(manifest.read_text().replace("toolchain: host", "toolchain: auto"))
    graph = two_models.root / "dnn64-out" / "build.ninja"
    two_models.run("query", "//...")
    assert "compile/bare/" in graph.read_text() and "compile/libdragon/" not in graph.read_text()
    # toolchain: auto means libdragon where $N64_INST is set: no manifest edit needed.
    two_models.run("query", "//...", env={"N64_INST": str(two_models.root / "sdk")})
    assert "compile/libdragon/" in graph.read_text()


def test_a_workspace_rule_replaces_the_built_in_kind(two_models: Workspace) -> None:
    # A workspace that is itself a copy of the tool's tree carries the same rules/.
    two_models.write("rules/model_alias.py", """\
        from dnn64build.rules_api import Attr, Rule

        RULE = Rule(kind="n64_rom", doc="replaced", implementation=lambda ctx: None,
                    attrs={"models": Attr({"type": "array"}, "models", labels=True)})
        """)
    root = two_models.root / "BUILD.yaml"
    root.write_text(root.read_text().replace(
        "targets: []", "targets:\n  - {rule: n64_rom, name: r, models: ['//models:a']}"))
    assert two_models.run("query", "kind(n64_rom, //...)").stdout.split() == ["//:r"]
    # The replacement builds nothing, unlike the built-in n64_rom.
    proc = two_models.run("build", "//:r", check=False)
    assert proc.returncode == 1 and "no default outputs" in proc.stderr


def test_one_kind_twice_in_one_directory_is_an_error(two_models: Workspace) -> None:
    for name in ("one", "two"):
        two_models.write(f"rules/{name}.py", """\
            from dnn64build.rules_api import Rule

            RULE = Rule(kind="twin", doc="", implementation=lambda ctx: None, attrs={})
            """)
    proc = two_models.run("query", "//...", check=False)
    assert proc.returncode == 1 and "rule kind 'twin' is defined twice" in proc.stderr


def test_actions_get_one_blas_thread_unless_the_user_chose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Set before ninja starts, so every action and the worker inherit it."""
    from dnn64build.cli import main

    monkeypatch.chdir(tmp_path)  # no workspace: the command fails after the set-up
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "4")
    assert main(["query", "//..."]) == 1
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    assert os.environ["OMP_NUM_THREADS"] == "4"
