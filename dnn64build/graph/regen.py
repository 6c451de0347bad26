"""Entry point of ninja's generator rule: ``python -m dnn64build.graph.regen ROOT``."""

import sys
from pathlib import Path

from dnn64build.errors import UserError
from dnn64build.graph.generate import generate

if __name__ == "__main__":
    try:
        generate(Path(sys.argv[1]))
    except UserError as e:
        print(f"ERROR: {e}", file=sys.stderr)
        sys.exit(1)
