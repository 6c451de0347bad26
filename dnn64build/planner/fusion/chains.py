"""The nodes a group may hold: chains of spatial ops (see the package doc), cut where
their weights would pass what one group may stage."""

from __future__ import annotations

from dnn64build.ir.graph import Graph, Node

SPATIAL_OPS = ("Conv", "MaxPool", "AveragePool")

# Weights one group may stage at once (one staging half), unless staging_bytes says less.
GROUP_WEIGHT_CAP = 128 * 1024


def ineligible(graph: Graph, node: Node) -> str:
    """Why ``node`` cannot be a member of a group ("" if it can)."""
    if node.op not in SPATIAL_OPS:
        return f"{node.op} is not one of {', '.join(SPATIAL_OPS)}"
    x, y = node.inputs[0], node.outputs[0]
    shape = graph.tensors[x].shape
    if len(shape) != 4 or shape[0] != 1:
        return "its input is not a batch-1 NCHW tensor"
    if graph.is_constant(x):
        return "its input is a constant"
    if graph.tensors[x].dtype not in ("float32", "int8") or \
            graph.tensors[y].dtype != graph.tensors[x].dtype:
        return "its tensors are not all float32 or all int8"
    if len(node.outputs) > 1 and node.outputs[1]:
        return "it has MaxPool's Indices output"
    if node.op == "Conv" and not all(graph.is_constant(t) for t in node.inputs[1:] if t):
        return "its weight or bias is not constant"
    return ""


def link_refusal(graph: Graph, readers: dict[str, list[Node]], producer: Node,
                 consumer: Node) -> str:
    """Why ``producer``'s output cannot stay inside a group feeding ``consumer`` ("" if it
    can); ``readers`` is ``graph.consumers()``."""
    t = producer.outputs[0]
    if t in graph.outputs:
        return f"its output {t!r} is a graph output"
    if len(readers.get(t, [])) != 1:
        return f"its output {t!r} is read by {len(readers.get(t, []))} nodes"
    if consumer.inputs[0] != t:
        return f"its output {t!r} is not the data input of {consumer.name!r}"
    return ""


def find_chains(graph: Graph) -> tuple[list[list[Node]], list[str]]:
    """Maximal chains (two or more nodes) in graph order, and why others are not chains."""
    readers = graph.consumers()
    in_chain: set[str] = set()
    chains: list[list[Node]] = []
    reasons: list[str] = []
    for node in graph.nodes:
        if node.name in in_chain:
            continue
        why = ineligible(graph, node)
        if why:
            if node.op in SPATIAL_OPS:
                reasons.append(f"node {node.name!r} ({node.op}): {why}")
            continue
        chain = [node]
        while True:
            nxt = readers.get(chain[-1].outputs[0], [])
            if len(nxt) != 1:
                break
            refusal = ineligible(graph, nxt[0]) or link_refusal(graph, readers, chain[-1], nxt[0])
            if refusal:
                break
            chain.append(nxt[0])
        if len(chain) >= 2:
            chains.append(chain)
            in_chain.update(n.name for n in chain)
        else:
            nxt = readers.get(node.outputs[0], [])
            detail = (ineligible(graph, nxt[0]) or link_refusal(graph, readers, node, nxt[0])
                      if len(nxt) == 1 else link_refusal(graph, readers, node, node))
            reasons.append(f"node {node.name!r} ({node.op}): cannot be fused with the next "
                           f"node: {detail}")
    return chains, reasons


def member_weight_bytes(graph: Graph, node: Node) -> int:
    """Bytes node's constants take in a staged tile, each padded to 16 (an upper bound:
    int8 layers also stage per-channel int32 multipliers and shifts)."""
    total = sum(-(-graph.constants[t].nbytes // 16) * 16
                for t in node.inputs[1:] if t and graph.is_constant(t))
    if "int8" in node.attrs and node.op == "Conv":
        total += 2 * -(-4 * graph.tensors[node.outputs[0]].shape[1] // 16) * 16
    return total


def split_by_weights(graph: Graph, chains: list[list[Node]], cap: int
                     ) -> tuple[list[list[Node]], list[str]]:
    """Chains cut into runs whose weights fit one staging half of ``cap`` bytes (a group's
    weights are staged at once); runs shorter than two nodes are dropped, with a reason."""
    runs, reasons = [], []
    for chain in chains:
        run: list[Node] = []
        used = 0
        for node in [*chain, None]:
            size = member_weight_bytes(graph, node) if node is not None else 0
            if node is not None and used + size <= cap:
                run.append(node)
                used += size
                continue
            if len(run) >= 2:
                runs.append(run)
            if node is not None and size > cap:
                reasons.append(f"node {node.name!r} ({node.op}): its weights ({size} bytes) "
                               f"exceed the {cap} bytes a group may stage")
                run, used = [], 0
            else:
                run, used = ([node], size) if node is not None else ([], 0)
    return runs, reasons
