"""The tool's own code and files are inputs of the actions that run them (issue 25, cases 3
and 4): a stage depends on every project module it imports, a rule step on the rule code
its module imports (helper packages too), a command on the tool files it names. The
oracle for "what a stage runs" is ``sys.modules`` after running it, not the import scan
that declares the sources."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from dnn64build import DATA_ROOT, PACKAGE_DIR
from dnn64build.graph.runner import ninja_binary
from dnn64build.remote_cache import keys
from dnn64build.remote_cache.cached import parse_request
from dnn64build.stages.registry import STAGES, STEP_MODULE_INPUT
from dnn64build.stages.sources import stage_sources
from dnn64build.toolchains.bare import LINKER_SCRIPT
from tests.build.conftest import Workspace

RULE = '''\
from dnn64build.rules_api import Rule, labels_attr
from dnn64build_rules.builtin._model import ModelInfo

from ._lib import SUFFIX


def count_nodes(args):
    plan = args.input("plan").read_text()
    args.write_text("count", f"{{plan.count(chr(10))}}{{SUFFIX}}\\n")


def _impl(ctx):
    (model,) = ctx.attrs["model"]
    count = ctx.step(count_nodes, inputs={{"plan": model.plan}}, outputs={{"count": "n.txt"}},
                     config={{}}, mnemonic="CountLines", progress=str(ctx.label))
    ctx.add_group(None, [count["count"]])


RULE = Rule(kind="line_count", doc="lines of a model's plan", implementation=_impl,
            attrs={{"model": labels_attr("the model", provides=ModelInfo, required=True)}})
'''

# What a stage run imports: run it as ninja's client would (a fresh interpreter), then
# list the files of every module loaded.
_RUN_AND_LIST = """\
import json, sys
from dnn64build.stages.__main__ import main
status = main(sys.argv[1:])
print(json.dumps([getattr(m, "__file__", None) for m in list(sys.modules.values())]))
sys.exit(status)
"""


@pytest.fixture
def counted(ws_a: Workspace) -> Workspace:
    """//models:a and //tools:lines, a workspace rule whose step imports a helper package."""
    ws_a.write("rules/line_count.py", RULE.format())
    ws_a.write("rules/_lib/__init__.py", 'SUFFIX = ""\n')
    ws_a.write("tools/BUILD.yaml", """\
        targets:
          - {rule: line_count, name: lines, model: ['//models:a']}
        """)
    return ws_a


def _stage_commands(ws: Workspace) -> list[list[str]]:
    """The client arguments (``stage STAGE ...``) of every stage action in the graph."""
    listed = subprocess.run([ninja_binary(), "-t", "commands"], cwd=ws.root / "dnn64-out",
                            capture_output=True, text=True, check=True).stdout
    commands = [shlex.split(line) for line in listed.splitlines()]
    return [argv[argv.index("stage"):] for argv in commands if "stage" in argv]


def _project_files(files: list[str | None], ws: Workspace) -> set[Path]:
    roots = [PACKAGE_DIR, (DATA_ROOT / "rules").resolve(), (ws.root / "rules").resolve()]
    return {Path(f).resolve() for f in files if f
            and any(Path(f).resolve().is_relative_to(r) for r in roots)}


