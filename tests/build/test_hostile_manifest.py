"""Hostile and careless manifests, third round (issue 25): YAML bombs and deep nesting,
attribute values the schema let through to crash a stage, contradictions found late, and
names too long for a file system or a ROM title. Each is refused at load with one short
message, or (a long name without a title, a size in GiB) accepted as it should be."""

from __future__ import annotations

from pathlib import Path

import pytest

from dnn64build.errors import UserError
from dnn64build.graph.actions import Action
from dnn64build.graph.generate import evaluate
from dnn64build.workspace.manifest import load_workspace
from dnn64build.workspace.rule_loader import load_rules
from dnn64build.workspace.yaml_source import load_yaml
from tests.build.conftest import MODEL, Workspace
from tests.build.test_errors import _fails


def _actions(ws: Workspace, stage: str) -> list[Action]:
    """The workspace's actions of ``stage``, from the graph computed in memory."""
    graph = evaluate(load_workspace(ws.root, load_rules(ws.root)))
    return [a for a in graph.actions.values() if isinstance(a, Action) and a.stage == stage]


def _laughs(levels: int) -> str:
    """An alias bomb: ``levels`` anchors, each a list of nine aliases of the one before,
    so the last stands for 9**levels strings (a few hundred bytes of YAML)."""
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "".join(f"      {line}\n" for line in lines)


def test_an_alias_bomb_is_refused_while_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "BUILD.yaml"
    path.write_text(f"targets:\n  - rule: n64_model\n    title:\n{_laughs(9)}")
    assert len(path.read_bytes()) < 1000  # 387,420,489 strings, expanded
    with pytest.raises(UserError) as refused:
        load_yaml(path, "BUILD.yaml")
    assert "more than 100000 values with aliases expanded" in str(refused.value)
    assert refused.value.where == "BUILD.yaml:9:16"  # the alias that crosses the line


def test_merge_keys_count_what_they_expand_to(tmp_path: Path) -> None:
    """``<<: *a`` copies a mapping's entries: nested merges multiply like aliases."""
    lines = ["a0: &a0 {" + ", ".join(f"k{j}: {j}" for j in range(10)) + "}"]
    lines += [f"a{i}: &a{i} {{" + ", ".join(f"m{j}: {{<<: *a{i - 1}}}" for j in range(10))
              + "}" for i in range(1, 6)]
    path = tmp_path / "BUILD.yaml"
    path.write_text("".join(line + "\n" for line in lines))
    with pytest.raises(UserError, match="values with aliases expanded"):
        load_yaml(path, "BUILD.yaml")


def test_a_value_holding_itself_is_refused(tmp_path: Path) -> None:
    """A list that holds itself (PyYAML builds it; a mapping it refuses itself)."""
    path = tmp_path / "BUILD.yaml"
    path.write_text("targets:\n  - rule: n64_model\n    title: &t [*t]\n")
    with pytest.raises(UserError, match=r"alias \*t is inside the value it names") as refused:
        load_yaml(path, "BUILD.yaml")
    assert refused.value.where == "BUILD.yaml:3:16"


def test_a_big_value_is_quoted_short_in_the_message(ws_a: Workspace) -> None:
    """Below the bound, a value of 59,049 strings in the wrong place: the schema error
    quotes its start, not its 500 KB."""
    ws_a.write("models/BUILD.yaml", MODEL + f"    title:\n{_laughs(5)}")
    err = _fails(ws_a, "query", "//...")
    assert "attribute 'title': {'a0': ['lol', 'lol'" in err and "is not of type 'string'" in err
    assert len(err) < 500


def test_values_nested_hundreds_deep_are_refused(ws_a: Workspace) -> None:
    ws_a.write("models/BUILD.yaml", MODEL + "    inputs: " + "[" * 300 + "]" * 300 + "\n")
    err = _fails(ws_a, "query", "//...")
    assert "models/BUILD.yaml:5:42: values nested more than 32 deep" in err


