"""ONNX names reach generated C only through ``cfmt.c_comment`` (issue 25, case 7): a graph
or tensor named to close a comment and define a macro cannot rewrite a game's code through
an ``n64_library``'s public header (the ROM's generated code escaped them already)."""

from __future__ import annotations

import subprocess

import onnx

from tests.build.conftest import Workspace, tiny_mlp

GRAPH = "g */ #define inj_init(a, b) 0 /*"
INPUT = "x */ #define INJ_INPUT 1 /*"


def test_onnx_names_cannot_inject_code_into_a_library_header(workspace: Workspace,
                                                             host_cc: str) -> None:
    model = tiny_mlp(1)
    model.graph.name = GRAPH
    model.graph.input[0].name = model.graph.node[0].input[0] = INPUT
    (workspace.root / "models").mkdir()
    onnx.save(model, workspace.root / "models" / "a.onnx")
    workspace.write("models/BUILD.yaml", "targets:\n  - {rule: n64_model, name: a, src: a.onnx}\n"
                    "  - {rule: n64_library, name: lib, models: [':a'], toolchain: host}\n")
    workspace.build("//models:lib")
    library = workspace.root / "dnn64-out" / "bin" / "models" / "lib"
    header = (library / "include" / "lib.h").read_text()
    assert "g *_/ #define inj_init(a, b) 0 /_*" in header  # still readable, not code
    assert "x *_/ #define INJ_INPUT 1 /_*" in header
    probe = workspace.root / "probe.c"
    probe.write_text('#include "lib.h"\n'
                     "#if defined(inj_init) || defined(INJ_INPUT)\n#error injected\n#endif\n"
                     "int main(void) { return lib_init(0, 0) == LIB_OK; }\n")
    proc = subprocess.run([host_cc, "-std=c99", "-Wall", "-Werror", "-fsyntax-only",
                           "-I", str(library / "include"), "-I", str(library / "src"),
                           str(probe)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
