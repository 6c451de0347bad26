"""Deterministic save/load of a Graph as JSON (structure) + .npz (constant data).

The same graph always gives byte-identical files: JSON keys are sorted, the .npz is
written entry by entry in name order with a fixed zip timestamp, and a file whose
bytes would not change is left untouched (so ninja's ``restat`` can stop a rebuild).
"""

from __future__ import annotations

import io
import json
import os
import zipfile

import numpy as np

from dnn64build.atomic_write import write_if_changed
from dnn64build.build_outputs import DAMAGE, damaged, load_json
from dnn64build.ir.graph import Graph, Node, Tensor

FORMAT = "dnn64-ir"
VERSION = 1
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def graph_to_json(graph: Graph) -> str:
    """The JSON text of ``graph`` (without constant data)."""
    tensors = {}
    for name, tensor in graph.tensors.items():
        entry: dict = {"shape": list(tensor.shape), "dtype": tensor.dtype, "kind": tensor.kind}
        if tensor.quant is not None:
            entry["quant"] = tensor.quant
        tensors[name] = entry
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "name": graph.name,
        "inputs": list(graph.inputs),
        "outputs": list(graph.outputs),
        "tensors": tensors,
        "nodes": [
            {
                "name": node.name,
                "op": node.op,
                "inputs": list(node.inputs),
                "outputs": list(node.outputs),
                "attrs": node.attrs,
            }
            for node in graph.nodes
        ],
    }
    return json.dumps(doc, indent=1, sort_keys=True, allow_nan=False) + "\n"


def constants_to_npz(constants: dict[str, np.ndarray]) -> bytes:
    """The .npz bytes of ``constants``, one ``<name>.npy`` entry per tensor, sorted."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for name in sorted(constants):
            array = io.BytesIO()
            np.lib.format.write_array(array, np.array(constants[name], order="C"),
                                      allow_pickle=False)
            info = zipfile.ZipInfo(name + ".npy", date_time=_ZIP_DATE)
            info.external_attr = 0o644 << 16
            archive.writestr(info, array.getvalue())
    return buffer.getvalue()


def save_graph(graph: Graph, json_path: str | os.PathLike, npz_path: str | os.PathLike) -> None:
    """Write ``graph`` to ``json_path`` and its constant data to ``npz_path``."""
    write_if_changed(json_path, graph_to_json(graph).encode())
    write_if_changed(npz_path, constants_to_npz(graph.constants))


def load_graph(json_path: str | os.PathLike, npz_path: str | os.PathLike) -> Graph:
    """Read a graph written by ``save_graph``; UserError for a damaged file."""
    doc = load_json(json_path)
    if doc.get("format") != FORMAT or doc.get("version") != VERSION:
        raise ValueError(f"{json_path}: not a {FORMAT} version {VERSION} file")
    tensors = {
        name: Tensor(list(t["shape"]), t["dtype"], t["kind"], t.get("quant"))
        for name, t in doc["tensors"].items()
    }
    nodes = [Node(n["name"], n["op"], list(n["inputs"]), list(n["outputs"]), n["attrs"])
             for n in doc["nodes"]]
    try:
        with np.load(npz_path, allow_pickle=False) as archive:
            constants = {name: archive[name] for name in archive.files}
    except DAMAGE as exc:
        raise damaged(npz_path, exc) from exc
    return Graph(doc["name"], list(doc["inputs"]), list(doc["outputs"]), tensors, nodes,
                 constants)
