"""Code generation: a planned IR graph -> readable C, a weight blob, and a main().

See docs/codegen.md for the generated code's layout, the weight blob and the
output-line protocol (parsed by dnn64build.run_protocol).
"""

from dnn64build.codegen.model import GeneratedModel, generate_model
from dnn64build.codegen.program import generate_main

__all__ = ["GeneratedModel", "generate_main", "generate_model"]
