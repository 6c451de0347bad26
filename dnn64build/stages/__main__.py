"""``python -m dnn64build.stages STAGE --config ... --in ... --out ...`` (run by ninja).

Imports only the one stage module it runs, so a stage starts quickly. A
stage's ``main(args)`` raises UserError for problems in the user's model or
data; those print as one line, and the action fails without touching its
outputs.
"""

import importlib
import sys
import traceback
import warnings

from dnn64build.errors import UserError, machine_error
from dnn64build.stages.io import parse_stage_args
from dnn64build.stages.registry import STAGES


def main(argv: list[str]) -> int:
    warnings.formatwarning = lambda message, *_args, **_kw: f"WARNING: {message}\n"
    if not argv or argv[0] not in STAGES:
        print(f"usage: python -m dnn64build.stages {{{','.join(STAGES)}}} ...", file=sys.stderr)
        return 2
    module = importlib.import_module(STAGES[argv[0]].module)
    try:
        args = parse_stage_args(argv[1:])
    except UserError as e:  # a damaged config file
        print(f"ERROR: {e}", file=sys.stderr)
        return 1
    try:
        module.main(args)
    except UserError as e:
        print(f"ERROR: {_naming_target(e, args.config.get('label'))}", file=sys.stderr)
        return 1
    except Exception as e:  # anything else is a bug: say so, with the traceback to report
        if (machine := machine_error(e)) is not None:  # a full disk, ...
            print(f"ERROR: {_naming_target(machine, args.config.get('label'))}",
                  file=sys.stderr)
            return 1
        traceback.print_exc()
        print(f"dnn64build: internal error in the {argv[0]} stage: this is a bug in "
              "dnn64build, please report it with the traceback above", file=sys.stderr)
        return 70
    return 0


def _naming_target(error: UserError, label: str | None) -> UserError:
    """The error with the target it happened in first (ninja paths such as
    ``../models/x.onnx`` mean little to the user; the label does)."""
    if label and not (error.where or "").startswith(label):
        error.where = f"{label}: {error.where}" if error.where else label
    return error


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
