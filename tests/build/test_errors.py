"""Bad input: one clear message, non-zero exit, no traceback, nothing half-written."""

from __future__ import annotations

from tests.build.conftest import MODEL, Workspace


def _fails(ws: Workspace, *args: str) -> str:
    proc = ws.run(*(args or ("build", "//...")), check=False)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "internal error" not in proc.stderr
    out = ws.root / "dnn64-out"
    assert not (out / "bin").exists(), "a failed generation left outputs behind"
    assert not (out / "build.ninja").exists()
    return proc.stderr


def test_malformed_yaml_names_file_line_and_column(ws_a: Workspace) -> None:
    ws_a.write("models/BUILD.yaml", "targets:\n  - rule: n64_model\n    name: [a\n")
    err = _fails(ws_a)
    assert "models/BUILD.yaml:4:1" in err and "malformed YAML" in err


def test_misspelt_attribute_gets_did_you_mean(ws_a: Workspace) -> None:
    ws_a.write("models/BUILD.yaml", MODEL + "    quantise: {mode: int8}\n")
    err = _fails(ws_a)
    assert "models/BUILD.yaml:2:5" in err
    assert "target 'a' (n64_model)" in err
    assert "unknown key 'quantise' (did you mean 'quantize'?)" in err


def test_bad_enum_value_lists_what_is_allowed(ws_a: Workspace) -> None:
    ws_a.write("models/BUILD.yaml", MODEL + "    planner: {algorithm: greedy}\n")
    err = _fails(ws_a)
    assert "attribute 'planner.algorithm'" in err
    assert "greedy_by_size" in err and "hill_climb" in err
    assert "models/BUILD.yaml:5:14" in err


def test_bad_memory_value(ws_a: Workspace) -> None:
    ws_a.write("models/BUILD.yaml", MODEL + "    memory: 4 megs\n")
    err = _fails(ws_a)
    assert "attribute 'memory'" in err and "4MiB" in err


def test_unknown_label_in_a_bundle(ws_a: Workspace) -> None:
    ws_a.write("BUILD.yaml", ws_a.root.joinpath("BUILD.yaml").read_text().replace(
        "targets: []", "targets:\n  - {rule: n64_rom, name: r, models: ['//models:nope']}"))
    err = _fails(ws_a)
    assert "//:r depends on unknown target //models:nope" in err
    assert "known targets in //models: a" in err


def test_malformed_label(ws_a: Workspace) -> None:
    ws_a.write("BUILD.yaml", ws_a.root.joinpath("BUILD.yaml").read_text().replace(
        "targets: []", "targets:\n  - {rule: n64_rom, name: r, models: ['models:a']}"))
    err = _fails(ws_a)
    assert "malformed label 'models:a'" in err and "//pkg/path:name" in err


def test_unknown_label_on_the_command_line(ws_a: Workspace) -> None:
    proc = ws_a.run("build", "//models:b", check=False)
    assert proc.returncode != 0
    assert "no target matches '//models:b'" in proc.stderr
    assert "did you mean //models:a" in proc.stderr


def test_dependency_cycle_is_printed(ws_a: Workspace) -> None:
    ws_a.write("BUILD.yaml", ws_a.root.joinpath("BUILD.yaml").read_text().replace(
        "targets: []",
        "targets:\n  - {rule: n64_rom, name: r1, models: [':r2']}\n"
        "  - {rule: n64_rom, name: r2, models: [':r1']}"))
    err = _fails(ws_a)
    assert "dependency cycle:" in err
    assert "//:r1 -> //:r2 -> //:r1" in err or "//:r2 -> //:r1 -> //:r2" in err


def test_duplicate_target_names(ws_a: Workspace) -> None:
    ws_a.write("models/BUILD.yaml", MODEL + MODEL.removeprefix("targets:\n"))
    err = _fails(ws_a)
    assert "duplicate target name 'a'" in err and "models/BUILD.yaml:2:5" in err


def test_duplicate_yaml_keys(ws_a: Workspace) -> None:
    ws_a.write("models/BUILD.yaml", MODEL + "    src: b.onnx\n")
    err = _fails(ws_a)
    assert "duplicate key 'src'" in err and "models/BUILD.yaml:5:5" in err


def test_missing_onnx_file(ws_a: Workspace) -> None:
    (ws_a.root / "models" / "a.onnx").unlink()
    err = _fails(ws_a)
    assert "file not found: models/a.onnx" in err and "//models:a" in err


def test_source_escaping_the_workspace(ws_a: Workspace) -> None:
    (ws_a.root.parent / "outside.onnx").write_bytes(b"")
    ws_a.write("models/BUILD.yaml", MODEL.replace("a.onnx", "../../outside.onnx"))
    err = _fails(ws_a)
    assert "escapes the workspace" in err


def test_unsupported_rule_kind(ws_a: Workspace) -> None:
    ws_a.write("models/BUILD.yaml", MODEL.replace("n64_model", "n64_modle"))
    err = _fails(ws_a)
    assert "unknown rule kind 'n64_modle' (did you mean 'n64_model'?)" in err
    assert "n64_rom" in err


def test_missing_ninja(ws_a: Workspace) -> None:
    proc = ws_a.run("build", "//...", check=False, env={"DNN64_NINJA": "/nonexistent/ninja"})
    assert proc.returncode != 0 and "ninja not found" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_not_in_a_workspace(tmp_path) -> None:
    ws = Workspace(tmp_path)
    proc = ws.run("build", "//...", check=False)
    assert proc.returncode != 0 and "not inside a dnn64build workspace" in proc.stderr


def test_broken_manifest_after_a_good_build_keeps_the_old_graph(ws_a: Workspace) -> None:
    ws_a.run("query", "//...")
    graph = (ws_a.root / "dnn64-out" / "build.ninja").read_bytes()
    ws_a.write("models/BUILD.yaml", MODEL + "    bogus: 1\n")
    proc = ws_a.run("query", "//...", check=False)
    assert proc.returncode != 0 and "unknown key 'bogus'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert (ws_a.root / "dnn64-out" / "build.ninja").read_bytes() == graph
