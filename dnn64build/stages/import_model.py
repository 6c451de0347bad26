"""Import stage: ONNX -> optimised graph IR (graph.json + weights.npz)."""

from __future__ import annotations

from dnn64build.frontend import import_loaded, read_onnx
from dnn64build.ir import save_graph
from dnn64build.passes import optimize
from dnn64build.stages.io import StageArgs


def main(args: StageArgs) -> None:
    path, label = args.input("onnx"), args.config["label"]
    model, read = read_onnx(path, where=label)
    args.write_depfile(read)  # the external data files too: editing one reruns the import
    graph = import_loaded(model, args.config.get("inputs") or None, where=label, name=path.stem)
    save_graph(optimize(graph), args.outputs["graph"], args.outputs["weights"])
