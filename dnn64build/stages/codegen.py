"""Codegen stage: planned IR -> model.c/model.h, the weight blob in both byte orders, and
meta.json (arena, staging, inputs/outputs) for the pack stage and ``dnn64build run``."""

from __future__ import annotations

from dnn64build.build_outputs import load_json
from dnn64build.codegen.model import generate_model
from dnn64build.ir import load_graph
from dnn64build.stages.io import StageArgs


def main(args: StageArgs) -> None:
    graph = load_graph(args.input("graph"), args.input("weights"))
    plan = load_json(args.input("plan"))
    model = generate_model(
        graph, plan, symbol=args.config["symbol"], staging_bytes=plan["staging"]["bytes"],
        where=args.config["label"],
        kernels=args.config.get("kernels", "cpu"),
    )
    args.write_text("source", model.c_source)
    args.write_text("header", model.header)
    args.write("weights_big", model.weights_big)
    args.write("weights_little", model.weights_little)
    args.write_json("meta", model.metadata)