@pytest.mark.parametrize("memory, wanted", [
    ("9" * 5000, "models/BUILD.yaml:5:13: an integer of 5000 characters (at most 100)"),
    ("0x" + "f" * 200, "models/BUILD.yaml:5:13: an integer of 202 characters (at most 100)"),
    (f'"{"9" * 5000}MiB"', "attribute 'memory': '99999"),
], ids=["5000-digits", "hex-202", "size-of-5000-digits"])
def test_integers_too_long_for_python_are_refused(ws_a: Workspace, memory: str,
                                                  wanted: str) -> None:
    """Python converts at most 4300 digits: more raised ValueError (an internal error)."""
    ws_a.write("models/BUILD.yaml", MODEL + f"    memory: {memory}\n")
    assert wanted in _fails(ws_a, "query", "//...")


def test_a_number_beside_a_string_as_unknown_keys(ws_a: Workspace) -> None:
    """Unknown keys are listed sorted: 1 and 'zz' do not compare (was a TypeError)."""
    ws_a.write("models/BUILD.yaml", MODEL + "    1: 2\n    zz: 3\n")
    err = _fails(ws_a, "query", "//...")
    assert "unknown key 1; unknown key 'zz'" in err


def test_an_alignment_that_is_no_power_of_two_is_refused_at_load(ws_a: Workspace) -> None:
    ws_a.write("models/BUILD.yaml", MODEL + "    planner: {alignment: 3}\n")
    err = _fails(ws_a)
    assert "attribute 'planner.alignment': 3 is not one of [1, 2, 4, 8" in err
    assert "[1/" not in err  # no action ran (the plan stage crashed on it)


@pytest.mark.parametrize("planner, wanted", [
    ("{fusion: none, input: stream}", "planner input: stream needs fusion dag or auto, not "
     "'none'"),
    ("{fusion: patch, output: stream}", "planner output: stream needs fusion dag or auto, not "
     "'patch'"),
    ("{staging_bytes: 4194304}", "planner staging_bytes 4194304 is not less than the target's "
     "memory (4194304 bytes)"),
])
def test_contradictory_planner_settings_are_refused_at_load(ws_a: Workspace, planner: str,
                                                            wanted: str) -> None:
    """docs/manifest.md, "Load before build": the plan stage found these after import and
    quantize had run."""
    ws_a.write("models/BUILD.yaml", MODEL + f"    planner: {planner}\n")
    err = _fails(ws_a)
    assert f"models/BUILD.yaml:5:5: target //models:a: {wanted}" in err
    assert "[1/" not in err


def test_a_library_name_too_long_for_a_file_name_is_refused_at_load(ws_a: Workspace) -> None:
    """A valid target name of 250 letters: its library's files (``NAME_weights.c``, ...)
    would pass the file system's 255 bytes."""
    name = "a" * 250
    ws_a.write("models/BUILD.yaml", MODEL + f"  - {{rule: n64_library, name: {name}, "
               "models: [':a'], toolchain: host}\n")
    err = _fails(ws_a)
    assert f"target //models:{name}: the file name 'aaaa" in err
    assert "has 250 bytes; at most 200" in err


@pytest.mark.parametrize("toolchain, title", [("host", ""), ("bare", ""),
                                              ("host", "    title: \"Caf\\u00e9\"\n")])
def test_a_name_longer_than_a_rom_title_is_cut_to_fit(workspace: Workspace, toolchain: str,
                                                      title: str) -> None:
    """Without ``title:``, a 22-letter name gives a ROM title of its first 20 (it failed the
    whole workspace at load, even for host, which has no title); a host program's title is
    never checked (nor given to its pack)."""
    workspace.add_model("a", seed=1)
    workspace.write("models/BUILD.yaml", MODEL.replace("name: a", "name: deeplabv3_mobilenet_v3")
                    + f"    toolchain: {toolchain}\n" + title)
    titles = {a.key: a.config.get("title") for a in _actions(workspace, "pack")}
    assert titles == {"host": None, **({"bare": "deeplabv3_mobilenet_"} if toolchain == "bare"
                                       else {})}


