"""Workspace -> build graph -> ``dnn64-out/build.ninja`` (plus configs and a target index).

Targets are evaluated in dependency order, each rule implementation declaring
its actions. Per-action config files are rewritten only when their content
changes, so regenerating the graph alone never reruns a stage. build.ninja
regenerates itself (ninja's generator rule) whenever a BUILD.yaml, a rule
module, the generator's own code or the package tree changes.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import sys
from graphlib import CycleError, TopologicalSorter
from pathlib import Path
from typing import Any

from ninja.ninja_syntax import escape

from dnn64build import DATA_ROOT, PACKAGE_DIR, tool_path
from dnn64build.atomic_write import write_atomic, write_if_changed, write_text_if_changed
from dnn64build.errors import UserError, short_repr
from dnn64build.graph.actions import Action, BuildGraph, CommandAction
from dnn64build.graph.context import ActionContext, config_bytes, group_name
from dnn64build.graph.ninja_escape import NinjaWriter, unwritable
from dnn64build.graph.ninja_package import package_ninja
from dnn64build.rules_api import Target
from dnn64build.stages.registry import STAGES
from dnn64build.workspace.labels import Label
from dnn64build.workspace.manifest import Workspace, load_workspace
from dnn64build.workspace.root import TARGET_INDEX
from dnn64build.workspace.rule_loader import load_rules, rule_files

CLIENT = tool_path("dnn64build/worker/action.py")


def generate(root: Path) -> Workspace:
    """Load the workspace at ``root`` and write its ninja graph; returns the workspace."""
    if reason := unwritable(str(root)):
        raise UserError(f"the workspace's path cannot be written into build.ninja: {reason}",
                        where=repr(str(root)), hint="move or rename the workspace directory")
    rules = load_rules(root)
    workspace = load_workspace(root, rules)
    graph = evaluate(workspace)
    out = workspace.output_base
    try:
        out.mkdir(exist_ok=True)
        for action in graph.actions.values():
            if isinstance(action, Action):
                write_if_changed(out / action.config_path, config_bytes(action.config))
        for path, text in graph.files.items():
            write_text_if_changed(out / path, text)
        # Always rewritten: ninja must see build.ninja newer than what triggered its
        # regeneration.
        write_atomic(out / "build.ninja", ninja_text(workspace, graph).encode())
        write_text_if_changed(out / TARGET_INDEX,
                              json.dumps(index(workspace, graph), indent=1) + "\n")
    except OSError as e:
        raise UserError(f"cannot write {e.filename or out}: {e.strerror}") from None
    return workspace


def describe(root: Path) -> dict[str, Any]:
    """The target index of the workspace at ``root``, computed without writing anything."""
    workspace = load_workspace(root, load_rules(root))
    return index(workspace, evaluate(workspace))


def evaluate(workspace: Workspace) -> BuildGraph:
    """Run every target's rule implementation, dependencies first."""
    targets = workspace.targets
    for target in targets.values():
        for dep in target.deps:
            if dep not in targets:
                raise UserError(
                    f"target {target.label} depends on unknown target {dep}",
                    where=target.where,
                    hint=f"known targets in //{dep.package}: "
                    + (", ".join(sorted(str(t.name) for t in targets if t.package == dep.package))
                       or "none (no such package)"),
                )
    sorter = TopologicalSorter({label: set(t.deps) for label, t in targets.items()})
    try:
        order = list(sorter.static_order())
    except CycleError as e:
        cycle = " -> ".join(str(label) for label in e.args[1])
        raise UserError(f"dependency cycle: {cycle}", where=targets[e.args[1][0]].where) from None
    graph = BuildGraph()
    providers: dict[Label, Any] = {}
    for label in order:
        target = targets[label]
        declared = len(graph.actions)
        providers[label] = target.rule.implementation(
            ActionContext(target, workspace.root, graph, providers, targets)
        )
        check_file_names(target, list(graph.actions.values())[declared:])
    graph.validate()
    return graph


# File systems take names of 255 bytes; the build adds to an output's name (a temporary
# ".NAME.tmpPID" beside it, "NAME.tmp", "NAME.d"), so the names it declares stay shorter.
MAX_FILE_NAME = 200


def check_file_names(target: Target, actions: list[Action | CommandAction]) -> None:
    """Every file name ``target``'s actions write, derived from its name, fits a file
    system: refused here, before any action runs, rather than as an OSError in one."""
    for action in actions:
        paths = [*action.outputs.values()]
        if isinstance(action, Action):
            paths += [action.config_path, *([action.depfile] if action.depfile else [])]
        for name in (part for path in paths for part in path.split("/")):
            if len(name.encode()) > MAX_FILE_NAME:
                raise UserError(
                    f"target {target.label}: the file name {short_repr(name)}, made from the "
                    f"target's label, has {len(name.encode())} bytes; at most {MAX_FILE_NAME}",
                    where=target.where, hint="give the target (or its package) a shorter name")


