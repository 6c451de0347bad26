"""Quantize stage: fp32 IR -> int8 IR (or the fp32 IR unchanged for ``mode: none``),
with an accuracy report."""

from __future__ import annotations

from dnn64build.ir import load_graph, save_graph
from dnn64build.stages.io import StageArgs


def main(args: StageArgs) -> None:
    config = args.config
    graph_path, weights_path = args.input("graph"), args.input("weights")
    if config["mode"] == "none":
        args.write("graph", graph_path.read_bytes())
        args.write("weights", weights_path.read_bytes())
        args.write_json("report", {"mode": "none"})
        return
    from dnn64build.quant import load_calibration, quantize_graph

    graph = load_graph(graph_path, weights_path)
    calibration, evaluation = (
        load_calibration(path, graph.inputs, where=f"quantize.{data} file {path.name}")
        if path else None
        for data, path in (("calibration", args.optional_input("calibration")),
                           ("evaluation", args.optional_input("evaluation")))
    )
    quantized, report = quantize_graph(
        graph,
        calibration,
        method=config.get("method", "minmax"),
        percentile=config.get("percentile", 99.99),
        synthetic=config.get("synthetic", False),
        fp32_nodes=tuple(config.get("fp32_nodes", ())),
        eval_inputs=evaluation,
        io=config.get("io", "float32"),
    )
    save_graph(quantized, args.outputs["graph"], args.outputs["weights"])
    args.write_json("report", report)
