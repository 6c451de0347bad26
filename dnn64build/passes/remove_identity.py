"""Remove Identity and (inference-mode) Dropout nodes by rewiring their consumers."""

from __future__ import annotations

from dnn64build.ir.graph import Graph, Node


def remove_identity(graph: Graph) -> Graph:
    kept: list[Node] = []
    producers = graph.producers()
    for node in graph.nodes:
        if node.op not in ("Identity", "Dropout"):
            kept.append(node)
            continue
        src, dst = node.inputs[0], node.outputs[0]
        if dst not in graph.outputs:
            graph.replace_uses(dst, src)
            del graph.tensors[dst]
        elif src in producers and src not in graph.outputs:
            # The output name must survive: rename the source tensor to it.
            producer = producers[src]
            producer.outputs = [dst if name == src else name for name in producer.outputs]
            graph.replace_uses(src, dst)
            del graph.tensors[src]
        else:
            # A graph input or constant copied straight to an output: keep a plain copy.
            node.op, node.attrs, node.inputs = "Identity", {}, [src]
            kept.append(node)
    graph.nodes = kept
    return graph
