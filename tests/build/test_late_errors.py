"""Errors found early and worded for the user: ROM titles at analysis (before any action),
the symbol-length and dynamic-shape errors naming the target and the attribute to set, and
a damaged build output (old mtime, so ninja does not rebuild it) named with what to do."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import onnx
import pytest

from tests.build.conftest import Workspace, tiny_mlp


def _fails(ws: Workspace, *args: str) -> str:
    proc = ws.run(*(args or ("build", "//...")), check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert "Traceback" not in output and "internal error" not in output, output
    return output


def test_a_bad_rom_title_is_found_before_any_action_runs(workspace: Workspace) -> None:
    """(A name too long for a title, without ``title:``, is cut to fit, and a host program's
    title is never checked: tests/build/test_hostile_manifest.py.)"""
    workspace.add_model("a", seed=1)
    workspace.write("models/BUILD.yaml", "targets:\n  - rule: n64_model\n    name: a\n"
                    "    src: a.onnx\n    title: \"Caf\u00e9 net\"\n    toolchain: bare\n")
    err = _fails(workspace)
    assert "models/BUILD.yaml:5:5: target //models:a: ROM title 'Caf\u00e9 net' must be at " \
        "most 20 printable ASCII" in err
    assert "[1/" not in err  # no action ran


def test_symbol_too_long_names_the_label_and_the_real_lengths(workspace: Workspace) -> None:
    package = "models/abcdefghij/klmnopqrstu/vwxyz"
    workspace.add_model("a", seed=1, package=package)
    workspace.write(f"{package}/BUILD.yaml", "targets:\n  - {rule: n64_model, name: a, "
                    "src: a.onnx}\n")
    err = _fails(workspace)
    symbol = "m_models_abcdefghij_klmnopqrstu_vwxyz_a"
    assert (f"//{package}:a: model symbol '{symbol}' has {len(symbol)} characters, too many "
            f"for its asset name '{symbol}.weights' ({len(symbol) + 8} characters; the asset "
            "table holds 39)") in err
    assert "shorten them to 31 characters at most" in err
    assert "mlp1" not in err  # the ONNX graph's name means nothing to the user


def test_dynamic_shape_hint_names_the_inputs_attribute(workspace: Workspace) -> None:
    model = tiny_mlp(1)
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    (workspace.root / "models").mkdir()
    onnx.save(model, workspace.root / "models" / "a.onnx")
    workspace.write("models/BUILD.yaml", "targets:\n  - {rule: n64_model, name: a, src: a.onnx}\n")
    err = _fails(workspace)
    assert "//models:a: input 'input' has dynamic shape [batch, 4]" in err
    assert "bind it with the target attribute inputs, e.g. inputs: {input: [1, 4]}" in err
    assert "input_shapes" not in err and "../models" not in err


@pytest.mark.parametrize("damaged", ["quantize/weights.npz", "quantize/graph.json"])
def test_a_truncated_build_output_is_named_with_what_to_do(two_models: Workspace,
                                                           damaged: str) -> None:
    two_models.build("//models:a")
    path = two_models.root / "dnn64-out" / "bin" / "models" / "a" / damaged
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    old = path.stat().st_mtime - 3600  # older than its inputs: ninja keeps trusting it
    os.utime(path, (old, old))
    manifest = two_models.root / "models" / "BUILD.yaml"
    manifest.write_text(manifest.read_text().replace(
        "src: a.onnx", "src: a.onnx\n    planner: {algorithm: greedy_by_size}"))
    err = _fails(two_models, "build", "//models:a")
    assert f"build output {path.resolve()} is damaged" in err
    assert f"delete it and build again: rm {path.resolve()}" in err
    path.unlink()
    two_models.build("//models:a")  # deleting it is all it takes


def test_a_bug_inside_a_stage_says_internal_error_with_the_traceback(tmp_path) -> None:
    config = tmp_path / "config.json"
    config.write_text("{}\n")  # the plan stage needs a label and a memory size: a bug upstream
    graph = tmp_path / "graph.json"
    graph.write_text('{"format": "dnn64-ir", "version": 1, "name": "g", "inputs": [], '
                     '"outputs": [], "tensors": {}, "nodes": []}\n')
    np.savez(tmp_path / "weights.npz")
    proc = subprocess.run(
        [sys.executable, "-m", "dnn64build.stages", "plan", "--config", str(config),
         "--in", f"graph={graph}", "--in", f"weights={tmp_path / 'weights.npz'}",
         "--out", f"plan={tmp_path / 'plan.json'}"],
        capture_output=True, text=True)
    assert proc.returncode == 70
    assert "Traceback" in proc.stderr
    assert "internal error in the plan stage: this is a bug in dnn64build" in proc.stderr
