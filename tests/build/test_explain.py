"""``dnn64build build --explain``: why each action ran."""

from __future__ import annotations

import re

from tests.build.conftest import Workspace


def test_explain_names_the_config_that_changed(two_models: Workspace) -> None:
    two_models.build("//...")
    path = two_models.root / "models" / "BUILD.yaml"
    path.write_text(path.read_text().replace(
        "src: a.onnx", "src: a.onnx\n    planner: {algorithm: greedy_by_size}"))
    err = two_models.run("build", "--explain", "//...").stderr
    assert re.search(r"^ninja explain: .*bin/models/a/plan/plan\.json older than most recent "
                     r"input bin/models/a/config/plan\.json", err, re.M), err
    assert "models/b/" not in "".join(re.findall(r"^ninja explain: .*$", err, re.M))
    # Without --explain, no reasons are printed.
    two_models.add_model("b", seed=9)
    assert "explain" not in two_models.run("build", "//...").stderr
