"""Code generation: a planned IR graph -> readable C, a weight blob, and a main().

Entry points: model.generate_model, program.generate_main, and shape.code_shape (what the
plan stage sizes the code with). This file imports nothing: it runs whenever a codegen
module is imported, so an import here would make the plan stage depend on every module it
names. See docs/codegen.md for the generated code's layout, the weight blob and the
output-line protocol (parsed by dnn64build.run_protocol).
"""
