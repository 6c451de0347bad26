"""Entry point of ninja's generator rule: ``python -m dnn64build.graph.regen ROOT``."""

import sys
import traceback
from pathlib import Path

from dnn64build.errors import UserError, machine_error
from dnn64build.graph.generate import generate

if __name__ == "__main__":
    try:
        generate(Path(sys.argv[1]))
    except UserError as e:
        print(f"ERROR: {e}", file=sys.stderr)
        sys.exit(1)
    except Exception as e:
        if (machine := machine_error(e)) is not None:  # a full disk, ...
            print(f"ERROR: {machine}", file=sys.stderr)
            sys.exit(1)
        traceback.print_exc()
        print("ERROR: internal error while regenerating build.ninja: this is a bug in "
              "dnn64build (or in a rule module), please report it with the traceback above",
              file=sys.stderr)
        sys.exit(70)
