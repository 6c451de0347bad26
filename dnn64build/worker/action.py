"""What ninja runs for every action: ``python -S -E action.py ...`` (see client.py).

Only these few lines are compiled on every run (Python never caches the script it is
given); client.py is imported as a module, so its bytecode is cached like any other.
"""

import sys

from client import main  # this file's directory is sys.path[0]

sys.exit(main(sys.argv[1:]))
