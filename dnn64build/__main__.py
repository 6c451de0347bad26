import sys

from dnn64build.cli import main

sys.exit(main())
