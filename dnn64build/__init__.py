"""dnn64build: compile ONNX neural networks into Nintendo 64 ROMs."""

from pathlib import Path

__version__ = "0.1.0"

PACKAGE_DIR = Path(__file__).resolve().parent
# The directory holding the package: the checkout, or site-packages when installed. The
# stage registry's source paths ("dnn64build/...") and remote cache keys are relative to it.
TOOL_ROOT = PACKAGE_DIR.parent
# Where rules/, kernels/ and third_party/ are read from at build time: beside the package in
# a checkout (and an editable install), inside it in an installed wheel (pyproject.toml maps
# them there as package data).
DATA_ROOT = PACKAGE_DIR if (PACKAGE_DIR / "kernels").is_dir() else TOOL_ROOT


def tool_path(rel: str) -> Path:
    """A tool file or directory named as the stage registry names it: ``dnn64build/...``
    for the package's own code, ``kernels``, ``rules`` or ``third_party`` for its data."""
    return (TOOL_ROOT if rel.split("/")[0] == PACKAGE_DIR.name else DATA_ROOT) / rel
