import sys

from tools.zoo.generate import main

sys.exit(main())
