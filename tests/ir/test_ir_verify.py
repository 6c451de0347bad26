"""verify() accepts a well-formed graph and names each violated invariant."""

from __future__ import annotations

import numpy as np
import pytest

from dnn64build.ir import Graph, IRError, Node, Tensor, verify


def good() -> Graph:
    graph = Graph(
        name="g", inputs=["x"], outputs=["z"],
        tensors={"x": Tensor([1, 3], "float32", "input"),
                 "y": Tensor([1, 3], "float32", "activation"),
                 "z": Tensor([1, 3], "float32", "output")},
        nodes=[Node("relu", "Relu", ["x"], ["y"]), Node("add", "Add", ["y", "c"], ["z"])])
    graph.add_constant("c", np.ones(3, np.float32))
    return graph


def test_good_graph_passes() -> None:
    verify(good())


def broken(change) -> Graph:
    graph = good()
    change(graph)
    return graph


@pytest.mark.parametrize(("change", "message"), [
    (lambda g: g.nodes.reverse(), "not defined before its use"),
    (lambda g: g.nodes.append(Node("again", "Relu", ["x"], ["y"])), "defined twice"),
    (lambda g: setattr(g.nodes[1], "name", "relu"), "node name empty or used twice"),
    (lambda g: setattr(g.tensors["y"], "shape", [1, None]), "is not static"),
    (lambda g: setattr(g.tensors["y"], "dtype", "float99"), "bad dtype"),
    (lambda g: setattr(g.tensors["y"], "kind", "weird"), "unknown kind"),
    (lambda g: g.constants.__setitem__("c", np.ones(4, np.float32)), "does not match"),
    (lambda g: g.constants.pop("c"), "disagrees with constant data"),
    (lambda g: setattr(g.tensors["z"], "kind", "activation"), "graph output 'z'"),
    (lambda g: setattr(g.tensors["x"], "kind", "activation"), "graph input 'x'"),
    (lambda g: g.tensors.__setitem__("orphan", Tensor([1], "float32", "activation")),
     "never defined"),
    (lambda g: setattr(g.tensors["y"], "kind", "input"), "output 'y' must be an activation"),
    (lambda g: g.nodes[0].attrs.__setitem__("alpha", np.float32(0.5)), "not plain JSON data"),
    (lambda g: g.nodes[0].attrs.__setitem__("max", float("inf")), "not plain JSON data"),
])
def test_violations_are_named(change, message: str) -> None:
    with pytest.raises(IRError, match=message):
        verify(broken(change))


def test_graph_helpers() -> None:
    graph = good()
    assert graph.producers()["y"].name == "relu"
    assert [n.name for n in graph.consumers()["y"]] == ["add"]
    assert graph.unique_name("y") == "y_1" and graph.unique_name("fresh") == "fresh"
    graph.outputs = ["y"]
    graph.tensors["y"].kind = "output"
    graph.remove_unused()
    assert [n.name for n in graph.nodes] == ["relu"] and "c" not in graph.constants
    verify(graph)
