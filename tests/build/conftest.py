"""Temporary workspaces with tiny real models, and a way to run the real CLI in them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

# The boot stub fixture, for the tests that build programs of their own (the toolchain and
# emulator fixtures are tests/conftest.py's).
from dnn64build.errors import UserError
from tests.build.cache_servers import nginx_cache
from tests.emulator.conftest import boot_stub  # noqa: F401
from tests.tool_required import missing_tool

ROOT_MANIFEST = """\
workspace:
  name: testws
  defaults: {memory: 4MiB, toolchain: host, quantize: {mode: none}}
targets: []
"""


def tiny_mlp(seed: int, hidden: int = 8) -> onnx.ModelProto:
    """input[1,4] -> Gemm -> Relu -> Gemm -> output[1,3], seeded weights."""
    rng = np.random.default_rng(seed)
    w1 = numpy_helper.from_array(rng.standard_normal((hidden, 4)).astype(np.float32), "w1")
    b1 = numpy_helper.from_array(rng.standard_normal(hidden).astype(np.float32), "b1")
    w2 = numpy_helper.from_array(rng.standard_normal((3, hidden)).astype(np.float32), "w2")
    b2 = numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "b2")
    graph = helper.make_graph(
        [
            helper.make_node("Gemm", ["input", "w1", "b1"], ["h"], transB=1, name="fc1"),
            helper.make_node("Relu", ["h"], ["hr"], name="relu1"),
            helper.make_node("Gemm", ["hr", "w2", "b2"], ["output"], transB=1, name="fc2"),
        ],
        f"mlp{seed}",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 3])],
        initializer=[w1, b1, w2, b2],
    )
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10
    )


class Workspace:
    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        return path

    def add_model(self, name: str, seed: int, package: str = "models") -> None:
        path = self.root / package / f"{name}.onnx"
        path.parent.mkdir(parents=True, exist_ok=True)
        onnx.save(tiny_mlp(seed), path)

    def run(self, *args: str, check: bool = True, cwd: Path | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [sys.executable, "-m", "dnn64build", *args],
            cwd=cwd or self.root, capture_output=True, text=True,
            env={**os.environ, **(env or {})},
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"dnn64build {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
            )
        return proc

    def build(self, *args: str) -> list[tuple[str, str]]:
        """Run a build; return the actions it ran as (mnemonic, description) pairs."""
        out = self.run("build", *args).stderr
        return [(m[1], m[2]) for m in re.finditer(r"^\[\d+/\d+\] (\w+) (.*)$", out, re.M)]

    def outputs(self) -> dict[str, bytes]:
        """Every file the build produced (configs, ninja's own files and the temporary
        files a killed stage may leave excluded)."""
        base = self.root / "dnn64-out"
        return {
            p.relative_to(base).as_posix(): p.read_bytes()
            for p in sorted(base.rglob("*"))
            if p.is_file() and "/config" not in p.as_posix() and not p.name.startswith(".")
            and not p.relative_to(base).as_posix().startswith("toolchains/")
            and p.name not in {"build.ninja", "targets.json"}
        }


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    ws = Workspace(tmp_path / "ws")
    ws.write("BUILD.yaml", ROOT_MANIFEST)
    return ws


# One model, //models:a (a tiny MLP in models/a.onnx); attributes can be appended.
MODEL = """\
targets:
  - rule: n64_model
    name: a
    src: a.onnx
"""


@pytest.fixture
def ws_a(workspace: Workspace) -> Workspace:
    """The workspace with MODEL."""
    workspace.add_model("a", seed=1)
    workspace.write("models/BUILD.yaml", MODEL)
    return workspace


@pytest.fixture
def two_models(workspace: Workspace) -> Workspace:
    """//models:a and //models:b, two different tiny MLPs, plus a ROM bundling both."""
    workspace.add_model("a", seed=1)
    workspace.add_model("b", seed=2)
    workspace.write(
        "models/BUILD.yaml",
        """\
        targets:
          - rule: n64_model
            name: a
            src: a.onnx
          - rule: n64_model
            name: b
            src: b.onnx
        """,
    )
    return workspace


@pytest.fixture
def nginx_url(tmp_path: Path) -> Iterator[str]:
    """A real nginx cache server (cache_servers.nginx_cache) storing under tmp_path/nginx,
    for the test's duration: its URL. A missing nginx fails under CI=true."""
    try:
        server = nginx_cache(tmp_path / "nginx")
        url = server.__enter__()
    except UserError as e:
        missing_tool(e)
    try:
        yield url
    finally:
        server.__exit__(None, None, None)
