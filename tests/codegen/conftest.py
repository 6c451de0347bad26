"""Make the repository root importable (tools.zoo), and share one runtime object cache."""

import sys
from pathlib import Path

import pytest

_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)


@pytest.fixture(scope="session")
def runtime_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Compiled kernels + platform objects, shared by every host run of the session."""
    return tmp_path_factory.mktemp("runtime")
