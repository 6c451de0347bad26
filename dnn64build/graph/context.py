"""The RuleContext implementation: turns a rule's declarations into Actions.

It owns the output layout: ``bin/<package>/<name>/`` per target and one config file
per action holding exactly the attributes its stage uses.
"""

from __future__ import annotations

import json
import os
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from dnn64build import DATA_ROOT
from dnn64build.errors import UserError
from dnn64build.graph.actions import Action, BuildGraph, GraphBug
from dnn64build.graph.ninja_escape import unwritable
from dnn64build.graph.toolchain_actions import ToolchainActions
from dnn64build.rule_modules import BUILTIN_PACKAGE
from dnn64build.rules_api import (
    FILE,
    OFFER_PLAN,
    OFFER_RUN,
    OFFER_TEST,
    RUN_HOST,
    RUN_MODELS,
    RUN_REFERENCE,
    RUN_ROM,
    SIZE,
    RunModel,
    Target,
    size_bytes,
)
from dnn64build.stages.import_graph import imported_files
from dnn64build.stages.io import StageArgs
from dnn64build.stages.registry import STAGES, STEP_MODULE_INPUT, STEP_STAGE
from dnn64build.stages.sources import stage_sources
from dnn64build.toolchains import toolchain_variables
from dnn64build.workspace.labels import Label, parse_label
from dnn64build.workspace.root import OUTPUT_BASE


def rule_code(module: types.ModuleType) -> list[Path]:
    """A rule module's file, then the files of the rules folders it imports (helper modules
    and packages, the built-in rules' records), transitively: a step's STEP_MODULE_INPUT."""
    path = Path(module.__file__ or "")
    packages = {BUILTIN_PACKAGE: DATA_ROOT / "rules", module.__package__ or "": path.parent}
    return [path, *sorted(imported_files([module.__name__], packages) - {path})]


def config_bytes(config: Mapping[str, Any]) -> bytes:
    return (json.dumps(config, indent=1, sort_keys=True) + "\n").encode()


