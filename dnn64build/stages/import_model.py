"""Import stage: ONNX -> optimised graph IR (graph.json + weights.npz)."""

from __future__ import annotations

from dnn64build.frontend import import_onnx
from dnn64build.ir import save_graph
from dnn64build.passes import optimize
from dnn64build.stages.io import StageArgs


def main(args: StageArgs) -> None:
    graph = import_onnx(args.input("onnx"), args.config.get("inputs") or None)
    save_graph(optimize(graph), args.outputs["graph"], args.outputs["weights"])