def ninja_text(workspace: Workspace, graph: BuildGraph) -> str:
    buf = io.StringIO()
    ninja = NinjaWriter(buf, width=100)
    ninja.comment("Generated by dnn64build from the workspace's BUILD.yaml files. Do not edit.")
    ninja.variable("ninja_required_version", "1.10")
    ninja.variable("python", escape(shlex.quote(sys.executable)))
    ninja.newline()
    ninja.rule(
        "regen",
        f"$python -m dnn64build.graph.regen {escape(shlex.quote(str(workspace.root)))}",
        description="Regenerating build.ninja",
        generator=True,
    )
    regen_inputs = regeneration_inputs(workspace)
    ninja.build("build.ninja", "regen", implicit=regen_inputs)
    ninja.newline()
    # Every action goes through the tiny client: to the build's stage worker when there is
    # one (dnn64build build), run right there when not (ninja by hand).
    ninja.variable("client", f"$python -S -E {escape(shlex.quote(str(CLIENT)))}")
    stage_actions = [a for a in graph.actions.values() if isinstance(a, Action)]
    commands = [a for a in graph.actions.values() if isinstance(a, CommandAction)]
    for stage in sorted({a.stage for a in stage_actions}):
        ninja.rule(
            stage,
            f"$client stage {stage} $args",
            description="$mnemonic $progress",
            restat=True,
            # ninja reads the files a stage listed into .ninja_deps (and deletes the depfile)
            **({"depfile": "$stage_depfile", "deps": "gcc"} if STAGES[stage].depfile else {}),
        )
    for kind in sorted({a.kind for a in commands}):
        depfile = any(a.depfile for a in commands if a.kind == kind)
        ninja.rule(
            kind,
            "$client command $flags -- $argv",
            description="$mnemonic $progress",
            depfile="$out.d" if depfile else None,
            deps="gcc" if depfile else None,
            restat=True,
        )
    ninja.newline()
    for action in sorted(graph.actions.values(), key=lambda a: a.id):
        if isinstance(action, CommandAction):
            ninja.build(
                list(action.outputs.values()),
                action.kind,
                inputs=action.all_inputs(),
                implicit=[p for p in (action.tool, action.argv[0]) if p],
                variables={
                    "argv": shlex.join(action.argv),  # NinjaWriter escapes every variable
                    "flags": command_flags(action),
                    "progress": action.progress,
                    "mnemonic": action.mnemonic,
                },
            )
            continue
        args = [f"--config {shlex.quote(action.config_path)}"]
        args += [
            f"--in {n}={shlex.quote(p)}" for n, ps in sorted(action.inputs.items()) for p in ps
        ]
        args += [f"--out {n}={shlex.quote(p)}" for n, p in sorted(action.outputs.items())]
        variables = {"progress": action.progress, "mnemonic": action.mnemonic}
        if action.depfile:
            args.append(f"--depfile {shlex.quote(action.depfile)}")
            variables["stage_depfile"] = action.depfile
        ninja.build(
            sorted(action.outputs.values()),
            action.stage,
            inputs=action.all_inputs(),
            implicit=[action.config_path, *action.implicit],
            variables={"args": " ".join(args), **variables},
        )
    ninja.newline()
    for name, outputs in sorted(graph.groups.items()):
        ninja.build(name, "phony", outputs)
    return buf.getvalue()


def command_flags(action: CommandAction) -> str:
    """The client's flags: the outputs, the toolchain's identity file, and every file a
    remote cache key hashes (every file the command may read)."""
    flags = [f"--out {shlex.quote(p)}" for p in action.outputs.values()]
    if action.tool:
        flags.append(f"--toolchain {shlex.quote(action.tool)}")
    flags += [f"--read {shlex.quote(p)}" for p in sorted({*action.inputs, *action.key_inputs})]
    return " ".join(flags)


def written_files(graph: BuildGraph) -> list[str]:
    """The files the generator writes beside build.ninja (the actions' configs, the
    toolchains' identities): no ninja rule makes them, so a missing one (a target's folder
    deleted by hand) means the graph must be generated again."""
    return sorted({a.config_path for a in graph.actions.values() if isinstance(a, Action)}
                  | set(graph.files))


def regeneration_inputs(workspace: Workspace) -> list[str]:
    """What build.ninja is generated from (ninja paths): it regenerates when one changes."""
    out = workspace.output_base
    return sorted(
        {_ninja_path(p, out) for p in (*workspace.manifests, *workspace.directories)}
        | {_ninja_path(p, out) for p in rule_files(workspace.root)}
        | {str(p) for p in [*_python_files(PACKAGE_DIR), *_python_files(DATA_ROOT / "rules")]}
        | {_ninja_path(p, out) for p in _python_files(workspace.root / "rules")}
    )


def index(workspace: Workspace, graph: BuildGraph) -> dict[str, Any]:
    """What the CLI needs without loading the manifests: labels, their phony targets and how
    many actions building each one involves."""
    labels: dict[str, Any] = {}
    for label in sorted(workspace.targets):
        target = workspace.targets[label]
        groups = {
            name.partition("@")[2]: name
            for name in graph.groups
            if name.partition("@")[0] == group_name(label)
        }
        labels[str(label)] = {
            "rule": target.rule.kind,
            "deps": [str(d) for d in target.deps],
            "info": graph.info.get(label, {}),  # what it offers: rules_api OFFER_*
            "groups": groups,
            "outputs": {g: graph.groups[phony] for g, phony in groups.items()},
            "actions": {
                g: sorted(graph.producers(graph.groups[phony])) for g, phony in groups.items()
            },
        }
    return {"workspace": workspace.name, "root": str(workspace.root), "env": graph.env,
            "kinds": list(workspace.kinds), "unresolved": graph.unresolved,
            "regen_inputs": regeneration_inputs(workspace), "ninja": package_ninja(),
            "written": written_files(graph),
            "remote_cache": dict(workspace.remote_cache), "targets": labels}


def _ninja_path(path: Path, output_base: Path) -> str:
    return os.path.relpath(path, output_base)


def _python_files(directory: Path) -> list[Path]:
    """Every Python file under ``directory``. The generator's code, and the code of every
    stage and rule step: an edit can change what a stage or a step imports, so the sources
    the graph lists for it (stages/import_graph.py)."""
    return sorted(p for p in directory.rglob("*.py") if "__pycache__" not in p.parts)