class ActionContext:
    """The RuleContext of one target (see dnn64build/rules_api.py for the API)."""

    def __init__(
        self, target: Target, root: Path, graph: BuildGraph, providers: Mapping[Label, Any],
        targets: Mapping[Label, Target],
    ) -> None:
        self.label = target.label
        self.written = target.attrs
        self.where = target.where
        self._attr_where = target.attr_where
        self._root = root
        self._output_base = root / OUTPUT_BASE
        self._graph = graph
        self._dir = f"bin/{target.label.path}"
        self._tools = ToolchainActions(graph)
        self._steps: set[str] = set()  # the steps declared so far (function-key)
        self.attrs = resolve_attrs(self, target, providers, targets)

    def where_of(self, attr: str) -> str:
        """Where attribute ``attr`` (or the top-level one of ``a.b``) is written."""
        return self._attr_where.get(attr.partition(".")[0], self.where)

    def source(self, path: str, *, attr: str) -> str:
        """A file of the target's package, checked to exist inside the workspace; returns
        its ninja path."""
        self._check_writable(path, attr)
        package_dir = self._root / self.label.package
        full = (package_dir / path).resolve()
        if not full.is_relative_to(self._root.resolve()):
            raise UserError(
                f"target {self.label}: attribute {attr!r}: path {path!r} escapes the workspace",
                where=self.where_of(attr),
                hint="sources and data must live inside the workspace (copy or link them in)",
            )
        if not full.is_file():
            raise UserError(
                f"target {self.label}: attribute {attr!r}: file not found: "
                f"{full.relative_to(self._root.resolve())}",
                where=self.where_of(attr),
                hint="paths are relative to the package directory (the one holding BUILD.yaml)",
            )
        ninja_path = os.path.relpath(full, self._output_base)
        self._check_writable(ninja_path, attr)  # a link may lead to a name ninja cannot take
        return ninja_path

    def _check_writable(self, path: str, attr: str) -> None:
        if reason := unwritable(path):
            raise UserError(f"target {self.label}: attribute {attr!r}: path {path!r} cannot "
                            f"be used: {reason}", where=self.where_of(attr),
                            hint="rename the file")

    def action(
        self,
        stage: str,
        *,
        inputs: Mapping[str, str | list[str]],
        outputs: Mapping[str, str],
        config: Mapping[str, Any],
        progress: str,
        key: str | None = None,
    ) -> dict[str, str]:
        """Declare one action running the built-in ``stage``.

        ``outputs`` are file names relative to this target's output directory; the
        returned mapping gives their ninja paths, to pass as other actions' inputs.
        ``config`` is exactly the attributes the stage uses; it is written to a
        per-target file that changes only when they do. ``key`` tells apart several
        actions of one stage in one target.
        """
        suffix = f"-{key}" if key else ""
        return self._add(
            stage, self.label, key or "", inputs, self._outputs(outputs),
            f"{self._dir}/config/{stage}{suffix}.json", config, progress,
        )

    def step(
        self, function: Callable[[StageArgs], None], *,
        inputs: Mapping[str, str | list[str]], outputs: Mapping[str, str],
        config: Mapping[str, Any], mnemonic: str, progress: str, key: str | None = None,
    ) -> dict[str, str]:
        """Declare an action running ``function(args)``, a module-level function of a rule
        module, in the stage worker like a built-in stage: ``args`` (a StageArgs) holds
        ``config`` and the named inputs and outputs. The rule module's file and the rule
        code it imports (``rule_code``) are inputs of the action: editing one reruns the
        step, and a remote cache key hashes them. ``key`` tells apart several steps of one
        function in one target (each declares outputs of its own)."""
        module = sys.modules.get(function.__module__)
        path = getattr(module, "__file__", None)
        if path is None or getattr(module, function.__name__, None) is not function:
            raise GraphBug(f"{self.label}: a step must be a module-level function of a rule "
                           f"module, not {function!r}")
        code = rule_code(module)
        name = function.__name__ + (f"-{key}" if key else "")
        if name in self._steps:
            raise UserError(
                f"target {self.label}: ctx.step({function.__name__}) is declared twice"
                + (f" with key {key!r}" if key else ""), where=self.where,
                hint="give each step of one function in one target its own key= "
                "(and outputs of its own)")
        self._steps.add(name)
        return self._add(
            STEP_STAGE, self.label, name,
            {**inputs, STEP_MODULE_INPUT: [self._ninja_path(p) for p in code]},
            self._outputs(outputs), f"{self._dir}/config/step-{name}.json",
            {"label": str(self.label), "function": function.__name__, "config": dict(config)},
            progress, mnemonic=mnemonic,
        )

    def _ninja_path(self, path: Path) -> str:
        """A file's ninja path: relative inside the workspace, absolute for the tool's."""
        if path.is_relative_to(self._root.resolve()):
            return os.path.relpath(path, self._output_base)
        return str(path)

    def command(
        self, argv: Sequence[str], *, inputs: Mapping[str, str | list[str]],
        outputs: Mapping[str, str], mnemonic: str, progress: str,
    ) -> dict[str, str]:
        """Declare a command of the rule's own, run by ninja (and through the remote cache,
        keyed on its argv, its inputs' content and its outputs).

        ``argv`` items may name inputs and outputs as ``{name}`` (an item that is just
        ``{name}`` of a list input expands to one item per file), and ``{python}`` (this
        interpreter); ``{{``/``}}`` are literal braces. Every output must be named: the
        command writes it as ``PATH.tmp``, which replaces ``PATH`` when its content
        changed. The command runs in dnn64-out/; a bare program name is looked up in PATH
        now (and the program becomes an input of the action)."""
        paths = self._outputs(outputs)
        files = {n: [v] if isinstance(v, str) else list(v) for n, v in inputs.items()}
        return self._tools.command(
            expand_argv(argv, files, paths, where=self.where), inputs=files, outputs=paths,
            mnemonic=mnemonic, progress=progress, where=self.where,
        )

    def compile(
        self, toolchain: str, source: str, output: str, *, include_dirs: list[str],
        headers: list[str], progress: str,
    ) -> str:
        """Compile the C file ``source`` (a ninja path) to ``output`` (relative to this
        target's output directory) with ``toolchain``, as one ninja command whose header
        dependencies are tracked exactly; ``headers`` are the generated headers it may
        include. Returns the object's ninja path."""
        self._track_toolchain(toolchain)
        return self._tools.compile(
            toolchain, source, f"{self._dir}/{output}", include_dirs=include_dirs,
            headers=headers, progress=progress,
        )

    def archive(self, toolchain: str, objects: list[str], output: str, *,
                progress: str) -> str:
        """A static library ``output`` (target-relative) of ``objects``; its ninja path."""
        self._track_toolchain(toolchain)
        return self._tools.archive(toolchain, objects, f"{self._dir}/{output}",
                                   progress=progress)

    def link(self, toolchain: str, objects: list[str], output: str, *, memory: int,
             progress: str) -> tuple[str, str]:
        """Link ``objects`` into the program ``output`` (target-relative; for ``bare`` a raw
        image for ``memory`` bytes of RDRAM): (the linked file, the program)."""
        self._track_toolchain(toolchain)
        return self._tools.link(toolchain, objects, f"{self._dir}/{output}", memory=memory,
                                progress=progress)

    def runtime(self, toolchain: str) -> tuple[str, list[str]]:
        """The kernel library and the platform layer's objects of ``toolchain``, declared
        once for the whole workspace."""
        self._track_toolchain(toolchain)
        return self._tools.runtime(toolchain)

    def boot_stub(self) -> str:
        """The bare toolchain's raw boot stub (IPL3 slot), declared once."""
        self._track_toolchain("bare")
        return self._tools.boot_stub()

    def _track_toolchain(self, toolchain: str) -> None:
        """Read the variables that decide which executables ``toolchain`` runs through
        ``env``, so that changing one regenerates the graph (and its identity file)."""
        for name in toolchain_variables(toolchain):
            self.env(name)

    def env(self, name: str) -> str | None:
        """An environment variable the graph depends on: the graph is regenerated when its
        value changes."""
        value = os.environ.get(name)
        self._graph.env[name] = value
        return value

    def add_group(self, group: str | None, outputs: list[str]) -> None:
        """Name the outputs ``dnn64build build`` builds (group None) or that a command builds
        (a named group)."""
        self._graph.add_group(group_name(self.label, group), outputs)

    def offer_plan(self, *, plan: str, report: str, timeline: str) -> None:
        """This target has a memory plan: ``dnn64build plan`` builds and shows it."""
        self.add_group(OFFER_PLAN, [plan, report, timeline])
        self._offer(OFFER_PLAN, {"plan": plan, "report": report, "timeline": timeline})

    def offer_run(self, *, rom: list[str] | None, host: list[str],
                  models: Sequence[RunModel]) -> None:
        """This target is a program ``run`` and ``test`` can run: ``rom`` (the files holding
        the .z64, None when it has no ROM) and ``host`` (the native program and its .img
        asset image), running ``models`` in this order."""
        if rom is not None:
            self.add_group(RUN_ROM, rom)
        self.add_group(RUN_HOST, host)
        self.add_group(RUN_MODELS, [m.meta for m in models])
        self.add_group(RUN_REFERENCE, [path for m in models for path in m.ir])
        self._offer(OFFER_RUN, {"models": [str(m.label) for m in models],
                                "rom": rom is not None})

    def offer_test(self, *, inputs: str, outputs: str | None, labels: str | None) -> None:
        """Test data for ``dnn64build test`` (ninja paths): the inputs (.npz), optionally the
        expected outputs (.npz) and the name of an array of class labels in the inputs."""
        files = {"inputs": inputs, **({"outputs": outputs} if outputs else {})}
        self._offer(OFFER_TEST, {"labels": labels, "files": files})

    def _offer(self, what: str, info: Any) -> None:
        self._graph.info.setdefault(self.label, {})[what] = info

    def _outputs(self, outputs: Mapping[str, str]) -> dict[str, str]:
        return {n: f"{self._dir}/{p}" for n, p in outputs.items()}

    def _add(
        self,
        stage: str,
        label: Label,
        key: str,
        inputs: Mapping[str, str | list[str]],
        outputs: dict[str, str],
        config_path: str,
        config: Mapping[str, Any],
        progress: str,
        mnemonic: str | None = None,
    ) -> dict[str, str]:
        self._graph.add(
            Action(
                stage=stage,
                label=label,
                key=key,
                inputs={n: (v,) if isinstance(v, str) else tuple(v) for n, v in inputs.items()},
                outputs=outputs,
                config_path=config_path,
                config=dict(config),
                progress=progress,
                mnemonic=mnemonic or STAGES[stage].mnemonic,
                implicit=stage_sources(stage),
                depfile=config_path.removesuffix(".json") + ".d" if STAGES[stage].depfile
                else None,
            )
        )
        return outputs