@pytest.mark.parametrize("memory, toolchain, size", [
    ("1GiB", "host", 2**30),
    ("2GiB", "host", 2**31),
    ("4MB", "bare", 4_000_000),
    ("512 kB", "bare", 512_000),
    ("1GB", "host", 10**9),
])
def test_sizes_in_gib_and_decimal_units(ws_a: Workspace, memory: str, toolchain: str,
                                        size: int) -> None:
    ws_a.write("models/BUILD.yaml", MODEL + f"    memory: {memory}\n    toolchain: {toolchain}\n")
    assert {a.config["memory"] for a in _actions(ws_a, "plan")} == {size}


@pytest.mark.parametrize("memory, wanted", [
    ("1GiB", "memory '1GiB' (1073741824 bytes) is more than an N64 has"),
    ("1KiB", "memory '1KiB' (1024 bytes) is less than 65536 bytes"),
])
def test_sizes_beyond_the_machine_or_below_the_minimum(ws_a: Workspace, memory: str,
                                                       wanted: str) -> None:
    ws_a.write("models/BUILD.yaml", MODEL + f"    memory: {memory}\n    toolchain: bare\n")
    with pytest.raises(UserError, match=wanted.replace("(", r"\(").replace(")", r"\)")):
        _actions(ws_a, "plan")


TWO_STEPS = '''\
from dnn64build.rules_api import Rule


def write_name(args):
    args.write_text("out", args.config["name"] + "\\n")


def _impl(ctx):
    outs = [ctx.step(write_name, inputs={}, outputs={"out": f"{n}.txt"}, config={"name": n},
                     mnemonic="WriteName", progress=n, **({"key": n} if KEYS else {}))
            for n in ("first", "second")]
    ctx.add_group(None, [o["out"] for o in outs])


RULE = Rule(kind="two_steps", doc="one step function twice", implementation=_impl, attrs={})
'''


@pytest.mark.parametrize("keys", [False, True])
def test_one_step_function_twice_in_a_target(workspace: Workspace, keys: bool) -> None:
    """Without keys: one error naming the target and the function (was GraphBug, "this is
    a bug"); with a key each, both steps run."""
    workspace.write("rules/two_steps.py", f"KEYS = {keys}\n" + TWO_STEPS)
    workspace.write("BUILD.yaml", workspace.root.joinpath("BUILD.yaml").read_text().replace(
        "targets: []", "targets:\n  - {rule: two_steps, name: t}"))
    if not keys:
        err = _fails(workspace, "query", "//...")
        assert "target //:t: ctx.step(write_name) is declared twice" in err
        assert "its own key=" in err
        return
    workspace.build("//:t")
    out = workspace.root / "dnn64-out" / "bin" / "t"
    assert [(out / f"{n}.txt").read_text() for n in ("first", "second")] == \
        ["first\n", "second\n"]


NEWLINE_COMMAND = '''\
from dnn64build.rules_api import Rule


def _impl(ctx):
    out = ctx.command(["{python}", "-c", "import sys\\nopen(sys.argv[1], 'w')", "{out}"],
                      inputs={}, outputs={"out": "out.txt"}, mnemonic="Write", progress="t")
    ctx.add_group(None, [out["out"]])


RULE = Rule(kind="newline_command", doc="a command argument with a newline",
            implementation=_impl, attrs={})
'''


def test_a_command_argument_with_a_newline_is_one_error(workspace: Workspace) -> None:
    """ninja cannot write a newline in a command: one error naming the target's rule and
    the argument (was an AssertionError from ninja_syntax, an internal error)."""
    workspace.write("rules/newline_command.py", NEWLINE_COMMAND)
    workspace.write("BUILD.yaml", workspace.root.joinpath("BUILD.yaml").read_text().replace(
        "targets: []", "targets:\n  - {rule: newline_command, name: t}"))
    err = _fails(workspace, "build", "//:t")
    assert "cannot be a ninja command's: it contains '\\n'" in err, err
    assert "import sys" in err
