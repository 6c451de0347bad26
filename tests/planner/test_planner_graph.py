"""plan_graph on the IR: activations only, bytes from shape and dtype, aliases."""

from __future__ import annotations

import numpy as np
import pytest

from dnn64build.errors import UserError
from dnn64build.ir import Graph, Node, Tensor
from dnn64build.planner.checker import check_plan
from dnn64build.planner.dagplan import PlanParams
from dnn64build.planner.graph_plan import dag_from_graph, plan_graph


def _graph() -> Graph:
    # x (1x4x8x8 f32 = 1024 B) -conv-> a (1024 B) -relu-> b -flatten-> c (1x256 f32)
    # x -relu-> d (1x256 f32, 1024 B); concat(c, d) on axis 1 -> e (2048 B) -sigmoid-> y.
    tensors = {
        "x": Tensor([1, 4, 8, 8], "float32", "input"),
        "w": Tensor([4, 4, 3, 3], "float32", "constant"),
        "a": Tensor([1, 4, 8, 8], "float32", "activation"),
        "b": Tensor([1, 4, 8, 8], "float32", "activation"),
        "c": Tensor([1, 256], "float32", "activation"),
        "d": Tensor([1, 4, 8, 8], "float32", "activation"),
        "df": Tensor([1, 256], "float32", "activation"),
        "e": Tensor([1, 512], "float32", "activation"),
        "y": Tensor([1, 512], "float32", "output"),
    }
    nodes = [
        Node("conv", "Conv", ["x", "w", ""], ["a"]),
        Node("relu", "Relu", ["a"], ["b"]),
        Node("flat", "Flatten", ["b"], ["c"], {"axis": 1, "view": True}),
        Node("relu2", "Relu", ["x"], ["d"]),
        Node("flat2", "Reshape", ["d"], ["df"], {"shape": [1, 256], "view": True}),
        Node("cat", "Concat", ["c", "df"], ["e"], {"axis": 1}),
        Node("sig", "Sigmoid", ["e"], ["y"]),
    ]
    return Graph("m", ["x"], ["y"], tensors, nodes, {"w": np.zeros((4, 4, 3, 3), np.float32)})


def test_dag_has_activations_only_with_their_bytes():
    dag = dag_from_graph(_graph())
    assert "w" not in dag.sizes
    assert dag.sizes["x"] == 1024 and dag.sizes["e"] == 2048
    kinds = {op.name: op.alias for op in dag.ops}
    assert kinds == {"conv": "", "relu": "inplace", "flat": "view", "relu2": "inplace",
                     "flat2": "view", "cat": "concat", "sig": "inplace"}
    assert dag.ops[0].inputs == ("x", "w")  # the omitted optional input is dropped


def test_plan_graph_aliases_and_checks():
    plan = plan_graph(_graph(), PlanParams(scheduler="graph"))
    assert check_plan(plan) is None
    by_name = {b["name"]: b for b in plan["buffers"]}
    # relu in place over a; flatten a view of b. relu2 may not overwrite the model
    # input x. d's group (d and its view df) is only views, so concat places it at
    # +1024 in e; c's group holds an in-place op, so c is copied. sigmoid runs in
    # place over e.
    assert by_name["b"]["alias_of"] == "a" and by_name["c"]["alias_of"] == "a"
    for name in ("d", "df"):
        assert (by_name[name]["alias_of"], by_name[name]["alias_offset"]) == ("e", 1024)
    assert "alias_of" not in by_name["e"] and by_name["e"]["first"] == 3
    assert by_name["y"]["alias_of"] == "e"
    assert plan["schedule"] == ["conv", "relu", "flat", "relu2", "flat2", "cat", "sig"]
    assert plan["arena_bytes"] >= plan["lower_bound_bytes"]


def test_capacity_too_small_is_a_user_error():
    with pytest.raises(UserError, match="no plan within 100 bytes"):
        plan_graph(_graph(), PlanParams(capacity=100))


def test_plans_carry_no_timings_unless_asked():
    plan = plan_graph(_graph())
    assert all("seconds" not in t for t in plan["trials"])
    assert plan == plan_graph(_graph())
    timed = plan_graph(_graph(), PlanParams(timings=True))
    assert all(t["seconds"] >= 0 for t in timed["trials"])


def test_inplace_only_over_an_input_of_the_output_shape():
    # p is [4] and q is [1, 4]: same bytes, but y = p + q has q's shape, so only
    # q may be overwritten, even though p comes first.
    # (Without the shape rule, p's group {t, p} would be taken: it dies at add.)
    tensors = {
        "x": Tensor([1, 4], "float32", "input"),
        "t": Tensor([1, 4], "float32", "activation"),
        "p": Tensor([4], "float32", "activation"),
        "q": Tensor([1, 4], "float32", "activation"),
        "y": Tensor([1, 4], "float32", "output"),
    }
    nodes = [
        Node("r1", "Sigmoid", ["x"], ["t"]),
        Node("flat", "Reshape", ["t"], ["p"], {"shape": [4]}),
        Node("r2", "Relu", ["x"], ["q"]),
        Node("add", "Add", ["p", "q"], ["y"]),
    ]
    graph = Graph("b", ["x"], ["y"], tensors, nodes)
    dag = dag_from_graph(graph)
    assert dag.ops[3].inplace_inputs == ("q",)
    plan = plan_graph(graph, PlanParams(scheduler="graph"))
    assert check_plan(plan) is None
    y = next(b for b in plan["buffers"] if b["name"] == "y")
    assert y["alias_of"] == "q"


def test_unary_ops_prelu_max_min_run_in_place():
    """Issue 22's element-wise ops write over their input: a chain needs one buffer (the
    PRelu slope and the broadcast Max operand are never overwritten)."""
    shape = [1, 4, 8, 8]
    tensors = {"x": Tensor(shape, "float32", "input"),
               "w": Tensor([4, 4, 1, 1], "float32", "constant"),
               "s": Tensor([4, 1, 1], "float32", "constant"),
               "m": Tensor([8], "float32", "constant"),
               "e": Tensor([], "float32", "constant"),
               **{n: Tensor(shape, "float32", "activation") for n in "abcdef"},
               "y": Tensor(shape, "float32", "output")}
    nodes = [Node("conv", "Conv", ["x", "w"], ["a"]),
             Node("exp", "Exp", ["a"], ["b"]),
             Node("pow", "Pow", ["b", "e"], ["c"]),
             Node("prelu", "PRelu", ["c", "s"], ["d"]),
             Node("max", "Max", ["d", "m"], ["e"]),
             Node("gelu", "Gelu", ["e"], ["f"], {"approximate": "none"}),
             Node("min", "Min", ["f", "m"], ["y"])]
    consts = {"w": np.zeros((4, 4, 1, 1), np.float32), "s": np.zeros((4, 1, 1), np.float32),
              "m": np.zeros(8, np.float32), "e": np.float32(2.0)}
    plan = plan_graph(Graph("u", ["x"], ["y"], tensors, nodes, consts),
                      PlanParams(scheduler="graph"))
    assert check_plan(plan) is None
    by_name = {b["name"]: b for b in plan["buffers"]}
    assert all(by_name[n].get("alias_of") == "a" for n in "bcdef")
    assert by_name["y"].get("alias_of") == "a"