def resolve_attrs(ctx: ActionContext, target: Target, providers: Mapping[Label, Any],
                  targets: Mapping[Label, Target]) -> dict[str, Any]:
    """The target's attributes as its implementation sees them (rules_api: FILE, LABELS,
    SIZE), checked, with errors at the attribute's file:line."""
    resolved = dict(target.attrs)
    for name, attr in target.rule.attrs.items():
        if name not in resolved:
            continue
        value = resolved[name]
        if attr.resolve == FILE:
            resolved[name] = ctx.source(value, attr=name)
        elif attr.labels:
            labels = [parse_label(text, package=target.label.package) for text in value]
            for label in labels:
                record = providers[label]
                if attr.provides is not None and not isinstance(record, attr.provides):
                    raise UserError(
                        f"target {target.label}: attribute {name!r}: {label} (a "
                        f"{targets[label].rule.kind}) provides no {attr.provides.__name__}",
                        where=ctx.where_of(name),
                        hint=f"{name} lists targets whose rule returns a "
                        f"{attr.provides.__name__}")
            resolved[name] = tuple(providers[label] for label in labels)
        elif attr.resolve == SIZE:
            resolved[name] = size_bytes(value)
            if attr.maximum is not None and resolved[name] > attr.maximum:
                raise UserError(
                    f"target {target.label}: {name} {value!r} ({resolved[name]} bytes) "
                    f"is more than {attr.maximum} bytes",
                    where=ctx.where_of(name))
            if resolved[name] < attr.minimum:  # the schema checks a count, not "1KiB"
                raise UserError(
                    f"target {target.label}: {name} {value!r} ({resolved[name]} bytes) "
                    f"is less than {attr.minimum} bytes",
                    where=ctx.where_of(name))
    return resolved


