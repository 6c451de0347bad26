"""The installed package: a wheel built from the tool's sources, installed into a fresh
virtual environment, builds and runs a model from a workspace outside the checkout.

The editable install reads kernels/, rules/ and third_party/ from the checkout, so only an
installed wheel shows a file missing from pyproject.toml's package data.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from setuptools import find_packages

from dnn64build import TOOL_ROOT
from dnn64build.graph.ninja_package import package_ninja
from tests.build.conftest import MODEL, ROOT_MANIFEST, Workspace, tiny_mlp

# What building the wheel reads from the checkout (pyproject.toml maps the data directories
# into the package).
SOURCES = ("pyproject.toml", "README.md", "dnn64build", "kernels", "rules", "third_party")


def test_pyproject_lists_every_package() -> None:
    setuptools = tomllib.loads((TOOL_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setuptools["packages"]) - set(setuptools["package-dir"])
    assert listed == set(find_packages(str(TOOL_ROOT), include=["dnn64build*"]))


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a venv holding only the wheel (onnx, numpy... come from the
    system's site-packages): its bin/ first on PATH, no PYTHONPATH into the checkout."""
    tmp = tmp_path_factory.mktemp("packaging")
    source = tmp / "source"
    source.mkdir()
    for name in SOURCES:
        if (TOOL_ROOT / name).is_dir():
            shutil.copytree(TOOL_ROOT / name, source / name,
                            ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(TOOL_ROOT / name, source / name)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                    str(tmp / "dist"), str(source)], check=True, env=env)
    venv = tmp / "venv"  # no pip of its own (seconds saved): this pip installs into it
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                    str(venv)], check=True)
    (wheel,) = (tmp / "dist").glob("dnn64build-*.whl")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"),
                    "install", "-q", "--no-deps", str(wheel)], check=True, env=env)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    # The ninja package finds its executable beside the running interpreter, which in this
    # venv is not where the system's ninja package put it.
    env["DNN64_NINJA"] = package_ninja() or "ninja"
    return env


def installed_run(installed: dict[str, str], ws: Workspace,
                  *args: str) -> subprocess.CompletedProcess[str]:
    """The venv's ``dnn64build`` console script, run in ``ws``."""
    proc = subprocess.run(["dnn64build", *args], cwd=ws.root, env=installed,
                          capture_output=True, text=True)
    assert proc.returncode == 0, f"dnn64build {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
    return proc


def mlp_workspace(tmp_path: Path, toolchain: str) -> tuple[Workspace, np.ndarray]:
    """A workspace with //models:a (tiny_mlp(1)) and one input sample in in.npz."""
    ws = Workspace(tmp_path / "ws")
    ws.write("BUILD.yaml", ROOT_MANIFEST)
    ws.add_model("a", seed=1)
    ws.write("models/BUILD.yaml", f"{MODEL}    toolchain: {toolchain}\n")
    x = np.random.default_rng(3).standard_normal((1, 4)).astype(np.float32)
    np.savez(ws.root / "in.npz", input=x)
    return ws, x


def assert_matches_onnxruntime(ws: Workspace, x: np.ndarray) -> None:
    got = np.load(ws.root / "out.npz")["output"]
    (want,) = ort.InferenceSession(tiny_mlp(1).SerializeToString()).run(None, {"input": x})
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= 1e-4 * np.abs(want).max()


@pytest.mark.usefixtures("host")
def test_the_installed_wheel_builds_and_runs_a_model_on_the_host(
    installed: dict[str, str], tmp_path: Path
) -> None:
    ws, x = mlp_workspace(tmp_path, "host")
    installed_run(installed, ws, "build", "//...")
    # Every tool file the build reads comes from the venv, none from the checkout.
    ninja_file = (ws.root / "dnn64-out" / "build.ninja").read_text()
    assert str(TOOL_ROOT) not in ninja_file
    assert f"site-packages{os.sep}dnn64build{os.sep}kernels" in ninja_file
    proc = installed_run(installed, ws, "run", "//models:a", "--platform", "host",
                         "--input", "in.npz", "--output", "out.npz")
    assert "vs the reference executor: match" in proc.stdout
    assert_matches_onnxruntime(ws, x)


@pytest.mark.usefixtures("bare", "mupen64plus")
def test_the_installed_wheel_builds_a_rom_that_runs(
    installed: dict[str, str], tmp_path: Path
) -> None:
    ws, x = mlp_workspace(tmp_path, "bare")
    proc = installed_run(installed, ws, "run", "//models:a", "--platform", "emulator",
                         "--input", "in.npz", "--output", "out.npz")
    assert "ROM vs the host build: match" in proc.stdout
    assert_matches_onnxruntime(ws, x)


@pytest.mark.usefixtures("host")
def test_the_installed_wheel_builds_the_exact_searchs_compiled_core(
    installed: dict[str, str], tmp_path: Path
) -> None:
    # The wheel carries exact_core.c: the first exact search builds it into the user's
    # cache and runs it (no note about the Python search).
    ws = Workspace(tmp_path / "ws")
    ws.write("problem.csv", "id,lower,upper,size\na,0,2,32\nb,1,3,16\nc,2,4,32\n")
    env = {**installed, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc = installed_run(env, ws, "plan-buffers", "problem.csv", "--algorithm", "exact")
    assert "note:" not in proc.stderr
    assert len(list((tmp_path / "cache" / "dnn64build").glob("exact_core-*.so"))) == 1
