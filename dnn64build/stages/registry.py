"""Which module runs each stage, and which files besides its code it depends on.

Plain data, so the manifest layer can name stages without importing the
compiler. A stage's code is found from its imports (stages/import_graph.py: its module,
the stage runner and every project module they import, with the data files beside them);
``data`` names what it reads elsewhere. Both become implicit inputs of its actions:
editing the compiler reruns exactly the stages that use the edited code.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StageSpec:
    name: str
    module: str  # "dnn64build.stages.<x>", run as a function main(args)
    mnemonic: str  # short word shown in progress lines
    # tool_path names of the files/dirs it reads besides its code and the files beside it
    data: tuple[str, ...] = ()
    # "module:function" for a stage that reads files its inputs name (ONNX external data):
    # function(inputs) -> those paths, known before it runs. The stage then writes a
    # depfile naming every file it read, ninja tracks them, and a remote cache key covers
    # their content.
    reads: str | None = None

    @property
    def modules(self) -> tuple[str, ...]:
        """The modules whose imports make up the stage's code."""
        return (self.module, RUNNER, *([self.reads.partition(":")[0]] if self.reads else []))

    @property
    def depfile(self) -> bool:
        return self.reads is not None


RUNNER = "dnn64build.stages.__main__"  # what runs every stage (in the worker too)
STEP_STAGE = "step"
STEP_MODULE_INPUT = "step_module"

STAGES: dict[str, StageSpec] = {
    spec.name: spec
    for spec in (
        StageSpec("import", "dnn64build.stages.import_model", "Import",
                  reads="dnn64build.frontend.onnx_import:external_data_of"),
        StageSpec("quantize", "dnn64build.stages.quantize", "Quantize"),
        StageSpec("plan", "dnn64build.stages.plan", "Plan"),
        StageSpec("codegen", "dnn64build.stages.codegen", "Codegen"),
        StageSpec("program", "dnn64build.stages.program", "Program"),
        # A rule's own Python step (RuleContext.step): the rule module's files are its
        # input STEP_MODULE_INPUT; the config names the function (stages/step.py). It may
        # use any of the tool's code, so all of it is the step's source: sound, and a step
        # is cheap to rerun.
        StageSpec(STEP_STAGE, "dnn64build.stages.step", "Step", data=("dnn64build",)),
        # The toolchains' descriptors: where the fit check finds the toolchain's tools.
        StageSpec("pack", "dnn64build.stages.pack", "Pack", data=("third_party",)),
    )
}