def expand_argv(argv: Sequence[str], inputs: Mapping[str, list[str]],
                outputs: Mapping[str, str], *, where: str) -> list[str]:
    """``argv`` with ``{name}`` placeholders replaced (see ActionContext.command)."""
    names: dict[str, str] = {"python": sys.executable}
    names.update({n: paths[0] for n, paths in inputs.items() if len(paths) == 1})
    names.update({n: f"{p}.tmp" for n, p in outputs.items()})
    expanded: list[str] = []
    for arg in argv:
        whole = arg[1:-1] if arg.startswith("{") and arg.endswith("}") else None
        if whole in inputs:
            expanded += inputs[whole]
            continue
        try:
            expanded.append(arg.format_map(names))
        except (KeyError, IndexError, ValueError) as e:
            raise UserError(f"command argument {arg!r} names no input or output ({e})",
                            where=where, hint=f"names: {', '.join(sorted(names))}") from None
        if reason := unwritable(expanded[-1], path=False):
            raise UserError(f"command argument {arg[:60]!r} cannot be a ninja command's: "
                            f"{reason}", where=where,
                            hint="pass such text in a file (an input) instead")
    unnamed = [n for n, p in outputs.items() if not any(f"{p}.tmp" in a for a in expanded)]
    if unnamed:
        raise UserError(f"the command names no path for output(s) {', '.join(unnamed)}",
                        where=where, hint="write each output as {name} in argv")
    return expanded


def group_name(label: Label, group: str | None = None) -> str:
    """The ninja phony target building a label's outputs (or one named group of them)."""
    name = f"target/{label.package}:{label.name}"
    return f"{name}@{group}" if group else name
