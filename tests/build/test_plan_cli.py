"""`dnn64build plan` and `plan-buffers`: the contract other tools drive, checked with the
independent plan checker."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable

import numpy as np

from dnn64build.planner.checker import check_intervals, check_plan
from tests.build.conftest import Workspace


def test_plan_json_has_the_contract_fields_and_passes_the_checker(two_models: Workspace) -> None:
    plan = json.loads(two_models.run("plan", "//models:a", "--json").stdout)
    assert plan["schedule"] == ["fc1", "fc2"]  # node names, execution order
    assert plan["arena_bytes"] >= plan["lower_bound_bytes"] > 0
    for buffer in plan["buffers"]:
        assert {"name", "size", "offset", "first", "last"} <= buffer.keys()
        assert 0 <= buffer["first"] <= buffer["last"] < len(plan["schedule"])
    assert {b["name"] for b in plan["buffers"]} >= {"input", "output"}
    assert check_plan(plan) is None
    # The whole-tensor bound, recomputed from the buffers: most bytes live at one step.
    roots = [b for b in plan["buffers"] if not b.get("alias_of")]
    live = max(sum(b["size"] for b in roots if b["first"] <= step <= b["last"])
               for step in range(len(plan["schedule"])))
    assert plan["op_bound_bytes"] == live


def test_plan_report_and_timeline_picture(two_models: Workspace) -> None:
    out = two_models.run("plan", "//models:b").stdout
    assert "arena" in out and "lower bound" in out and "live at the peak" in out
    for algorithm in ("greedy_by_size", "greedy_by_conflicts", "hill_climb", "best_fit"):
        assert algorithm in out
    svg = out.strip().splitlines()[-1].removeprefix("memory timeline: ")
    with open(svg) as f:
        assert f.read().lstrip().startswith("<svg")


def test_plan_of_a_bundle_is_refused(two_models: Workspace) -> None:
    root = two_models.root / "BUILD.yaml"
    root.write_text(root.read_text().replace(
        "targets: []", "targets:\n  - {rule: n64_rom, name: r, models: ['//models:a']}"))
    proc = two_models.run("plan", "//:r", check=False)
    assert proc.returncode == 1 and "//:r (n64_rom): no plan outputs" in proc.stderr


def test_plan_buffers_writes_offsets_that_pass_the_checker(workspace: Workspace) -> None:
    rng = np.random.default_rng(3)
    problem = workspace.root / "problem.csv"
    with open(problem, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "lower", "upper", "size"])
        for i in range(40):
            lower = int(rng.integers(0, 30))
            writer.writerow([f"b{i}", lower, lower + int(rng.integers(1, 10)),
                             int(rng.integers(1, 5000))])
    for algorithm in ("greedy_by_size", "hill_climb", "auto"):
        out = workspace.root / f"{algorithm}.csv"
        proc = workspace.run("plan-buffers", str(problem), "--algorithm", algorithm, "-o",
                             str(out))
        assert "lower bound" in proc.stdout
        with open(out) as f:
            rows = [(r["id"], int(r["lower"]), int(r["upper"]), int(r["size"]),
                     int(r["alignment"]), int(r["offset"])) for r in csv.DictReader(f)]
        assert len(rows) == 40
        assert check_intervals(rows) is None


def test_plan_buffers_reports_a_bad_file_with_its_line(workspace: Workspace) -> None:
    problem = workspace.root / "bad.csv"
    problem.write_text("id,lower,upper,size\na,0,4,16\nb,5,3,16\n")
    proc = workspace.run("plan-buffers", str(problem), check=False)
    assert proc.returncode == 1 and "bad.csv:3" in proc.stderr and "Traceback" not in proc.stderr


def test_plan_buffers_budget_and_search_report_on_stderr(workspace: Workspace) -> None:
    # Every heuristic misses this problem's optimum (144 bytes, its lower bound).
    problem = workspace.root / "hard.csv"
    spans = [(0, 3, 3), (3, 6, 1), (1, 2, 3), (2, 4, 1), (2, 5, 1), (1, 5, 3), (2, 4, 1), (4, 6, 4)]
    problem.write_text("id,lower,upper,size\n" + "".join(
        f"b{i},{lo},{up},{16 * units}\n" for i, (lo, up, units) in enumerate(spans)))
    proc = workspace.run("plan-buffers", str(problem), "--algorithm", "exact",
                         "--capacity", "144")
    assert "search nodes, lower bound 144 bytes" in proc.stderr
    assert "optimal (proven optimal)" in proc.stderr
    proc = workspace.run("plan-buffers", str(problem), "--algorithm", "exact", "--budget", "1")
    assert "budget_exhausted (stopped short of a proof" in proc.stderr
    proc = workspace.run("plan-buffers", str(problem), "--capacity", "60", check=False)
    assert proc.returncode == 1 and "below buffer 'b7' alone (64 bytes" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_plan_buffers_first_fit_stops_at_a_plan_within_the_capacity(
        workspace: Workspace) -> None:
    # The problem above: best_fit's plan takes 160 bytes, the optimum 144.
    problem = workspace.root / "hard.csv"
    spans = [(0, 3, 3), (3, 6, 1), (1, 2, 3), (2, 4, 1), (2, 5, 1), (1, 5, 3), (2, 4, 1), (4, 6, 4)]
    problem.write_text("id,lower,upper,size\n" + "".join(
        f"b{i},{lo},{up},{16 * units}\n" for i, (lo, up, units) in enumerate(spans)))
    out = workspace.root / "fit.csv"
    proc = workspace.run("plan-buffers", str(problem), "--algorithm", "exact", "--capacity",
                         "192", "--first-fit", "-o", str(out))
    assert "arena 160 bytes, fits (within --capacity" in proc.stderr  # not minimised to 144
    with open(out) as f:
        rows = [(r["id"], int(r["lower"]), int(r["upper"]), int(r["size"]),
                 int(r["alignment"]), int(r["offset"])) for r in csv.DictReader(f)]
    assert check_intervals(rows) is None and max(r[5] + r[3] for r in rows) <= 192
    # At the bound, the first plan found is a proof.
    proc = workspace.run("plan-buffers", str(problem), "--algorithm", "exact", "--capacity",
                         "144", "--first-fit", "-o", str(out))
    assert "arena 144 bytes, optimal (proven optimal)" in proc.stderr
    proc = workspace.run("plan-buffers", str(problem), "--first-fit", check=False)
    assert proc.returncode == 1 and "--first-fit needs --capacity" in proc.stderr


def _cnn_workspace(workspace: Workspace, fusion: str, model: str = "small_cnn") -> Workspace:
    import onnx

    from tools.zoo import build as zoo_model

    (workspace.root / "models").mkdir(exist_ok=True)
    onnx.save(zoo_model(model), workspace.root / "models" / "m.onnx")
    workspace.write("models/BUILD.yaml", f"""\
        targets:
          - {{rule: n64_model, name: m, src: m.onnx, planner: {{fusion: {fusion}}}}}
        """)
    return workspace


def test_plan_json_says_what_was_fused(workspace: Workspace) -> None:
    plan = json.loads(_cnn_workspace(workspace, "stream").run("plan", "//models:m", "--json")
                      .stdout)
    assert check_plan(plan) is None
    [group] = plan["fusion"]["groups"]
    assert group["mode"] == "stream" and group["extra_macs"] == 0 and len(group["nodes"]) == 4
    assert group["name"] in plan["schedule"]  # one scheduled step
    buffers = {b["name"]: b for b in plan["buffers"]}
    step = plan["schedule"].index(group["name"])
    for name in group["buffers"]:
        assert buffers[name]["first"] == buffers[name]["last"] == step
    assert plan["lower_bound_bytes"] < plan["op_bound_bytes"]


def test_fusion_that_cannot_apply_is_one_clear_error(workspace: Workspace) -> None:
    proc = _cnn_workspace(workspace, "patch", "mlp").run("plan", "//models:m", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "fusion 'patch' cannot apply" in proc.stderr and "//models:m" in proc.stderr


def _small_cnn_64(workspace: Workspace) -> Callable[[str], dict]:
    """small_cnn's layers at 64x64 as //models:m, so that the 128 KiB conv output fusion
    avoids outweighs the region kernel the fused program links (the program estimate counts
    it). Returns plan(attributes): the target's plan with those attributes (the plan
    checker validates each)."""
    import onnx

    from tools.zoo.builder import NetBuilder

    b = NetBuilder("small_cnn_64", seed=2)
    x = b.maxpool(b.conv_bn(b.input("input", [1, 1, 64, 64]), 1, 8, 3), 2, 2)
    x = b.maxpool(b.conv_bn(x, 8, 16, 3), 2, 2)
    (workspace.root / "models").mkdir(exist_ok=True)
    onnx.save(b.build({b.gemm(b.view_flatten(x), 16 * 16 * 16, 10): [1, 10]}),
              workspace.root / "models" / "m.onnx")

    def plan(attributes: str) -> dict:
        workspace.write("models/BUILD.yaml", f"""\
            targets:
              - {{rule: n64_model, name: m, src: m.onnx, {attributes}}}
            """)
        result = json.loads(workspace.run("plan", "//models:m", "--json").stdout)
        assert check_plan(result) is None
        return result

    return plan


def test_rsp_kernels_keep_convs_unfused_unless_the_model_needs_fusion_to_fit(
    workspace: Workspace,
) -> None:
    """A fused Conv runs on the CPU: with `kernels: rsp`, `fusion: auto` fuses only when the
    model does not fit without it."""
    from dnn64build.planner.fit import needed_bytes

    small_cnn = _small_cnn_64(workspace)

    def plan(kernels: str, memory: str = "4MiB") -> dict:
        return small_cnn(f"toolchain: host, kernels: {kernels}, memory: {memory}")

    fused, unfused = plan("cpu"), plan("rsp")
    assert fused["fusion"]["groups"] and not unfused["fusion"]["groups"]
    assert any("kernels: rsp" in note for note in unfused["fusion"]["notes"])

    def needed(p: dict) -> int:
        return needed_bytes(p, program_bytes=p["program"]["estimate_bytes"],
                            staging_bytes=p["staging"]["bytes"])

    assert needed(fused) < needed(unfused)
    # A memory the unfused plan exceeds and the fused one fits: fused again.
    tight = plan("rsp", memory=str(needed(fused)))
    assert tight["fusion"]["groups"] and needed(tight) <= needed(fused)


def test_default_kernels_are_the_rsp_on_bare_and_the_cpu_on_the_host(
    workspace: Workspace,
) -> None:
    """Without `kernels:`, a bare target plans for the RSP kernels (`auto`: its Convs stay
    unfused, as they would with an explicit `kernels: auto`), a host target for the CPU."""
    small_cnn = _small_cnn_64(workspace)
    bare, host = small_cnn("toolchain: bare"), small_cnn("toolchain: host")
    assert not bare["fusion"]["groups"]
    assert any("kernels: auto" in note for note in bare["fusion"]["notes"])
    assert host["fusion"]["groups"]
    assert host == small_cnn("toolchain: host, kernels: cpu")
    assert bare == small_cnn("toolchain: bare, kernels: auto")


def test_plan_says_the_input_is_streamed(workspace: Workspace) -> None:
    ws = _cnn_workspace(workspace, "dag, input: stream")
    plan = json.loads(ws.run("plan", "//models:m", "--json").stdout)
    assert check_plan(plan) is None
    [x] = plan["streamed_inputs"]
    assert x not in {b["name"] for b in plan["buffers"]}
    assert plan["fusion"]["groups"][0]["streams"] == x
    assert f"input {x!r} streamed" in ws.run("plan", "//models:m").stdout


def test_input_stream_that_cannot_apply_is_one_clear_error(workspace: Workspace) -> None:
    proc = _cnn_workspace(workspace, "dag, input: stream", "mlp").run("plan", "//models:m",
                                                                      check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "input 'stream' cannot apply" in proc.stderr and "//models:m" in proc.stderr
    proc = _cnn_workspace(workspace, "stream, input: stream").run("plan", "//models:m",
                                                                  check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    # refused at load, at the target's line (docs/faults.md)
    assert "models/BUILD.yaml:2:" in proc.stderr and "needs fusion dag or auto" in proc.stderr


def test_plan_says_the_output_is_streamed(workspace: Workspace) -> None:
    ws = _cnn_workspace(workspace, "dag, output: stream", "unet")
    plan = json.loads(ws.run("plan", "//models:m", "--json").stdout)
    assert check_plan(plan) is None
    [y] = plan["streamed_outputs"]
    assert y not in {b["name"] for b in plan["buffers"]}
    assert plan["fusion"]["groups"][-1]["emits"] == y
    assert f"output {y!r} streamed" in ws.run("plan", "//models:m").stdout


def test_output_stream_that_cannot_apply_is_one_clear_error(workspace: Workspace) -> None:
    proc = _cnn_workspace(workspace, "dag, output: stream").run("plan", "//models:m",
                                                                check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "output 'stream' cannot apply" in proc.stderr and "//models:m" in proc.stderr
    assert "(Gemm)" in proc.stderr  # small_cnn's classifier does not compute row by row
    proc = _cnn_workspace(workspace, "patch, output: stream", "unet").run(
        "plan", "//models:m", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    # refused at load, at the target's line (docs/faults.md)
    assert "models/BUILD.yaml:2:" in proc.stderr and "needs fusion dag or auto" in proc.stderr
