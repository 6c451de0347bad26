"""Settings for every test suite.

Under CI=true, hypothesis draws the same examples on every run (``derandomize``), so a
CI result can be reproduced; a developer's run explores new random examples each time
(and keeps the failures it finds in .hypothesis/ for the next run).
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
