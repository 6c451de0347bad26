"""Which module runs each stage, and which source files it depends on.

Plain data, so the manifest layer can name stages without importing the
compiler. A stage's ``sources`` (files or directories, named as ``dnn64build.tool_path``
resolves them) become implicit inputs of its actions: editing the compiler
reruns exactly the stages that use the edited code.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StageSpec:
    name: str
    module: str  # "dnn64build.stages.<x>", run as a function main(args)
    mnemonic: str  # short word shown in progress lines
    sources: tuple[str, ...]  # tool_path names of the files/dirs its code lives in
    # "module:function" for a stage that reads files its inputs name (ONNX external data):
    # function(inputs) -> those paths, known before it runs. The stage then writes a
    # depfile naming every file it read, ninja tracks them, and a remote cache key covers
    # their content.
    reads: str | None = None

    @property
    def depfile(self) -> bool:
        return self.reads is not None


STEP_STAGE = "step"
STEP_MODULE_INPUT = "step_module"

_COMMON = ("dnn64build/errors.py", "dnn64build/stages/__main__.py", "dnn64build/stages/io.py",
           "dnn64build/build_outputs.py")

STAGES: dict[str, StageSpec] = {
    spec.name: spec
    for spec in (
        StageSpec(
            "import", "dnn64build.stages.import_model", "Import",
            _COMMON + ("dnn64build/stages/import_model.py", "dnn64build/frontend",
                       "dnn64build/ir", "dnn64build/passes"),
            reads="dnn64build.frontend.onnx_import:external_data_of",
        ),
        StageSpec(
            "quantize", "dnn64build.stages.quantize", "Quantize",
            _COMMON + ("dnn64build/stages/quantize.py", "dnn64build/quant", "dnn64build/ir",
                       "dnn64build/array_files.py"),
        ),
        StageSpec(
            "plan", "dnn64build.stages.plan", "Plan",
            _COMMON + ("dnn64build/stages/plan.py", "dnn64build/planner", "dnn64build/ir",
                       "dnn64build/codegen"),  # the staging area is sized by codegen's rules
        ),
        StageSpec(
            "codegen", "dnn64build.stages.codegen", "Codegen",
            _COMMON + ("dnn64build/stages/codegen.py", "dnn64build/codegen", "dnn64build/ir"),
        ),
        StageSpec(
            "program", "dnn64build.stages.program", "Program",
            _COMMON + ("dnn64build/stages/program.py", "dnn64build/codegen"),
        ),
        # A rule's own Python step (RuleContext.step): the rule module's files are its
        # input STEP_MODULE_INPUT; the config names the function (stages/step.py). It may
        # use any of the tool's code, so all of it is the step's source: sound, and a step
        # is cheap to rerun.
        StageSpec(STEP_STAGE, "dnn64build.stages.step", "Step", ("dnn64build",)),
        StageSpec(
            "pack", "dnn64build.stages.pack", "Pack",
            _COMMON + ("dnn64build/stages/pack.py", "dnn64build/rom",
                       "dnn64build/toolchains", "third_party"),
        ),
    )
}
