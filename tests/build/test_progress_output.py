"""What actions print reaches the user as plain text between ninja's progress lines, and
the summary counts the actions from those lines alone (issue 25, case 22): output without
a trailing newline, terminal escape sequences and a fake summary line, printed by a rule's
command (a remote cache hit replays a run's stderr the same way)."""

from __future__ import annotations

import re

from tests.build.conftest import Workspace

NOISE = ("\x1b[31mred\x1b[0m \x1b]0;a window title\x07\x1b[2Jcleared\r\n"
         "Build succeeded: 1 target, 99 actions run\nno newline at the end")

RULE = f'''\
from dnn64build.rules_api import Rule

CODE = "import sys; sys.stderr.write(" + {ascii(ascii(NOISE))} + "); open(sys.argv[1], 'w').close()"


def _impl(ctx):
    outputs = []
    for name in ("one", "two", "three"):
        done = ctx.command(["{{python}}", "-c", CODE, "{{out}}"], inputs={{}},
                           outputs={{"out": name + ".txt"}}, mnemonic="Noisy",
                           progress=f"{{ctx.label}} {{name}}")
        outputs.append(done["out"])
    ctx.add_group(None, outputs)


RULE = Rule(kind="noisy", doc="three commands printing noise", attrs={{}}, implementation=_impl)
'''


def test_noisy_action_output_keeps_progress_lines_and_summary_honest(
    workspace: Workspace,
) -> None:
    workspace.write("rules/noisy.py", RULE)
    workspace.write("tools/BUILD.yaml", "targets:\n  - {rule: noisy, name: noise}\n")
    stderr = workspace.run("build", "//tools:noise").stderr
    lines = stderr.splitlines()
    assert len([line for line in lines if re.match(r"\[\d/3\] Noisy //tools:noise", line)]) == 3
    assert [line for line in lines if line.startswith("Build succeeded")] == [lines[-1]]
    assert re.match(r"Build succeeded: 1 target, 3 actions run, 0 up to date", lines[-1])
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", stderr)  # no escape, no \r
    assert stderr.count("cleared") == 3 and stderr.count("no newline at the end") == 3
