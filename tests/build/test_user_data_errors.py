"""Bad user data (calibration and test files, `run --input/--output`, numbers in BUILD.yaml):
one clean error naming the file or attribute, never a traceback."""

from __future__ import annotations

import numpy as np
import pytest

from tests.build.conftest import MODEL, Workspace


@pytest.fixture
def ws(ws_a: Workspace) -> Workspace:
    return ws_a


def _clean_error(ws: Workspace, *args: str) -> str:
    proc = ws.run(*args, check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert "Traceback" not in output and "internal error" not in output, output
    return output


def _calibrate_with(ws: Workspace, name: str) -> str:
    ws.write("models/BUILD.yaml", MODEL + f"    quantize: {{mode: int8, calibration: {name}}}\n")
    return _clean_error(ws, "build", "//models:a")


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_calibration_with_nan_or_inf(ws: Workspace, bad: float) -> None:
    samples = np.random.default_rng(0).standard_normal((8, 1, 4)).astype(np.float32)
    samples[3, 0, 2] = bad
    np.savez(ws.root / "models" / "calib.npz", input=samples)
    err = _calibrate_with(ws, "calib.npz")
    assert "//models:a" in err and "calibration" in err
    assert "sample 3" in err and "not finite" in err


def test_calibration_file_that_is_not_a_zip(ws: Workspace) -> None:
    (ws.root / "models" / "calib.npz").write_text("not a zip archive\n")
    err = _calibrate_with(ws, "calib.npz")
    assert "//models:a" in err and "calib.npz" in err and "not an .npz" in err


@pytest.mark.parametrize("content", ["strings", "npy", "not_a_zip", "missing_dir"])
def test_run_with_bad_input_or_output(ws: Workspace, content: str) -> None:
    x = np.zeros((1, 4), np.float32)
    output = "out.npz"
    if content == "strings":
        np.savez(ws.root / "in.npz", input=np.array([["a", "b", "c", "d"]]))
        name = "in.npz"
    elif content == "npy":
        np.save(ws.root / "in.npy", x)
        name = "in.npy"
    elif content == "not_a_zip":
        (ws.root / "in.npz").write_text("hello\n")
        name = "in.npz"
    else:
        np.savez(ws.root / "in.npz", input=x)
        name, output = "in.npz", "no/such/dir/out.npz"
    err = _clean_error(ws, "run", "//models:a", "--platform", "host", "--input", name,
                       "--output", output)
    expected = {"strings": "'input' holds <U1 values, not real numbers",
                "npy": "in.npy: --input takes an .npz",
                "not_a_zip": "in.npz: not an .npz archive",
                "missing_dir": "--output: no such directory: no/such/dir"}[content]
    assert expected in err


def test_test_labels_naming_a_missing_array(ws: Workspace) -> None:
    np.savez(ws.root / "models" / "t.npz", input=np.zeros((3, 1, 4), np.float32))
    ws.write("models/BUILD.yaml", MODEL + "    test: {inputs: t.npz, labels: classes}\n")
    err = _clean_error(ws, "test", "//models:a", "--platform", "host")
    assert "//models:a" in err and "test.labels" in err and "'classes'" in err
    assert "it holds: input" in err


@pytest.mark.parametrize("attr,value,fixed", [("memory", "65536.0", "65536"),
                                              ("planner", "{alignment: 16.0}", "16")])
def test_whole_number_floats_are_a_schema_error(ws: Workspace, attr: str, value: str,
                                                fixed: str) -> None:
    ws.write("models/BUILD.yaml", MODEL + f"    {attr}: {value}\n")
    err = _clean_error(ws, "build", "//models:a")
    assert "models/BUILD.yaml:" in err
    assert f"is a float; write the integer {fixed}" in err