def test_every_project_module_a_stage_runs_is_among_its_sources(counted: Workspace) -> None:
    counted.build("//...")
    ran: set[str] = set()
    for argv in _stage_commands(counted):
        stage = argv[1]
        proc = subprocess.run([sys.executable, "-c", _RUN_AND_LIST, *argv[1:]],
                              cwd=counted.root / "dnn64-out", capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        loaded = _project_files(json.loads(proc.stdout.splitlines()[-1]), counted)
        declared = {Path(p).resolve() for p in stage_sources(stage)}
        declared |= {(counted.root / "dnn64-out" / v.partition("=")[2]).resolve()
                     for v in argv[2:] if v.startswith(f"{STEP_MODULE_INPUT}=")}
        assert loaded and loaded <= declared, f"{stage}: undeclared {sorted(loaded - declared)}"
        ran.add(stage)
    assert ran == set(STAGES)


@contextmanager
def _touched(path: Path) -> Iterator[None]:
    """``path`` newer than every output (same bytes), its time restored afterwards."""
    before = path.stat()
    try:
        time.sleep(0.05)
        os.utime(path)
        yield
    finally:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def _ninja(ws: Workspace, outputs: list[str]) -> set[str]:
    """Build ``outputs`` with ninja alone (no runtime library to compile first): the
    mnemonics of the actions it ran."""
    proc = subprocess.run([ninja_binary(), *outputs], cwd=ws.root / "dnn64-out",
                          capture_output=True, text=True, check=True)
    return set(re.findall(r"^\[\d+/\d+\] (\w+) ", proc.stdout, re.M))


def test_editing_a_module_only_codegen_imports_reruns_codegen(ws_a: Workspace) -> None:
    """planner/dagstream.py is code of the codegen stage (it imports it) but was not among
    its hand-listed sources."""
    ws_a.run("query", "//models:a")  # writes the graph
    (codegen,) = [a for a in _stage_commands(ws_a) if a[1] == "codegen"]
    outputs = [v.partition("=")[2] for f, v in zip(codegen, codegen[1:], strict=False)
               if f == "--out"]
    assert "Codegen" in _ninja(ws_a, outputs)
    with _touched(PACKAGE_DIR / "planner" / "dagstream.py"):
        ran = _ninja(ws_a, outputs)
    assert "Codegen" in ran and "Import" not in ran


def test_editing_codegen_the_plan_stage_does_not_import_reruns_codegen_only(
    ws_a: Workspace,
) -> None:
    """The plan stage asks codegen for the code's shape (codegen/shape.py) but not for the C
    it writes (codegen/model.py): an edit there is no reason to plan again (issue 27)."""
    ws_a.run("query", "//models:a")  # writes the graph
    outputs = [v.partition("=")[2] for argv in _stage_commands(ws_a)
               if argv[1] in ("plan", "codegen")
               for f, v in zip(argv, argv[1:], strict=False) if f == "--out"]
    assert {"Plan", "Codegen"} <= _ninja(ws_a, outputs)
    with _touched(PACKAGE_DIR / "codegen" / "model.py"):
        ran = _ninja(ws_a, outputs)
    assert "Codegen" in ran and "Plan" not in ran


def _step_key(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> str:
    (argv,) = [a for a in _stage_commands(ws) if a[1] == "step"]
    monkeypatch.chdir(ws.root / "dnn64-out")
    keys.file_digest.cache_clear()
    return parse_request(argv).key


def test_editing_a_rule_helper_package_reruns_the_step_and_changes_its_key(
    counted: Workspace, monkeypatch: pytest.MonkeyPatch,
) -> None:
    counted.build("//tools:lines")
    before = _step_key(counted, monkeypatch)
    monkeypatch.chdir(counted.root)
    counted.write("rules/_lib/__init__.py", 'SUFFIX = " lines"\n')
    assert [m for m, _ in counted.build("//tools:lines")] == ["CountLines"]
    assert (counted.root / "dnn64-out/bin/tools/lines/n.txt").read_text().endswith(" lines\n")
    assert _step_key(counted, monkeypatch) != before


@pytest.mark.slow
def test_editing_the_bare_linker_script_relinks(ws_a: Workspace, bare: object) -> None:
    """The script is named only on the link's command line (-T): it is an input too."""
    manifest = ws_a.root / "BUILD.yaml"
    manifest.write_text(manifest.read_text().replace("toolchain: host", "toolchain: bare"))
    ws_a.build("//models:a")
    with _touched(LINKER_SCRIPT):
        ran = [mnemonic for mnemonic, _ in ws_a.build("//models:a")]
    assert "Link" in ran and "Compile" not in ran
