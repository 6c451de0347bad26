"""``dnn64build run`` and ``dnn64build test``: build a target, run it on the host or in the
emulator with given inputs, print (and save) its outputs, compare with references."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from dnn64build import rules_api as offers
from dnn64build.array_files import fitting, numeric, read_npz
from dnn64build.build_outputs import load_json
from dnn64build.commands.build import build
from dnn64build.commands.compare import compare_outputs
from dnn64build.commands.platforms import ARES, CEN64, HOST
from dnn64build.errors import UserError
from dnn64build.planner.cartridge import GAME_PAK_BYTES_PER_S, cartridge_seconds
from dnn64build.run_protocol import (
    Traffic,
    encode_input,
    parse_run_outputs,
    parse_tickrate,
    parse_ticks,
    parse_traffic,
)
from dnn64build.workspace.root import OUTPUT_BASE


@dataclass
class ModelRun:
    label: str
    meta: dict[str, Any]
    ir: tuple[Path, Path]  # the quantised IR the program was generated from
    inputs: list[dict[str, np.ndarray]]  # one per sample
    outputs: list[dict[str, np.ndarray]]  # one per sample
    ticks: list[int]
    traffic: list[Traffic]  # each run's cartridge reads, as the program counted them

    def reference(self) -> list[dict[str, np.ndarray]]:
        """The outputs of the numpy reference executor on the same IR and inputs."""
        from dnn64build.ir import load_graph
        from dnn64build.quant import run_int8

        graph = load_graph(*self.ir)
        return [run_int8(graph, sample) for sample in self.inputs]

    @cached_property
    def integer_outputs(self) -> set[str]:
        """The outputs computed by int8 nodes only: these must match bit for bit; outputs
        with an fp32 node upstream (a mixed model's fallback) within a tolerance."""
        from dnn64build.ir import load_graph
        from dnn64build.quant.execute import integer_outputs

        return integer_outputs(load_graph(*self.ir))


def run_command(
    target: str, *, platform: str, input_path: Path | None, output_path: Path | None,
    timeout: float, cartridge_bytes_per_s: float = GAME_PAK_BYTES_PER_S,
) -> int:
    if output_path and not output_path.parent.is_dir():  # say so before building and running
        raise UserError(f"--output: no such directory: {output_path.parent}",
                        hint="create it first, or name a file in an existing directory")
    label, runs, tickrate = run_target(target, platform=platform, input_path=input_path,
                                       timeout=timeout)
    for run in runs:
        _print_run(run, tickrate, platform)
        print(f"  {_cartridge(run, tickrate, platform, cartridge_bytes_per_s)}")
        print(f"  vs the reference executor: {_compare_reference(run)}")
    if platform != HOST:
        _, host_runs, _ = run_target(label, platform=HOST, input_path=input_path,
                                     timeout=timeout, quiet=True)
        for run, host in zip(runs, host_runs, strict=True):
            verdict = compare_outputs(run.outputs, host.outputs, 1e-5, run.integer_outputs)
            print(f"{run.label}: ROM vs the host build: {verdict}")
    if output_path:
        _save(output_path, runs)
        print(f"wrote {output_path}")
    return 0


def test_command(patterns: list[str], *, platform: str, timeout: float) -> int:
    """Run every matching target that offers test data; compare with its expected outputs."""
    from dnn64build.graph.runner import current_index
    from dnn64build.workspace.query import select

    root, index = current_index(Path.cwd())
    targets, out_dir = index["targets"], root / OUTPUT_BASE
    chosen = [t for t in select(patterns, targets)
              if {offers.OFFER_TEST, offers.OFFER_RUN} <= targets[t]["info"].keys()]
    if not chosen:
        raise UserError("no matching target declares test inputs (a 'test:' attribute)")
    failures = 0
    for label in chosen:
        test = targets[label]["info"][offers.OFFER_TEST]
        files = {key: Path(os.path.normpath(out_dir / path)) for key, path in
                 test["files"].items()}
        labels = _test_labels(label, test["labels"], files["inputs"], root)
        expected = read_npz(files["outputs"]) if "outputs" in files else None
        _, runs, tickrate = run_target(label, platform=platform, input_path=files["inputs"],
                                       timeout=timeout, quiet=True)
        verdicts = []
        for run in runs:
            verdicts.append(("reference executor", _compare_reference(run)))
            if expected is not None:
                verdicts.append(("expected outputs", compare_outputs(
                    run.outputs, _split_samples(expected, run), 1e-4, run.integer_outputs)))
        ok = all(v.startswith("match") for _, v in verdicts)
        failures += not ok
        details = "; ".join(f"{what}: {verdict}" for what, verdict in verdicts)
        if platform == CEN64:
            details += "; " + "; ".join(f"{_timing(run, tickrate, platform)}, "
                                        f"{_cartridge(run, tickrate, platform)}"
                                        for run in runs)
        if labels is not None:
            details += f"; top-1 accuracy {_accuracy(runs[0], labels):.2%}"
        print(f"{'PASSED' if ok else 'FAILED'} {label} ({platform}): {details}")
    print(f"{len(chosen) - failures} passed, {failures} failed")
    return 1 if failures else 0


def run_target(
    target: str, *, platform: str, input_path: Path | None, timeout: float, quiet: bool = False,
) -> tuple[str, list[ModelRun], int]:
    """Build ``target`` for ``platform``, run it once over every input sample."""
    group = offers.RUN_HOST if platform == HOST else offers.RUN_ROM
    outcome = build([target], group=group, quiet_summary=quiet, one_for="run",
                    missing_hint="run takes a target whose rule offers a program (a model or "
                    "a ROM); one built with toolchain: host has no ROM to emulate: use "
                    "--platform host, or set toolchain: bare")
    label = outcome.labels[0]
    entry = outcome.index["targets"][label]
    out_dir = outcome.root / OUTPUT_BASE
    files = [out_dir / f for f in entry["outputs"][group]]
    metas = [load_json(out_dir / f) for f in entry["outputs"][offers.RUN_MODELS]]
    labels = entry["info"][offers.OFFER_RUN]["models"]
    arrays = load_inputs(input_path, metas, labels)
    big_endian = platform != HOST
    new_assets = {
        spec["asset"]: b"".join(encode_input(sample, spec, big_endian) for sample in samples)
        for meta in metas for spec, samples in zip(meta["inputs"], arrays[meta["symbol"]],
                                                   strict=True)
    }
    lines = _execute(files, new_assets, platform, timeout)
    irs = [out_dir / f for f in entry["outputs"][offers.RUN_REFERENCE]]
    runs = [
        ModelRun(
            model_label, meta, (irs[2 * k], irs[2 * k + 1]),
            [{spec["name"]: samples[i] for spec, samples in
              zip(meta["inputs"], arrays[meta["symbol"]], strict=True)}
             for i in range(len(arrays[meta["symbol"]][0]))],
            parse_run_outputs(lines, meta), parse_ticks(lines, meta["symbol"]),
            parse_traffic(lines, meta["symbol"]),
        )
        for k, (model_label, meta) in enumerate(zip(labels, metas, strict=True))
    ]
    return label, runs, parse_tickrate(lines)


def _execute(files: list[Path], assets: dict[str, bytes], platform: str,
             timeout: float) -> list[str]:
    from dnn64build.emulator.ares import run_rom_ares
    from dnn64build.emulator.cen64 import run_rom_cen64
    from dnn64build.emulator.host import run_host
    from dnn64build.emulator.mupen64plus import run_rom
    from dnn64build.rom.repack import repack_image, repack_rom

    with tempfile.TemporaryDirectory(prefix="dnn64run") as tmp:
        if platform == HOST:
            program = next(f for f in files if f.suffix != ".img")
            image = Path(tmp) / "inputs.img"
            image.write_bytes(repack_image(next(f for f in files if f.suffix == ".img")
                                           .read_bytes(), assets))
            return list(run_host(program, image, timeout=timeout).lines)
        rom = Path(tmp) / "run.z64"
        rom.write_bytes(repack_rom(next(f for f in files if f.suffix == ".z64").read_bytes(),
                                   assets))
        run_in = {CEN64: run_rom_cen64, ARES: run_rom_ares}.get(platform, run_rom)
        return list(run_in(rom, timeout=timeout).lines)


def load_inputs(path: Path | None, metas: list[dict[str, Any]], labels: list[str]
                 ) -> dict[str, list[np.ndarray]]:
    """Per model symbol, per input: an array of samples ([samples, *shape]).

    The .npz is keyed by the ONNX input names, or "<model label>/<input name>" to tell apart
    the models of a bundle; an array of exactly the input's shape is one sample, one with an
    extra leading axis (or samples in place of a batch of 1) holds several. Without a file,
    zeros."""
    given: dict[str, np.ndarray] = {}
    if path is not None:
        if path.suffix == ".npy":
            raise UserError(f"{path}: --input takes an .npz keyed by the model's input names",
                            hint="numpy.savez(path, input_name=array, ...)")
        given = read_npz(path)
    result: dict[str, list[np.ndarray]] = {}
    counts = set()
    for meta, label in zip(metas, labels, strict=True):
        per_input = []
        for spec in meta["inputs"]:
            shape = tuple(spec["shape"])
            key = next((k for k in (f"{label}/{spec['name']}", spec["name"]) if k in given), None)
            if path is None:
                array = np.zeros((1, *shape), dtype=spec["dtype"])
            elif key is None:
                raise UserError(f"{path}: no array named {spec['name']!r}",
                                hint=f"the model's inputs: {[s['name'] for s in meta['inputs']]}")
            else:
                array = _as_input(numeric(given[key], key, where=str(path)), spec, str(path))
                if array.shape == shape:
                    array = array[None]
                elif shape[0] == 1 and array.shape[1:] == shape[1:]:  # samples as the batch
                    array = array[:, None]
                elif array.shape[1:] != shape:
                    raise UserError(
                        f"{path}: {spec['name']!r} has shape {list(array.shape)}; the model "
                        f"takes {list(shape)} (or [samples, {', '.join(map(str, shape))}])"
                    )
            counts.add(len(array))
            per_input.append(array)
        result[meta["symbol"]] = per_input
    if len(counts) > 1:
        raise UserError(f"{path}: inputs have different sample counts {sorted(counts)}")
    return result


def _test_labels(label: str, name: str | None, inputs: Path, root: Path) -> np.ndarray | None:
    """The class labels array ``test.labels`` names in the test inputs file, if any."""
    if name is None:
        return None
    arrays = read_npz(inputs)
    if name not in arrays:
        raise UserError(
            f"attribute test.labels names array {name!r}, which "
            f"{os.path.relpath(inputs, root)} does not hold; it holds: {', '.join(arrays)}",
            where=label)
    return numeric(arrays[name], name, where=str(inputs))


def _as_input(value: np.ndarray, spec: dict[str, Any], where: str) -> np.ndarray:
    """``value`` as the input's element type; float data for an int8 input (``io: int8``)
    is quantised with the input's scale and zero point, integer data taken as it is (when it
    fits)."""
    if "scale" in spec and np.issubdtype(value.dtype, np.floating):
        from dnn64build.quant.qparams import QParams, quantize_values

        return quantize_values(value, QParams(spec["scale"], spec["zero_point"]))
    return fitting(value, spec["dtype"], spec["name"], where=where)


def _split_samples(arrays: dict[str, np.ndarray], run: ModelRun) -> list[dict[str, np.ndarray]]:
    shapes = {o["name"]: tuple(o["shape"]) for o in run.meta["outputs"]}
    n = len(run.outputs)
    return [
        {k: (v if v.shape == shapes[k] and n == 1 else v[i]) for k, v in arrays.items()
         if k in shapes}
        for i in range(n)
    ]


def _compare_reference(run: ModelRun) -> str:
    """Outputs of int8 nodes must match the integer reference bit for bit; outputs with
    fp32 computation upstream within 1e-4 of the output scale (the C and numpy float
    kernels sum in different orders)."""
    return compare_outputs(run.outputs, run.reference(), 1e-4, run.integer_outputs)


def _accuracy(run: ModelRun, labels: np.ndarray) -> float:
    name = run.meta["outputs"][0]["name"]  # a classifier's logits
    predicted = np.array([o[name].reshape(-1).argmax() for o in run.outputs])
    return float((predicted == np.asarray(labels).reshape(-1)[: len(predicted)]).mean())


def _timing(run: ModelRun, tickrate: int, platform: str) -> str:
    """The mean time of one inference, in the unit the platform can tell."""
    per_sample = float(np.mean(run.ticks)) if run.ticks else 0.0
    ms = per_sample / tickrate * 1e3
    if platform == CEN64:
        from dnn64build.emulator.cen64 import CPU_HZ, cycles

        return (f"{cycles(per_sample):.0f} CPU cycles (CP0 Count x 2) per inference "
                f"({ms:.3f} ms at {CPU_HZ / 1e6:g} MHz)")
    if platform == HOST:
        return f"{per_sample:.0f} ns per inference ({ms:.3f} ms on this machine)"
    if platform == ARES:
        return (f"{per_sample:.0f} ticks (CP0 Count) per inference ({ms:.3f} ms in ares's "
                "timing model, not checked against cen64 or a console)")
    # mupen64plus advances Count by 2 per instruction: no time can be read from it
    return (f"{per_sample:.0f} ticks (CP0 Count) per inference = {per_sample / 2:.0f} "
            "instructions in mupen64plus, not cycles (--platform cen64 counts cycles)")


def _cartridge(run: ModelRun, tickrate: int, platform: str,
               bytes_per_s: float = GAME_PAK_BYTES_PER_S) -> str:
    """The cartridge bytes of one inference (the last run), in cen64 also the compute
    cycles and the cartridge-aware time at ``bytes_per_s`` (planner/cartridge.py), and the
    schedule steps that read the most."""
    if not run.traffic:
        return "cartridge: the program printed no counts"
    last = run.traffic[-1]
    text = (f"cartridge: {last.bytes} bytes per inference ({last.sync_bytes} waited for, "
            f"{last.async_bytes} prefetched in {last.prefetches} tiles)")
    if platform == CEN64:
        from dnn64build.emulator.cen64 import cycles

        ms = cartridge_seconds(last, tickrate, bytes_per_s) * 1e3
        text += (f"; {cycles(last.compute_ticks):.0f} compute cycles (reads excluded); "
                 f"cartridge-aware {ms:.3f} ms at {bytes_per_s / 1e6:g} MB/s")
        if last.spans_past:
            text += f" ({last.spans_past} tiles past the ROM's log charged whole)"
    heaviest = [(index, sync + ahead) for index, sync, ahead, _ in
                sorted(last.steps, key=lambda step: -(step[1] + step[2]))[:3] if sync + ahead]
    if heaviest:
        text += "; most at schedule steps " + ", ".join(f"[{i}] {n}" for i, n in heaviest)
        if last.steps_past:
            text += f" ({last.steps_past} steps past the ROM's log counted in its last)"
    return text


def _print_run(run: ModelRun, tickrate: int, platform: str) -> None:
    timing = _timing(run, tickrate, platform)
    print(f"{run.label}: {len(run.outputs)} sample(s), {timing}")
    last = run.outputs[-1]
    for name, value in last.items():
        flat = value.reshape(-1)
        preview = " ".join(f"{v:.6g}" for v in flat[:8]) + (" ..." if flat.size > 8 else "")
        spec = next(o for o in run.meta["outputs"] if o["name"] == name)
        quant = (f" (scale {spec['scale']:.6g}, zero point {spec['zero_point']})"
                 if "scale" in spec else "")
        print(f"  {name} {list(value.shape)} {value.dtype}{quant}: {preview}")


def _save(path: Path, runs: list[ModelRun]) -> None:
    """One array per output; an int8 output (``io: int8``) also gets "<key>.scale" and
    "<key>.zero_point" (real = (q - zero_point) * scale)."""
    arrays = {}
    for run in runs:
        specs = {spec["name"]: spec for spec in run.meta["outputs"]}
        for name in run.outputs[0]:
            key = name if len(runs) == 1 else f"{run.label}/{name}"
            stacked = np.stack([o[name] for o in run.outputs])
            arrays[key] = stacked[0] if len(run.outputs) == 1 else stacked
            if "scale" in specs[name]:
                arrays[f"{key}.scale"] = np.float32(specs[name]["scale"])
                arrays[f"{key}.zero_point"] = np.int8(specs[name]["zero_point"])
    np.savez(path, **arrays)
