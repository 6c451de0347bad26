"""A rule kind defined in a workspace's own rules/, written only against rules_api: a custom
command and a Python step on a model's plan build, cache (a no-op rebuild runs nothing),
rerun exactly when what they read changes, and go through the remote cache like the
built-in actions. The oracle is the plan.json the test reads itself."""

from __future__ import annotations

import json
import re
import shutil

import onnx
import pytest

from tests.build.conftest import Workspace, tiny_mlp

RULE = '''\
import json

from dnn64build.rules_api import Rule, file_attr, labels_attr
from dnn64build_rules.builtin._model import ModelInfo


def count_buffers(args):
    plan = json.loads(args.input("plan").read_text())
    args.write_text("count", f"{{len(plan['buffers'])}}{suffix}\\n")


def _impl(ctx):
    (model,) = ctx.attrs["model"]
    arena = ctx.command(
        ["{{python}}", "{{script}}", "{{plan}}", "--out={{size}}"],
        inputs={{"script": ctx.attrs["script"], "plan": model.plan}},
        outputs={{"size": "arena.txt"}}, mnemonic="ArenaSize", progress=str(ctx.label),
    )
    count = ctx.step(count_buffers, inputs={{"plan": model.plan}},
                     outputs={{"count": "buffers.txt"}}, config={{}}, mnemonic="CountBuffers",
                     progress=str(ctx.label))
    ctx.add_group(None, [arena["size"], count["count"]])


RULE = Rule(
    kind="plan_stats",
    doc="the arena size and buffer count of a model's plan",
    implementation=_impl,
    attrs={{
        "model": labels_attr("the model", provides=ModelInfo, required=True),
        "script": file_attr("the script writing the arena size", required=True),
    }},
)
'''

SCRIPT = '''\
import json
import sys

plan = json.load(open(sys.argv[1]))
open(sys.argv[2].removeprefix("--out="), "w").write(f"{plan['arena_bytes']}{suffix}\\n")
'''


def _write_rule(ws: Workspace, suffix: str = "") -> None:
    ws.write("rules/plan_stats.py", RULE.format(suffix=suffix))


def _write_script(ws: Workspace, suffix: str = "") -> None:
    ws.write("tools/arena.py", SCRIPT.replace("{suffix}", suffix))


@pytest.fixture
def stats(ws_a: Workspace) -> Workspace:
    _write_rule(ws_a)
    _write_script(ws_a)
    ws_a.write("tools/BUILD.yaml", """\
        targets:
          - {rule: plan_stats, name: stats, model: ['//models:a'], script: arena.py}
        """)
    return ws_a


def _expected(ws: Workspace) -> tuple[str, str]:
    plan = json.loads((ws.root / "dnn64-out/bin/models/a/plan/plan.json").read_text())
    return f"{plan['arena_bytes']}\n", f"{len(plan['buffers'])}\n"


def _results(ws: Workspace) -> tuple[str, str]:
    out = ws.root / "dnn64-out/bin/tools/stats"
    return (out / "arena.txt").read_text(), (out / "buffers.txt").read_text()


def test_a_workspace_rule_builds_caches_and_rebuilds(stats: Workspace) -> None:
    ran = {m for m, _ in stats.build("//tools:stats")}
    assert {"ArenaSize", "CountBuffers", "Plan"} <= ran
    assert _results(stats) == _expected(stats)
    assert stats.build("//tools:stats") == []  # a no-op rebuild runs nothing
    # Editing the command's script reruns the command only.
    _write_script(stats, " bytes")
    assert [m for m, _ in stats.build("//tools:stats")] == ["ArenaSize"]
    assert _results(stats)[0] == _expected(stats)[0].replace("\n", " bytes\n")
    # Editing the step's code (the rule module) reruns the step; the command stays.
    _write_rule(stats, " buffers")
    assert [m for m, _ in stats.build("//tools:stats")] == ["CountBuffers"]
    assert _results(stats)[1] == _expected(stats)[1].replace("\n", " buffers\n")
    # A model with a bigger hidden layer (another plan): what reads the plan reruns.
    onnx.save(tiny_mlp(7, hidden=24), stats.root / "models/a.onnx")
    ran = {m for m, _ in stats.build("//tools:stats")}
    assert {"Import", "Plan", "ArenaSize", "CountBuffers"} <= ran
    arena, count = _expected(stats)
    assert _results(stats) == (arena.replace("\n", " bytes\n"), count.replace("\n", " buffers\n"))


def test_a_target_that_does_not_provide_the_record_is_an_error_at_its_line(
    stats: Workspace,
) -> None:
    stats.write("tools/BUILD.yaml", """\
        targets:
          - {rule: plan_stats, name: self, model: [':other'], script: arena.py}
          - rule: plan_stats
            name: other
            script: arena.py
            model: ['//models:a']
        """)
    proc = stats.run("build", "//tools:self", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert re.search(r"tools/BUILD.yaml:2:\d+: target //tools:self: attribute 'model': "
                     r"//tools:other \(a plan_stats\) provides no ModelInfo", proc.stderr)


def test_a_missing_file_attribute_is_an_error_at_its_line(stats: Workspace) -> None:
    stats.write("tools/BUILD.yaml", """\
        targets:
          - rule: plan_stats
            name: stats
            model: ['//models:a']
            script: nowhere.py
        """)
    proc = stats.run("build", "//tools:stats", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "tools/BUILD.yaml:5:5: target //tools:stats: attribute 'script': file not found: " \
           "tools/nowhere.py" in proc.stderr


@pytest.mark.nginx
def test_a_workspace_rule_goes_through_the_remote_cache(stats: Workspace,
                                                        nginx_url: str) -> None:
    url = nginx_url
    stats.run("build", "--remote-cache", url, "//tools:stats")
    shutil.rmtree(stats.root / "dnn64-out")
    proc = stats.run("build", "--remote-cache", url, "--explain", "//tools:stats")
    verdicts = dict(re.findall(r"^dnn64build explain: (\S+): (.*) \(key", proc.stderr,
                               re.M))
    assert verdicts["bin/tools/stats/arena.txt"] == "remote cache hit"
    assert verdicts["bin/tools/stats/buffers.txt"] == "remote cache hit"
    assert _results(stats) == _expected(stats)
    # Another script: another key, so the command runs (and the step still hits).
    _write_script(stats, " bytes")
    proc = stats.run("build", "--remote-cache", url, "--explain", "//tools:stats")
    verdicts = dict(re.findall(r"^dnn64build explain: (\S+): (.*) \(key", proc.stderr,
                               re.M))
    assert verdicts == {"bin/tools/stats/arena.txt": "remote cache miss: ran locally"}
