"""The output-line protocol of a dnn64 program: its lines, and their exact parser.

codegen/program.py writes the main() that prints these lines, through the platform layer
(kernels/platform/dnn64_platform.h: DNN64_DONE_LINE, DNN64_FAIL_PREFIX,
dnn64_print_i8_hex, dnn64_print_f32_hex); the emulators stop at the sentinel lines, and
the commands and tools parse the rest here.

Lines a program prints (one model after another, in the order given to
generate_main; a model run several times repeats its lines once per run):

    TICKRATE <ticks per second>               once, first
    OUT <symbol> <k> <first index> <words>    output k of the model, in pieces
    OUTN <symbol> <k> <first index> <count> <words>
                                              a piece of exactly <count> values (a
                                              streamed output's rows, printed while
                                              the model runs, before its TICKS)
    TICKS <symbol> <ticks>                    the run's duration (dnn64_ticks)
    CART <symbol> <waited bytes> <prefetched bytes> <read ticks> <reads> <spans>
         <steps> <spans past> <steps past>    the run's cartridge reads (dnn64_cart_print)
    CARTS <symbol> <first span> <bytes> <ticks> ...
                                              its prefetches, up to 6 pairs a line
    CARTN <symbol> <node> <waited bytes> <prefetched bytes> <ticks>
                                              one scheduled node's reads and ticks
    DNN64-DONE                                last (dnn64_done)
    DNN64-FAIL <why>                          last, instead, when the program fails

``<words>`` are 8-digit lowercase hex words, at most 8 per line. float32: one word
per element, its IEEE-754 bit pattern. int8: four elements per word, two hex
digits each (two's complement) in array order, the last word padded with "00".
Element indices are flat row-major. Everything is exact: no decimal rounding. Every
value of a run's output is printed exactly once: pieces that overlap or leave a gap
are an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

DONE_LINE = "DNN64-DONE"
FAIL_PREFIX = "DNN64-FAIL"


def ends_program(line: str) -> bool:
    """True for the last line a program prints: DNN64-DONE, or DNN64-FAIL and why."""
    return line == DONE_LINE or line.startswith(FAIL_PREFIX)


def decode_hex_words(words: Sequence[str], dtype: str) -> np.ndarray:
    """The values in 8-digit hex words as ``dnn64_print_i8_hex``/``dnn64_print_f32_hex``
    write them: int8, four to a word in array order; float32, one IEEE-754 bit pattern
    a word. ValueError for a bad word or another dtype."""
    data = bytes.fromhex("".join(words))
    if dtype == "int8":
        return np.frombuffer(data, dtype=np.int8)
    if dtype == "float32":
        return np.frombuffer(data, dtype=">u4").astype(np.uint32).view(np.float32)
    raise ValueError(f"unsupported dtype {dtype}")


@dataclass(frozen=True)
class Traffic:
    """One inference's cartridge reads as the ROM counted them (protocol line CART and its
    CARTS/CARTN lines), with the run's ticks (TICKS)."""

    run_ticks: int
    sync_bytes: int  # read while the CPU waited
    async_bytes: int  # prefetched beside compute
    read_ticks: int  # ticks spent inside the read calls (the machine's own transfer time)
    spans: tuple[tuple[int, int], ...]  # per prefetch: (bytes, ticks of compute beside it)
    steps: tuple[tuple[int, int, int, int], ...]  # per node: (index, sync, async, ticks)
    spans_past: int = 0  # prefetches past the ROM's log (their bytes charged whole)
    steps_past: int = 0  # nodes past it (merged into the last step)

    @property
    def bytes(self) -> int:
        return self.sync_bytes + self.async_bytes

    @property
    def prefetches(self) -> int:
        return len(self.spans) + self.spans_past

    @property
    def compute_ticks(self) -> int:
        """The run's ticks outside the read calls."""
        return self.run_ticks - self.read_ticks


class ProtocolError(ValueError):
    """The printed lines do not carry the outputs they should (a failed or broken run)."""


def _decode(words: list[str], dtype: str) -> np.ndarray:
    try:
        return decode_hex_words(words, dtype)
    except ValueError as err:
        raise ProtocolError(f"no {dtype} values in {' '.join(words)!r}: {err}") from None


