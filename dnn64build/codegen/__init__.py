"""Code generation: a planned IR graph -> readable C, a weight blob, and a main().

See docs/codegen.md for the generated code's layout, the weight blob and the
output-line protocol.
"""

from dnn64build.codegen.model import GeneratedModel, generate_model
from dnn64build.codegen.program import generate_main
from dnn64build.codegen.protocol import ProtocolError, parse_outputs

__all__ = ["GeneratedModel", "ProtocolError", "generate_main", "generate_model",
           "parse_outputs"]
