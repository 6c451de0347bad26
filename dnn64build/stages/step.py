"""Step stage: a rule's own Python step (RuleContext.step).

The config names the function; the rule module's file comes first in input
STEP_MODULE_INPUT (its helper modules after it). The function receives the step's
own config and inputs.
"""

from __future__ import annotations

from dataclasses import replace

from dnn64build.rule_modules import import_rule_module
from dnn64build.stages.io import StageArgs
from dnn64build.stages.registry import STEP_MODULE_INPUT


def main(args: StageArgs) -> None:
    module = import_rule_module(args.inputs[STEP_MODULE_INPUT][0].resolve())
    function = getattr(module, args.config["function"])
    inputs = {n: paths for n, paths in args.inputs.items() if n != STEP_MODULE_INPUT}
    function(replace(args, config=args.config["config"], inputs=inputs))
