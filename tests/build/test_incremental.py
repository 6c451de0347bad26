"""The cache contract: each change reruns exactly the stages that depend on it
(real ninja runs in temporary workspaces, real stages, tiny models)."""

from __future__ import annotations

import os
import re
import shutil
import time

from tests.build.conftest import Workspace

MODEL_STAGES = {"Import", "Quantize", "Plan", "Codegen", "Compile", "Program", "Link", "Pack"}


def _ran(actions: list[tuple[str, str]], label: str) -> set[str]:
    return {mnemonic for mnemonic, what in actions if what.split(" ")[0] == label}


def _edit(ws: Workspace, old: str, new: str) -> None:
    path = ws.root / "models" / "BUILD.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_first_build_runs_every_stage_then_nothing(two_models: Workspace) -> None:
    first = two_models.build("//...")
    assert _ran(first, "//models:a") == MODEL_STAGES
    assert _ran(first, "//models:b") == MODEL_STAGES
    assert (two_models.root / "dnn64-out" / ".ninja_log").exists()
    assert two_models.build("//...") == []
    summary = two_models.run("build", "//...").stderr.strip().splitlines()[-1]
    assert "0 actions run" in summary and "up to date" in summary


def test_planner_change_reruns_plan_and_later_stages_of_that_model_only(
    two_models: Workspace,
) -> None:
    two_models.build("//...")
    _edit(two_models, "src: a.onnx", "src: a.onnx\n    planner: {algorithm: greedy_by_size}")
    actions = two_models.build("//...")
    # Plan reruns; later stages rerun only as far as their inputs really change (restat).
    assert "Plan" in _ran(actions, "//models:a")
    assert not {"Import", "Quantize"} & _ran(actions, "//models:a")
    assert _ran(actions, "//models:b") == set()


def test_quantize_change_reruns_quantize_and_after(two_models: Workspace) -> None:
    two_models.build("//...")
    calib = two_models.root / "models" / "calib.npz"
    import numpy as np

    np.savez(calib, input=np.random.default_rng(0).standard_normal((8, 1, 4)).astype(np.float32))
    _edit(
        two_models, "src: b.onnx", "src: b.onnx\n    quantize: {mode: int8, calibration: calib.npz}"
    )
    actions = two_models.build("//...")
    ran_b = _ran(actions, "//models:b")
    assert "Quantize" in ran_b and "Plan" in ran_b and "Import" not in ran_b
    assert _ran(actions, "//models:a") == set()


def test_touching_onnx_without_change_reruns_import_only(two_models: Workspace) -> None:
    two_models.build("//...")
    onnx_file = two_models.root / "models" / "a.onnx"
    time.sleep(0.05)
    os.utime(onnx_file)  # `touch`: newer than every output, same bytes
    actions = two_models.build("//...")
    assert _ran(actions, "//models:a") == {"Import"}
    assert two_models.build("//...") == []


def test_editing_one_model_source_rebuilds_only_that_model(two_models: Workspace) -> None:
    two_models.build("//...")
    two_models.add_model("a", seed=7)
    actions = two_models.build("//...")
    assert "Import" in _ran(actions, "//models:a")
    assert _ran(actions, "//models:b") == set()


def test_deleting_an_output_rebuilds_just_what_is_needed(two_models: Workspace) -> None:
    two_models.build("//...")
    (two_models.root / "dnn64-out/bin/models/b/plan/plan.json").unlink()
    actions = two_models.build("//...")
    assert "Plan" in _ran(actions, "//models:b")
    assert not {"Import", "Quantize"} & _ran(actions, "//models:b")
    assert _ran(actions, "//models:a") == set()


def test_building_one_label_builds_only_it(two_models: Workspace) -> None:
    actions = two_models.build("//models:a")
    assert _ran(actions, "//models:a") == MODEL_STAGES
    assert _ran(actions, "//models:b") == set()


def test_parallel_build_gives_the_same_outputs_as_serial(two_models: Workspace, tmp_path) -> None:
    other = Workspace(tmp_path / "ws2")
    shutil.copytree(two_models.root, other.root)
    two_models.build("-j", "1", "//...")
    other.build("-j", "4", "//...")
    serial, parallel = two_models.outputs(), other.outputs()
    assert serial.keys() == parallel.keys()
    differing = [k for k in serial if serial[k] != parallel[k]]
    assert differing == []


def test_a_new_package_is_picked_up_without_clean(two_models: Workspace) -> None:
    two_models.build("//...")
    two_models.add_model("c", seed=3, package="more")
    two_models.write("more/BUILD.yaml", "targets:\n  - {rule: n64_model, name: c, src: c.onnx}\n")
    actions = two_models.build("//...")
    assert _ran(actions, "//more:c") == MODEL_STAGES
    assert _ran(actions, "//models:a") == set()


def test_deleting_a_target_folder_rebuilds_it(ws_a: Workspace) -> None:
    """dnn64-out/bin/models/a/ holds the target's outputs and the configs the generator
    wrote: deleted by hand, the next build writes the configs again and rebuilds."""
    ws_a.run("plan", "//models:a")
    shutil.rmtree(ws_a.root / "dnn64-out/bin/models/a")
    proc = ws_a.run("plan", "//models:a", check=False)
    assert proc.returncode == 0, proc.stderr
    assert "missing and no known rule" not in proc.stderr
    assert {"Import", "Plan"} <= {m for m, _ in ws_a.build("//models:a")} | set(
        re.findall(r"^\[\d+/\d+\] (\w+) ", proc.stderr, re.M))
    assert (ws_a.root / "dnn64-out/bin/models/a/plan/plan.json").is_file()
