"""The remote cache end to end: a real nginx (WebDAV PUT) on the loopback interface, two
checkouts at different absolute paths; and a misbehaving server of our own for every fault,
each of which must end in a correct build (outputs byte-identical to a build without any
cache) and one warning."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.build.cache_servers import FaultyCache
from tests.build.conftest import Workspace

TOKEN = ("--remote-header", "Authorization=Bearer ci-token")  # a client with credentials


def _checkout(source: Workspace, where: Path) -> Workspace:
    """A copy of the workspace's sources (no dnn64-out/) at another absolute path."""
    shutil.copytree(source.root, where, ignore=shutil.ignore_patterns("dnn64-out"))
    return Workspace(where)


def _explained(stderr: str) -> list[str]:
    return re.findall(r"^dnn64build explain: \S+: (.*) \(key", stderr, re.M)


@pytest.mark.nginx
def test_a_fresh_checkout_builds_from_the_cache_without_running_anything(
    two_models: Workspace, tmp_path: Path, nginx_url: str
) -> None:
    # Credentials (nginx ignores them): without, no program is shared (docs/ci.md, Trust).
    url, token = nginx_url, TOKEN
    first = _checkout(two_models, tmp_path / "ci-runner-1" / "ws")
    first.run("build", "--remote-cache", url, *token, "//...")
    stored = list((tmp_path / "nginx" / "data" / "cache" / "ac").iterdir())
    assert stored, "the first build uploaded nothing"

    second = _checkout(two_models, tmp_path / "elsewhere" / "another" / "ws")
    proc = second.run("build", "--remote-cache", url, *token, "--remote-cache-read-only",
                      "--explain", "//...")
    verdicts = _explained(proc.stderr)
    ran = re.findall(r"^\[\d+/(\d+)\] ", proc.stderr, re.M)
    assert verdicts and len(verdicts) == int(ran[-1])  # every action asked the cache
    assert set(verdicts) == {"remote cache hit"}
    assert "WARNING" not in proc.stderr
    assert second.outputs() == first.outputs()
    # ...and the checkout is up to date for ninja: nothing runs again.
    assert second.build("//...") == []


@pytest.fixture
def reference(two_models: Workspace, tmp_path: Path) -> dict[str, bytes]:
    """The outputs of a build that used no cache at all."""
    plain = _checkout(two_models, tmp_path / "plain")
    plain.build("//...")
    return plain.outputs()


@pytest.mark.parametrize("mode", ["error500", "truncate", "corrupt", "wrong_result", "slow"])
def test_a_misbehaving_cache_degrades_to_a_correct_local_build(
    two_models: Workspace, tmp_path: Path, reference: dict[str, bytes], mode: str
) -> None:
    with FaultyCache() as cache:
        populate = _checkout(two_models, tmp_path / "populate")
        populate.run("build", "--remote-cache", cache.url, "//...")
        assert cache.store
        cache.mode = mode
        fresh = _checkout(two_models, tmp_path / "fresh")
        proc = fresh.run("build", "--remote-cache", cache.url, "--remote-cache-timeout", "0.5",
                         "//...")
    warnings = re.findall(r"^WARNING: remote cache .*$", proc.stderr, re.M)
    assert len(warnings) == 1, proc.stderr
    assert fresh.outputs() == reference


def test_an_unreachable_cache_warns_once_and_builds(
    two_models: Workspace, tmp_path: Path, reference: dict[str, bytes]
) -> None:
    with FaultyCache() as cache:
        url = cache.url  # a port that was just in use and is now closed
    fresh = _checkout(two_models, tmp_path / "fresh")
    proc = fresh.run("build", "--remote-cache", url, "//...")
    assert len(re.findall(r"^WARNING: remote cache", proc.stderr, re.M)) == 1, proc.stderr
    assert fresh.outputs() == reference


def test_a_hit_replays_the_action_s_warnings(workspace: Workspace, tmp_path: Path) -> None:
    workspace.add_model("s", seed=4)
    workspace.write("models/BUILD.yaml", """\
        targets:
          - {rule: n64_model, name: s, src: s.onnx, quantize: {mode: int8, synthetic: true}}
        """)
    with FaultyCache() as cache:
        first = _checkout(workspace, tmp_path / "one")
        warned = first.run("build", "--remote-cache", cache.url, *TOKEN, "//...").stderr
        second = _checkout(workspace, tmp_path / "two")
        replayed = second.run("build", "--remote-cache", cache.url, *TOKEN, "--explain",
                              "//...").stderr
    assert "calibrated on synthetic random inputs" in warned
    assert set(_explained(replayed)) == {"remote cache hit"}
    assert "calibrated on synthetic random inputs" in replayed


def test_the_workspace_names_its_cache_and_the_environment_makes_it_read_only(
    two_models: Workspace, tmp_path: Path
) -> None:
    with FaultyCache() as cache:
        root = two_models.root / "BUILD.yaml"
        root.write_text(root.read_text().replace(
            "  name: testws\n", f"  name: testws\n  remote_cache: {{url: '{cache.url}'}}\n"))
        reader = _checkout(two_models, tmp_path / "reader")
        reader.run("build", "//...", env={"DNN64_REMOTE_CACHE_READ_ONLY": "1"})
        assert cache.store == {} and cache.gets > 0  # asked, uploaded nothing
        writer = _checkout(two_models, tmp_path / "writer")
        writer.run("build", "//...")
        assert cache.store  # the workspace's setting alone enables it


def test_external_data_is_part_of_the_import_s_key_and_tracked_after_a_hit(
    workspace: Workspace, tmp_path: Path
) -> None:
    """Two checkouts whose .onnx files are identical but whose external data differs must
    not share an import result; and after a hit, editing the data file rebuilds."""
    from tests.build.conftest import tiny_mlp
    from tests.build.test_external_data import _save_external

    (workspace.root / "models").mkdir()
    _save_external(tiny_mlp(1), workspace.root / "models" / "a.onnx")
    workspace.write("models/BUILD.yaml", "targets:\n  - {rule: n64_model, name: a, src: a.onnx}\n")
    other_data = tmp_path / "other"
    other_data.mkdir()
    _save_external(tiny_mlp(2), other_data / "a.onnx")
    with FaultyCache() as cache:
        first = _checkout(workspace, tmp_path / "one")
        first.run("build", "--remote-cache", cache.url, *TOKEN, "//...")
        second = _checkout(workspace, tmp_path / "two")
        shutil.copy(other_data / "a.onnx.data", second.root / "models" / "a.onnx.data")
        proc = second.run("build", "--remote-cache", cache.url, "--explain", "//...")
        imports = [line for line in proc.stderr.splitlines()
                   if line.startswith("dnn64build explain: bin/models/a/import/")]
        assert imports and all("remote cache miss" in line for line in imports), proc.stderr
        third = _checkout(workspace, tmp_path / "three")
        proc = third.run("build", "--remote-cache", cache.url, *TOKEN, "--explain", "//...")
        assert set(_explained(proc.stderr)) == {"remote cache hit"}
    graph = "bin/models/a/import/graph.json"
    assert third.outputs()[graph] == first.outputs()[graph]
    # The hit wrote the import's depfile: the data file is tracked without a cache too.
    shutil.copy(other_data / "a.onnx.data", third.root / "models" / "a.onnx.data")
    assert "Import" in {mnemonic for mnemonic, _ in third.build("//...")}
    assert third.outputs()["bin/models/a/import/weights.npz"] == \
        second.outputs()["bin/models/a/import/weights.npz"]
