"""import_onnx: an ONNX file -> a verified IR Graph (no optimisation; see passes).

Steps: load and check the model, convert its opset into the supported range and its
float64 tensors to float32 (frontend/float64.py), declare int64 index inputs int32
(frontend/indices.py), rewrite Sum and the like (frontend/rewrite.py), lift 1-D windows
to 2-D (frontend/spatial1d.py), bind dynamic input dims from ``input_shapes`` (the target
attribute ``inputs``), split 3-D windows into 2-D ones (frontend/spatial3d.py), resolve static
shapes and fold every node computed from constants alone (frontend/shapes.py), then
translate every other node into an IR node with canonical attributes. Constant parameter
inputs are absorbed into attributes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
from onnx import external_data_helper, numpy_helper, version_converter

from dnn64build.errors import UserError
from dnn64build.frontend.evaluate import canonical_attrs, constant_value, param_names
from dnn64build.frontend.float64 import float64_as_float32
from dnn64build.frontend.indices import index_inputs_as_int32
from dnn64build.frontend.normalize import SUPPORTED_OPS, Unsupported
from dnn64build.frontend.rewrite import rewrite_model
from dnn64build.frontend.shapes import ShapeInferenceError, TensorType, resolve_types
from dnn64build.frontend.spatial1d import lift_1d
from dnn64build.frontend.spatial3d import split_3d
from dnn64build.ir.graph import Graph, Node, Tensor, free_name
from dnn64build.ir.params import PARAM_INPUTS
from dnn64build.ir.verify import verify

MIN_OPSET, MAX_OPSET = 11, 21
TARGET_OPSET = 17  # what models outside [MIN_OPSET, MAX_OPSET] are converted to
_HINT = "supported operators: " + ", ".join(SUPPORTED_OPS)


def import_model(model: onnx.ModelProto, input_shapes: dict[str, list[int]] | None = None,
                 *, where: str, name: str) -> Graph:
    """A float ONNX model, loaded and checked by ``load_onnx``, as an IR graph with static
    shapes. ``input_shapes`` binds dynamic input dims (e.g. the batch) by input name;
    ``name`` names the graph when the model does not. Raises UserError for an unsupported
    operator or attribute, or a shape that cannot be resolved."""
    model, opset = _convert_opset(model, where)
    float64_as_float32(model, where)
    index_inputs_as_int32(model)
    rewrite_model(model)
    _check_outputs(model, where)
    lift_1d(model, opset)
    _bind_inputs(model, input_shapes or {}, where)
    split_3d(model, opset)
    _check_sizes(model, where)
    try:
        types, folded = resolve_types(model, opset)
    except ShapeInferenceError as exc:
        raise UserError(f"malformed model: shape inference failed: {exc}", where=where) from exc
    _check_outputs_not_empty(model, types, where)
    graph = _Builder(model, types, folded, opset, where).build(model.graph.name or name)
    verify(graph)
    return graph


def load_onnx(path: str | os.PathLike) -> onnx.ModelProto:
    """Read and check an ONNX file; UserError if it is missing or malformed."""
    return read_onnx(path)[0]


def read_onnx(path: str | os.PathLike, *, where: str | None = None
              ) -> tuple[onnx.ModelProto, list[Path]]:
    """Read and check an ONNX file with its external data; returns the model and every file
    read (the .onnx file, then each external data file once, in the model's order).
    ``where`` names the model in errors (default: ``path``)."""
    where = where or str(path)
    if not Path(path).is_file():
        raise UserError("ONNX model file not found", where=where)
    try:
        model = onnx.load(os.fspath(path), load_external_data=False)
    except Exception as exc:  # protobuf raises several unrelated types
        raise UserError(f"not a readable ONNX model: {exc}", where=where) from exc
    data_files = _external_data_files(model, Path(path), where)
    try:
        external_data_helper.load_external_data_for_model(model, os.fspath(Path(path).parent))
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as exc:
        first = str(exc).strip().splitlines()[0]
        raise UserError(f"malformed ONNX model: {first}", where=where) from exc
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read the model's external data: {exc}", where=where) from exc
    return model, [Path(path), *data_files]


def external_data_of(inputs: dict[str, list[str]]) -> list[Path]:
    """The external data files the import stage will read for its ``onnx`` input (the
    import registry's ``reads``); UserError when the model cannot be read."""
    path = Path(inputs["onnx"][0])
    try:
        model = onnx.load(os.fspath(path), load_external_data=False)
    except Exception as exc:  # protobuf raises several unrelated types
        raise UserError(f"not a readable ONNX model: {exc}", where=str(path)) from exc
    return _external_data_files(model, path, str(path))


def _external_data_files(model: onnx.ModelProto, path: Path, where: str) -> list[Path]:
    """The files ``model``'s tensors keep their data in (``save_as_external_data``), which
    must lie beside the model or below its folder, as the ONNX spec requires."""
    files: list[Path] = []
    for tensor in _all_tensors(model.graph):
        if not external_data_helper.uses_external_data(tensor):
            continue
        location = external_data_helper.ExternalDataInfo(tensor).location
        relative = Path(location)
        if relative.is_absolute() or ".." in relative.parts or not location:
            raise UserError(f"tensor {tensor.name!r}: external data location {location!r} "
                            "is not a path inside the model's folder", where=where)
        file = path.parent / relative
        if not file.is_file():
            raise UserError(f"tensor {tensor.name!r}: external data file {location!r} not "
                            f"found in the folder of {path.name}", where=where,
                            hint="keep the data file next to the .onnx file it was saved with")
        if file not in files:
            files.append(file)
    return files


def _all_tensors(graph: onnx.GraphProto) -> Iterator[onnx.TensorProto]:
    """Initializers and tensor attributes of ``graph`` and of its subgraphs."""
    yield from graph.initializer
    for node in graph.node:
        for attr in node.attribute:
            yield from ([attr.t] if attr.HasField("t") else [])
            yield from attr.tensors
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                yield from _all_tensors(sub)


def _default_opset(model: onnx.ModelProto) -> int:
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return entry.version
    return 1


def _convert_opset(model: onnx.ModelProto, where: str) -> tuple[onnx.ModelProto, int]:
    opset = _default_opset(model)
    if MIN_OPSET <= opset <= MAX_OPSET:
        return model, opset
    try:
        converted = version_converter.convert_version(model, TARGET_OPSET)
    except Exception as exc:
        raise UserError(f"cannot convert the model from opset {opset} to {TARGET_OPSET}: {exc}",
                        where=where,
                        hint=f"export the model with an opset from {MIN_OPSET} to {MAX_OPSET}"
                        ) from exc
    return converted, TARGET_OPSET


def _check_outputs(model: onnx.ModelProto, where: str) -> None:
    produced = {name for node in model.graph.node if node.op_type != "Constant"
                for name in node.output}
    for vi in model.graph.output:
        if vi.name not in produced:
            raise UserError(f"graph output {vi.name!r} is not computed by any node",
                            where=where, hint="outputs that are inputs or constants are not "
                            "supported; remove them from the model's outputs")


def _bind_inputs(model: onnx.ModelProto, input_shapes: dict[str, list[int]], where: str) -> None:
    """Give every graph input a static shape; clear output/value_info shapes (re-inferred)."""
    inits = {init.name for init in model.graph.initializer}
    inputs = [vi for vi in model.graph.input if vi.name not in inits]
    names = [vi.name for vi in inputs]
    for name in input_shapes:
        if name not in names:
            raise UserError(f"attribute inputs names {name!r}, which is not a model input",
                            where=where, hint=f"the model's inputs are: {', '.join(names)}")
    for vi in inputs:
        dims = vi.type.tensor_type.shape.dim
        declared = [d.dim_value if d.HasField("dim_value") else None for d in dims]
        wanted = input_shapes.get(vi.name)
        if wanted is not None:
            wanted = [int(d) for d in wanted]
            if len(wanted) != len(declared) or any(
                    d is not None and d != w for d, w in zip(declared, wanted, strict=False)):
                raise UserError(f"input {vi.name!r}: attribute inputs gives {wanted}, the model "
                                f"declares {_dims_text(dims)}", where=where)
        elif None in declared or not vi.type.tensor_type.HasField("shape"):
            raise UserError(f"input {vi.name!r} has dynamic shape {_dims_text(dims)}",
                            where=where,
                            hint="bind it with the target attribute inputs, e.g. inputs: "
                            f"{{{vi.name}: {[1 if d is None else d for d in declared]}}}")
        else:
            wanted = declared
        shape = vi.type.tensor_type.shape
        del shape.dim[:]
        for d in wanted:
            shape.dim.add().dim_value = d
    for vi in model.graph.output:
        vi.type.tensor_type.ClearField("shape")
    del model.graph.value_info[:]


def _broadcasts_to(shape: list[int], target: list[int]) -> bool:
    """Whether ``shape`` broadcasts to ``target`` (ONNX unidirectional broadcasting)."""
    try:
        return list(np.broadcast_shapes(tuple(shape), tuple(target))) == list(target)
    except ValueError:
        return False


def _check_sizes(model: onnx.ModelProto, where: str) -> None:
    """Every graph input and constant has dims of at least 1: an empty tensor (a [0, 8]
    weight, a [1, 0, 4, 4] input) built and then crashed ``run`` or failed in the ROM, a
    negative dim crashed the import. An empty 1-D constant is how ONNX writes an absent
    optional parameter (Resize's roi): allowed."""
    shapes = [(f"input {vi.name!r}", [d.dim_value for d in vi.type.tensor_type.shape.dim])
              for vi in model.graph.input]
    shapes += [(f"constant {t.name!r}", list(t.dims)) for t in _all_tensors(model.graph)
               if list(t.dims) != [0]]
    for what, dims in shapes:
        if any(d < 1 for d in dims):
            raise UserError(f"{what} has shape {dims}: every dimension must be at least 1 "
                            "(empty tensors are not supported)", where=where,
                            hint="export the model with the sizes it runs with")


def _check_outputs_not_empty(model: onnx.ModelProto, types: dict[str, TensorType],
                             where: str) -> None:
    """No node computes an empty tensor (from an empty 1-D constant, say)."""
    for node in model.graph.node:
        for name in node.output:
            shape = types[name].shape if name in types else None
            if shape is not None and any(d is not None and d < 1 for d in shape):
                raise UserError(f"node {node.name or name!r} (op {node.op_type}) computes "
                                f"{name!r} of shape {shape}: empty tensors are not "
                                "supported", where=where,
                                hint="export the model with the sizes it runs with")


def _dims_text(dims) -> str:
    return "[" + ", ".join(str(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "?")
                           for d in dims) + "]"


class _Builder:
    """Translates the ONNX nodes one by one into a Graph."""

    def __init__(self, model: onnx.ModelProto, types: dict[str, TensorType],
                 folded: dict[str, np.ndarray], opset: int, where: str):
        self.model = model
        self.types = types
        self.folded = folded
        self.opset = opset
        self.where = where
        self.graph = Graph(name="", inputs=[], outputs=[], tensors={}, nodes=[])
        self.node_names: set[str] = set()
        self.used: set[str] = {name for node in model.graph.node for name in node.input}
        self.used.update(vi.name for vi in model.graph.output)
        self.onnx_tensors = self.used | {n for node in model.graph.node for n in node.output}

    def build(self, name: str) -> Graph:
        g, m = self.graph, self.model.graph
        g.name = name
        for init in m.initializer:
            g.add_constant(init.name, numpy_helper.to_array(init))
        for vi in m.input:
            if vi.name not in g.constants:
                t = self.types[vi.name]
                g.tensors[vi.name] = Tensor(list(t.shape), t.dtype, "input")
                g.inputs.append(vi.name)
        for index, node in enumerate(m.node):
            self._translate(node, index)
        for vi in m.output:
            g.tensors[vi.name].kind = "output"
            g.outputs.append(vi.name)
        g.remove_unused()
        return g

    def _fail(self, node: onnx.NodeProto, problem: str, hint: str | None = _HINT) -> UserError:
        shapes = [self.types[n].shape if n in self.types else None for n in node.input if n]
        label = node.name or node.output[0]
        return UserError(f"node {label!r} (op {node.op_type}, input shapes {shapes}): {problem}",
                         where=self.where, hint=hint)

    def _translate(self, node: onnx.NodeProto, index: int) -> None:
        g = self.graph
        if node.output and all(name in self.folded for name in node.output if name):
            for name in node.output:
                if name in self.used:
                    g.add_constant(name, self.folded[name])
            return
        if node.domain not in ("", "ai.onnx") or node.op_type not in SUPPORTED_OPS:
            domain = f" in domain {node.domain!r}" if node.domain else ""
            raise self._fail(node, f"unsupported operator {node.op_type!r}{domain}")
        if node.op_type == "Constant":
            try:
                g.add_constant(node.output[0], constant_value(node))
            except ValueError as exc:
                raise self._fail(node, str(exc)) from exc
            return
        if node.op_type == "Split":
            self._split(node, index)
            return
        if node.op_type == "InstanceNormalization":
            self._instance_norm(node, index)
            return
        self._check_extra_outputs(node)
        in_shapes = [self._static(node, name) if name else None for name in node.input]
        out_shapes = [self._static(node, node.output[0])]
        params = param_names(node)
        known = None
        # Reshape's target is its static output shape, whatever computes the shape input.
        if node.op_type == "Reshape" or all(name in g.constants for name in params.values()):
            known = {key: g.constants[name] for key, name in params.items()
                     if name in g.constants}
        try:
            attrs = canonical_attrs(node, in_shapes, out_shapes, self.opset, known)
        except Unsupported as exc:
            raise self._fail(node, str(exc), hint=None) from exc
        op = "Resize" if node.op_type == "Upsample" else node.op_type
        inputs = list(node.input)
        if (op in PARAM_INPUTS and known is not None) or op == "Dropout":
            inputs = inputs[:1]
        elif node.op_type == "Upsample":
            inputs = [inputs[0], "", inputs[1], ""]  # Resize's X, roi, scales, sizes
        elif op == "PRelu":
            inputs[1] = self._prelu_slope(node, inputs[1], in_shapes[0], in_shapes[1])
        name = self._node_name(node.name or f"{op}_{index}")
        out = node.output[0]
        t = self.types[out]
        g.tensors[out] = Tensor(list(t.shape), t.dtype, "activation")
        if (op in ("Softmax", "LogSoftmax") and self.opset < 13
                and attrs["axis"] != len(in_shapes[0]) - 1):
            self._legacy_softmax(op, name, inputs[0], out, attrs["axis"], in_shapes[0])
            return
        g.nodes.append(Node(name, op, inputs, [out], attrs))

    def _node_name(self, base: str) -> str:
        """``base``, made unique among node names (tensor names are another namespace)."""
        name = free_name(base, self.node_names)
        self.node_names.add(name)
        return name

    def _tensor_name(self, base: str) -> str:
        """A new tensor name clashing with no ONNX tensor, even one not translated yet."""
        return free_name(base, self.onnx_tensors | set(self.graph.tensors))

    def _static(self, node: onnx.NodeProto, name: str) -> list[int]:
        t = self.types.get(name)
        if t is None or not t.static:
            shape = None if t is None else t.shape
            raise self._fail(node, f"cannot resolve a static shape for tensor {name!r} "
                             f"(got {shape})",
                             hint="bind dynamic input dims with the target attribute inputs; "
                             "shapes must not depend on input values")
        return list(t.shape)

    def _check_extra_outputs(self, node: onnx.NodeProto) -> None:
        for k, name in enumerate(node.output[1:], start=2):
            if name and name in self.used:
                raise self._fail(node, f"output #{k} ({name!r}) is used, but only the first "
                                 "output of this operator is supported", hint=None)
        if node.op_type == "Dropout" and len(node.input) > 2 and node.input[2]:
            mode = self.graph.constants.get(node.input[2])
            if mode is None or bool(mode):
                raise self._fail(node, "training_mode must be a constant false", hint=None)

    def _split(self, node: onnx.NodeProto, index: int) -> None:
        """Split as one Slice per output along its axis, the sizes from the resolved output
        shapes (whether they came from the split input, the attribute or num_outputs)."""
        g = self.graph
        in_shape = self._static(node, node.input[0])
        axis = canonical_attrs(node, [in_shape], [], self.opset, None)["axis"]
        start = 0
        for k, out in enumerate(node.output):
            shape = self._static(node, out)
            end = start + shape[axis]
            g.tensors[out] = Tensor(shape, self.types[out].dtype, "activation")
            g.nodes.append(Node(self._node_name(f"{node.name or 'Split_' + str(index)}_{k}"),
                                "Slice", [node.input[0]], [out],
                                {"starts": [start], "ends": [end], "axes": [axis],
                                 "steps": [1]}))
            start = end

    def _instance_norm(self, node: onnx.NodeProto, index: int) -> None:
        """InstanceNormalization as LayerNormalization over the dims from 2 on (scale 1)
        followed by BatchNormalization with the per-channel scale and bias and the identity
        statistics (mean 0, variance 1, epsilon 0)."""
        g = self.graph
        x, scale, bias = node.input[:3]
        shape = self._static(node, x)
        if len(shape) < 3:
            raise self._fail(node, "an input without spatial dims (rank < 3)", hint=None)
        if scale not in g.constants or bias not in g.constants:
            raise self._fail(node, "a scale or bias that is not constant is not supported",
                             hint=None)
        epsilon = canonical_attrs(node, [shape], [shape], self.opset, None)["epsilon"]
        name = self._node_name(node.name or f"InstanceNormalization_{index}")
        out, dtype = node.output[0], self.types[node.output[0]].dtype
        normalized = self._tensor_name(f"{name}_normalized")
        g.tensors[normalized] = Tensor(shape, dtype, "activation")
        g.tensors[out] = Tensor(shape, dtype, "activation")
        unit, zeros, ones = (g.add_constant(self._tensor_name(f"{name}_{what}"), value)
                             for what, value in (("unit", np.ones([1], np.float32)),
                                                 ("mean", np.zeros([shape[1]], np.float32)),
                                                 ("variance", np.ones([shape[1]], np.float32))))
        g.nodes.append(Node(self._node_name(f"{name}_normalize"), "LayerNormalization",
                            [x, unit], [normalized], {"axis": 2, "epsilon": epsilon}))
        g.nodes.append(Node(name, "BatchNormalization", [normalized, scale, bias, zeros, ones],
                            [out], {"epsilon": 0.0}))

    def _prelu_slope(self, node: onnx.NodeProto, slope: str, x: list[int],
                     shape: list[int]) -> str:
        """The slope, broadcastable to x. Before opset 7 a 1-D slope of C values is per
        channel (axis 1); converted models keep that shape: it becomes [C, 1, ...]."""
        if _broadcasts_to(shape, x):
            return slope
        if len(shape) == 1 and len(x) > 2 and shape[0] == x[1] and slope in self.graph.constants:
            value = self.graph.constants[slope].reshape(shape[0], *[1] * (len(x) - 2))
            return self.graph.add_constant(self._tensor_name(f"{slope}_per_channel"), value)
        raise self._fail(node, f"a slope of shape {shape} that does not broadcast to the "
                         f"input's {x}", hint=None)

    def _legacy_softmax(self, op: str, name: str, x: str, out: str, axis: int,
                        shape: list[int]) -> None:
        """Opset < 13 (Log)Softmax normalises over all dims from ``axis`` on (as a 2-D
        matrix)."""
        g = self.graph
        flat = [int(np.prod(shape[:axis])), int(np.prod(shape[axis:]))]
        t_in, t_out = self._tensor_name(f"{name}_2d"), self._tensor_name(f"{name}_2d_out")
        g.tensors[t_in] = Tensor(flat, g.tensors[out].dtype, "activation")
        g.tensors[t_out] = Tensor(flat, g.tensors[out].dtype, "activation")
        g.nodes.append(Node(self._node_name(f"{name}_flatten"), "Reshape", [x], [t_in],
                            {"shape": flat}))
        g.nodes.append(Node(name, op, [t_in], [t_out], {"axis": 1}))
        g.nodes.append(Node(self._node_name(f"{name}_unflatten"), "Reshape", [t_out], [out],
                            {"shape": list(shape)}))