def parse_run_outputs(lines: Iterable[str],
                      metadata: dict[str, Any]) -> list[dict[str, np.ndarray]]:
    """Every run's outputs of the model ``metadata`` describes, in run order."""
    symbol = metadata["symbol"]
    outputs = metadata["outputs"]
    runs: list[dict[int, dict[int, np.ndarray]]] = []
    ticks_seen = 0
    for line in lines:
        fields = line.split()
        if fields[:1] == [FAIL_PREFIX]:
            raise ProtocolError(f"the program failed: {line}")
        if len(fields) < 2 or fields[1] != symbol:
            continue
        if fields[0] == "TICKS":
            ticks_seen += 1
        elif fields[0] in ("OUT", "OUTN") and len(fields) >= 4:
            while len(runs) <= ticks_seen:
                runs.append({})
            k, start = int(fields[2]), int(fields[3])
            if fields[0] == "OUTN":
                count, words = int(fields[4]), fields[5:]
                values = _decode(words, outputs[k]["dtype"])
                spare = values.size - count  # int8: up to 3 padding values in the last word
                if not 0 <= spare < (4 if outputs[k]["dtype"] == "int8" else 1):
                    raise ProtocolError(f"{symbol} output {k}: {count} values announced, "
                                        f"{values.size} printed")
                values = values[:count]
            else:
                values = _decode(fields[4:], outputs[k]["dtype"])
            pieces = runs[ticks_seen].setdefault(k, {})
            if start in pieces:
                raise ProtocolError(f"{symbol} output {k}: values from {start} printed twice")
            pieces[start] = values
    result = []
    for pieces in runs:
        arrays = {}
        for k, entry in enumerate(outputs):
            count = int(np.prod(entry["shape"], dtype=np.int64))
            chunks = pieces.get(k, {})
            at = 0
            for start in sorted(chunks):
                if start != at:
                    raise ProtocolError(f"{symbol} output {k}: values from {min(at, start)} "
                                        "are missing or printed twice")
                at += chunks[start].size
            flat = (np.concatenate([chunks[s] for s in sorted(chunks)]) if chunks
                    else np.zeros(0, dtype=entry["dtype"]))
            if flat.size < count:
                raise ProtocolError(f"{symbol} output {k}: got {flat.size} of {count} values")
            arrays[entry["name"]] = flat[:count].reshape(entry["shape"]).copy()
        result.append(arrays)
    return result


def parse_outputs(lines: Iterable[str], metadata: dict[str, Any]) -> dict[str, np.ndarray]:
    """Output name -> array for the model ``metadata`` describes (exact).

    With several runs, returns the last one and raises ProtocolError unless every
    run printed exactly the same bits. Raises ProtocolError for a failed run or
    missing values.
    """
    runs = parse_run_outputs(list(lines), metadata)
    if not runs:
        raise ProtocolError(f"no outputs of model {metadata['symbol']} in the program output")
    last = runs[-1]
    for number, run in enumerate(runs[:-1]):
        for name, array in run.items():
            if array.tobytes() != last[name].tobytes():
                raise ProtocolError(f"{metadata['symbol']} output {name!r}: run {number} "
                                    f"differs from run {len(runs) - 1}")
    return last


def parse_ticks(lines: Iterable[str], symbol: str) -> list[int]:
    """The TICKS of every run of model ``symbol``."""
    return [int(f[2]) for f in (line.split() for line in lines)
            if len(f) == 3 and f[0] == "TICKS" and f[1] == symbol]


def parse_traffic(lines: Iterable[str], symbol: str) -> list[Traffic]:
    """The cartridge reads of every run of model ``symbol`` (its CART, CARTS and CARTN
    lines after its TICKS), in run order; ProtocolError for a broken line."""
    runs: list[dict[str, Any]] = []
    ticks = 0
    for line in lines:
        fields = line.split()
        if (len(fields) < 3 or fields[1] != symbol
                or fields[0] not in ("TICKS", "CART", "CARTS", "CARTN")):
            continue
        try:
            numbers = [int(f) for f in fields[2:]]
        except ValueError:
            raise ProtocolError(f"not a number in {line!r}") from None
        if fields[0] == "TICKS":
            ticks = numbers[0]
        elif fields[0] == "CART" and len(numbers) == 8:
            runs.append({"run_ticks": ticks, "sync_bytes": numbers[0],
                         "async_bytes": numbers[1], "read_ticks": numbers[2],
                         "spans": [], "steps": [], "spans_past": numbers[6],
                         "steps_past": numbers[7]})
        elif fields[0] == "CARTS" and runs and len(numbers) % 2 == 1:
            pairs = numbers[1:]
            runs[-1]["spans"] += list(zip(pairs[::2], pairs[1::2], strict=True))
        elif fields[0] == "CARTN" and runs and len(numbers) == 4:
            runs[-1]["steps"].append(tuple(numbers))
        elif fields[0] in ("CART", "CARTS", "CARTN"):
            raise ProtocolError(f"a broken cartridge line: {line!r}")
    return [Traffic(**{**run, "spans": tuple(run["spans"]), "steps": tuple(run["steps"])})
            for run in runs]


def parse_tickrate(lines: Iterable[str]) -> int:
    for line in lines:
        fields = line.split()
        if len(fields) == 2 and fields[0] == "TICKRATE":
            return int(fields[1])
    raise ProtocolError("no TICKRATE line in the program output")


def encode_input(array: np.ndarray, entry: dict[str, Any], big_endian: bool) -> bytes:
    """The bytes of input asset ``entry`` (a metadata input) holding ``array``."""
    data = np.asarray(array)
    if list(data.shape) != list(entry["shape"]):
        raise ValueError(f"input {entry['name']!r}: shape {list(data.shape)}, "
                         f"expected {entry['shape']}")
    order = ">" if big_endian else "<"
    return np.ascontiguousarray(data, dtype=np.dtype(entry["dtype"]).newbyteorder(order)).tobytes()
