"""The onnx package's backend test data, run through dnn64build on the host and classified.

Each case of ``onnx/backend/test/data/{light,simple,pytorch-converted,pytorch-operator}``
is imported, optimised, planned and generated as ``dnn64build run --platform host`` would
(fp32), all cases that compile are linked into one host program and run once, and each
case's outputs are compared with the expected outputs shipped with the onnx package, at
the tolerance the onnx backend tests use (rtol 1e-3, atol 1e-7 unless the case's
data.json says otherwise). Outcomes: pass, wrong, refused (a UserError: its message) or
internal error (any other exception: its type and message).

The ``light`` models ship no inputs: the onnx backend runner feeds each float input
``arange(n).reshape(shape) / n`` and ships the reference outputs for that input.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from dnn64build.array_files import fitting
from dnn64build.codegen.model import GeneratedModel, generate_model
from dnn64build.errors import UserError
from dnn64build.frontend import import_onnx
from dnn64build.ir.graph import Graph
from dnn64build.passes import optimize
from dnn64build.planner.graph_plan import plan_graph
from tools.host_run import run_on_host

FOLDERS = ("light", "simple", "pytorch-converted", "pytorch-operator")
STATUSES = ("pass", "wrong", "refused", "internal error")


def data_dir() -> Path:
    return Path(os.path.dirname(onnx.__file__)) / "backend" / "test" / "data"


@dataclass(frozen=True)
class Case:
    folder: str
    name: str
    model: Path
    outputs: tuple[Path, ...]
    inputs: tuple[Path, ...] | None  # None: the light models' arange input
    rtol: float = 1e-3
    atol: float = 1e-7

    @property
    def key(self) -> str:
        return f"{self.folder}/{self.name}"

    def feeds(self) -> dict[str, np.ndarray]:
        """The model's (non-initializer) inputs by name."""
        model = onnx.load(self.model, load_external_data=False)
        inits = {init.name for init in model.graph.initializer}
        declared = [vi for vi in model.graph.input if vi.name not in inits]
        if self.inputs is not None:
            arrays = [_read(path) for path in self.inputs]
            return {vi.name: a for vi, a in zip(declared, arrays, strict=True)}
        feeds = {}
        for vi in declared:
            shape = [d.dim_value or 1 for d in vi.type.tensor_type.shape.dim]
            n = int(np.prod(shape))
            feeds[vi.name] = (np.arange(n).reshape(shape) / n).astype(np.float32)
        return feeds

    def expected(self) -> list[np.ndarray]:
        return [_read(path) for path in self.outputs]


@dataclass(frozen=True)
class Outcome:
    status: str  # one of STATUSES
    detail: str = ""


def _read(path: Path) -> np.ndarray:
    tensor = onnx.TensorProto()
    tensor.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(tensor)


def backend_cases(root: Path | None = None) -> list[Case]:
    """Every case of the four folders, sorted by folder then name."""
    root = root or data_dir()
    cases = []
    for folder in FOLDERS:
        for entry in sorted((root / folder).iterdir()):
            if entry.is_dir() and (entry / "model.onnx").is_file():
                tol = {}
                if (entry / "data.json").is_file():
                    data = json.loads((entry / "data.json").read_text())
                    tol = {k: data[k] for k in ("rtol", "atol") if k in data}
                data_set = entry / "test_data_set_0"
                cases.append(Case(folder, entry.name, entry / "model.onnx",
                                  tuple(sorted(data_set.glob("output_*.pb"), key=_index)),
                                  tuple(sorted(data_set.glob("input_*.pb"), key=_index)),
                                  **tol))
            elif entry.suffix == ".onnx":
                outputs = tuple(sorted(root.glob(f"{folder}/{entry.stem}_output_*.pb"),
                                       key=_index))
                cases.append(Case(folder, entry.stem, entry, outputs, None))
    return cases


def _index(path: Path) -> int:
    return int(path.stem.rsplit("_", 1)[1])


def compile_case(case: Case, symbol: str) -> tuple[Graph, GeneratedModel]:
    """Import, optimise, plan and generate ``case`` as an fp32 host model."""
    graph = optimize(import_onnx(case.model, where=case.key))
    plan = plan_graph(graph)
    return graph, generate_model(graph, plan, symbol=symbol, where=case.key)


def _as_input(value: np.ndarray, dtype: str, name: str, where: str) -> np.ndarray:
    """What ``dnn64build run`` feeds: float data converted as its --input is."""
    return fitting(value, dtype, name, where=where)


def _failure(exc: Exception) -> Outcome:
    if isinstance(exc, UserError):
        return Outcome("refused", str(exc))
    return Outcome("internal error", f"{type(exc).__name__}: {exc}")


def _compare(case: Case, graph: Graph, actual: dict[str, np.ndarray]) -> Outcome:
    expected = case.expected()
    if len(expected) != len(graph.outputs):
        return Outcome("wrong", f"{len(graph.outputs)} outputs, {len(expected)} expected")
    for name, want in zip(graph.outputs, expected, strict=True):
        got = np.asarray(actual[name])
        if got.shape != want.shape:
            return Outcome("wrong", f"output {name!r}: shape {list(got.shape)}, "
                           f"expected {list(want.shape)}")
        want64, got64 = np.asarray(want, np.float64), np.asarray(got, np.float64)
        # As the onnx backend tests compare (numpy's assert_allclose): NaN equals NaN.
        close = np.isclose(got64, want64, rtol=case.rtol, atol=case.atol, equal_nan=True)
        if not close.all():
            at = np.argwhere(~close)[0].tolist()
            return Outcome("wrong", f"output {name!r}: {int((~close).sum())} value(s) off, "
                           f"first at {at}: {got64[tuple(at)]:.6g}, expected "
                           f"{want64[tuple(at)]:.6g} (rtol {case.rtol}, atol {case.atol})")
    return Outcome("pass")


def classify(cases: Sequence[Case], workdir: Path, runtime_cache: Path | None = None
             ) -> dict[str, Outcome]:
    """Case key -> outcome; every compiled case runs in one host program (a case whose
    program fails to build or run alone is an internal error)."""
    outcomes: dict[str, Outcome] = {}
    compiled: list[tuple[Case, Graph, GeneratedModel, list[np.ndarray]]] = []
    for index, case in enumerate(cases):
        try:
            graph, model = compile_case(case, f"case{index}")
            feeds = case.feeds()
            inputs = [_as_input(feeds[n], graph.tensors[n].dtype, n, case.key)
                      for n in graph.inputs]
        except Exception as exc:  # classified, not hidden: the outcome records it
            outcomes[case.key] = _failure(exc)
            continue
        compiled.append((case, graph, model, inputs))
    runtime_cache = runtime_cache or workdir / "runtime"
    try:
        results = run_on_host([(m, i) for _, _, m, i in compiled], workdir / "all",
                              cache_dir=runtime_cache).outputs
    except Exception:  # one case broke the shared program: run each alone to find it
        results = {}
        for case, _, model, inputs in compiled:
            try:
                results.update(run_on_host([(model, inputs)], workdir / model.symbol,
                                           cache_dir=runtime_cache).outputs)
            except Exception as exc:
                outcomes[case.key] = Outcome("internal error", f"host run: {exc}")
    for case, graph, model, _ in compiled:
        if model.symbol in results:
            outcomes[case.key] = _compare(case, graph, results[model.symbol])
    return {case.key: outcomes[case.key] for case in cases}
