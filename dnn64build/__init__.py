"""dnn64build: compile ONNX neural networks into Nintendo 64 ROMs."""

from pathlib import Path

__version__ = "0.1.0"

# The tool's source tree: rules/, kernels/ and third_party/ are read from here at build time.
TOOL_ROOT = Path(__file__).resolve().parent.parent
