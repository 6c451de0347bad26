"""generate_main: the program that runs every model of a ROM and prints its outputs.

main() initialises the platform, then for each model in order and each input sample:
loads its inputs (sample s of assets "<symbol>.in.<k>") into the one shared static arena
at the planned input offsets, runs it timed with dnn64_ticks, and prints its outputs and
ticks in the line protocol of dnn64build.run_protocol. The arena is sized for the
largest model and 16-byte aligned. A streamed input (planner: {input: stream}) is not
loaded: the model's read_rows callback reads just the rows it asks for from the asset
(on the N64 a PI DMA from the cartridge per channel), while it runs. A streamed output
(planner: {output: stream}) is never whole in memory: the model's write_rows callback
prints each band of rows as it is finished (OUTN lines, so the run's ticks include that
printing), and the parser (dnn64build/run_protocol.py) puts the pieces together.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dnn64build.codegen.cfmt import c_call, c_string, is_identifier
from dnn64build.codegen.emit import CWriter
from dnn64build.codegen.lowering import CTYPES, ELEM_SIZES
from dnn64build.codegen.model import GENERATED

# (symbol, header include name, arena bytes it needs, its metadata)
ModelEntry = tuple[str, str, int, dict[str, Any]]

# output dtype -> the platform function printing it in the line protocol
_PRINTERS = {"float32": "dnn64_print_f32_hex", "int8": "dnn64_print_i8_hex"}

# Bytes written over the whole arena before each run when poisoning: the first
# is a float NaN, the second a huge finite float, so a read of memory the plan
# did not initialise shows in the outputs or makes two runs differ.
POISON_BYTES = (0xFF, 0x7F)

_LOAD_INPUT = """\
/* How many samples of `size` bytes input asset `name` holds; fails unless a whole,
 * non-zero number. */
static uint32_t sample_count(const char *name, uint32_t size)
{
    dnn64_asset asset = dnn64_asset_get(name);
    if (asset.size == 0 || asset.size % size != 0) {
        dnn64_line line;
        dnn64_line_begin(&line, "input asset size is not a multiple of the input size: ");
        dnn64_line_str(&line, name);
        dnn64_fail(line.text);
    }
    return asset.size / size;
}
"""

_LOAD_WHOLE = """\
/* Read sample `sample` of input asset `name` (`size` bytes each) to arena + offset. */
static void load_input(const char *name, uint32_t offset, uint32_t size, uint32_t sample)
{
    dnn64_asset asset = dnn64_asset_get(name);
    dnn64_asset_read(arena + offset, asset.offset + sample * size, size);
}
"""

_READ_ROWS = """\
/* Where a streamed input's rows come from: sample `sample` of an input asset. */
typedef struct {
    uint32_t offset; /* the asset's offset in the asset area */
    uint32_t size; /* bytes of one sample */
    uint32_t sample;
    uint32_t height; /* rows of each channel */
    uint32_t row_bytes;
    uint32_t channels;
} input_rows_source;

/* dnn64_input_rows_fn over input assets: `user` points at one source per graph input.
 * Each channel's rows are one contiguous read from the asset. */
static void read_input_rows(void *user, uint32_t input, uint32_t row0, uint32_t rows,
                            uint8_t *dst, uint32_t plane_bytes)
{
    const input_rows_source *src = (const input_rows_source *)user + input;
    uint32_t c;
    for (c = 0; c < src->channels; c++)
        dnn64_asset_read(dst + c * plane_bytes,
                         src->offset + src->sample * src->size
                             + (c * src->height + row0) * src->row_bytes,
                         rows * src->row_bytes);
}
"""

_WRITE_ROWS = """\
/* Where a streamed output's rows go: OUTN lines of output k of one model. */
typedef struct {
    const char *prefix; /* "OUTN <symbol> <k>" */
    uint32_t height; /* rows of each channel */
    uint32_t width;
    uint32_t channels;
    uint32_t size; /* bytes of one element: 1 (int8) or 4 (float32) */
} output_rows_sink;

/* dnn64_output_rows_fn printing each channel's rows as one piece: `user` points at one
 * sink per graph output. */
static void print_output_rows(void *user, uint32_t output, uint32_t row0, uint32_t rows,
                              const uint8_t *src, uint32_t plane_bytes)
{
    const output_rows_sink *sink = (const output_rows_sink *)user + output;
    uint32_t c;
    for (c = 0; c < sink->channels; c++)
        dnn64_print_hex_piece(sink->prefix, (c * sink->height + row0) * sink->width,
                              src + c * plane_bytes, rows * sink->width, sink->size);
}
"""

_POISON = """\
/* Fill the whole arena with `value`, so reads of unplanned memory show. */
static void poison_arena(uint8_t value)
{
    uint32_t i;
    for (i = 0; i < (uint32_t)sizeof arena; i++)
        arena[i] = value;
}
"""

_PRINT_TICKS = """\
/* Print "TICKS <symbol> <n>" for a run that took end - start ticks. */
static void print_ticks(const char *symbol, uint64_t start, uint64_t end)
{
    dnn64_line line;
    dnn64_line_begin(&line, "TICKS ");
    dnn64_line_str(&line, symbol);
    dnn64_line_u64(&line, end - start);
    dnn64_line_end(&line);
}
"""


def generate_main(models: Sequence[ModelEntry], *, runs: int = 1, poison: bool = False) -> str:
    """C source of main() for ``models`` (see ModelEntry), run in order.

    Each model runs once per sample its input assets hold (an asset of n x the input's
    bytes holds n samples), printing its outputs each time. ``runs``: how often that
    repeats. ``poison``: fill the arena before each run with POISON_BYTES[run % 2].
    """
    if not models or runs < 1:
        raise ValueError("generate_main needs at least one model and one run")
    symbols = [m[0] for m in models]
    if len(set(symbols)) != len(symbols) or not all(is_identifier(s) for s in symbols):
        raise ValueError(f"model symbols must be distinct C identifiers: {symbols}")
    arena_bytes = max(max(m[2] for m in models), 16)
    w = CWriter()
    w.comment(f"main.c - runs {', '.join(symbols)}. {GENERATED}")
    w.line('#include "dnn64_platform.h"', "")
    w.line(*(f'#include "{header}"' for _, header, _, _ in models))
    streams = any(e.get("streamed") for m in models for e in m[3]["inputs"])
    emits = any(e.get("streamed") for m in models for e in m[3]["outputs"])
    w.line("")
    w.comment("One arena for every model: the largest one's size.")
    w.line(f"static uint8_t DNN64_ALIGNED(arena[{arena_bytes}u]);", "")
    whole = any(not e.get("streamed") for m in models for e in m[3]["inputs"])
    for snippet, used in ((_LOAD_INPUT, True), (_LOAD_WHOLE, whole), (_READ_ROWS, streams),
                          (_WRITE_ROWS, emits), (_POISON, poison), (_PRINT_TICKS, True)):
        if used:
            w.code(snippet)
            w.line("")
    with w.block("int main(void)", "{"):
        w.line("uint64_t start, end;", "uint32_t s, samples;")
        if streams:
            w.line("input_rows_source sources[8];")
        if emits:
            w.line("output_rows_sink sinks[8];")
        w.line("", "dnn64_platform_init();",
               'dnn64_print_u64("TICKRATE", dnn64_ticks_per_second());')
        for symbol, _, needed, meta in models:
            if meta["symbol"] != symbol or needed > arena_bytes:
                raise ValueError(f"model {symbol}: metadata or arena size does not match")
            _run_model(w, symbol, meta, runs, poison)
        w.line("", "dnn64_done();", "return 0;")
    return w.source()


def _run_model(w: CWriter, symbol: str, meta: dict[str, Any], runs: int, poison: bool) -> None:
    """The statements of main() running model ``symbol`` ``runs`` times on every sample."""
    inputs = meta["inputs"]
    w.line("")
    w.comment(f"model {symbol} ({meta['graph']}): every input sample")
    w.line(f"samples = sample_count({c_string(inputs[0]['asset'])}, {inputs[0]['bytes']}u);"
           if inputs else "samples = 1;")
    for e in inputs[1:]:
        w.line(f"if (sample_count({c_string(e['asset'])}, {e['bytes']}u) != samples)")
        with w.indented():
            w.line(c_call("dnn64_fail", c_string(f"{symbol}: inputs hold different sample "
                                                 "counts")))
    rows = ", read_input_rows, sources" if any(e.get("streamed") for e in inputs) else ""
    if any(e.get("streamed") for e in meta["outputs"]):
        rows += ", print_output_rows, sinks"
    for run in range(runs):
        with w.block(f"for (s = 0; s < samples; s++) {{  /* run {run} */"):
            if poison:
                w.line(f"poison_arena(0x{POISON_BYTES[run % 2]:02X}u);")
            for k, entry in enumerate(inputs):
                if entry.get("streamed"):
                    _stream_source(w, k, entry)
                else:
                    w.line(c_call("load_input", c_string(entry["asset"]), f"{entry['offset']}u",
                                  f"{entry['bytes']}u", "s"))
            for k, entry in enumerate(meta["outputs"]):
                if entry.get("streamed"):
                    _output_sink(w, symbol, k, entry)
            w.line("dnn64_cart_reset();", "start = dnn64_ticks();", f"{symbol}_run(arena{rows});",
                   "end = dnn64_ticks();", "dnn64_cart_finish();")
            w.line(*(_print_output(symbol, k, entry) for k, entry in enumerate(meta["outputs"])
                     if not entry.get("streamed")))
            w.line(c_call("print_ticks", c_string(symbol), "start", "end"),
                   c_call("dnn64_cart_print", c_string(symbol)))


def _stream_source(w: CWriter, k: int, entry: dict[str, Any]) -> None:
    """Statements pointing sources[k] at sample s of the input's asset."""
    if k >= 8:
        raise ValueError(f"input {entry['name']!r}: at most 8 inputs may be streamed")
    _, channels, height, width = entry["shape"]
    row_bytes = width * ELEM_SIZES[entry["dtype"]]
    w.line(f"sources[{k}].offset = dnn64_asset_get({c_string(entry['asset'])}).offset;",
           f"sources[{k}].size = {entry['bytes']}u;", f"sources[{k}].sample = s;",
           f"sources[{k}].height = {height}u;", f"sources[{k}].row_bytes = {row_bytes}u;",
           f"sources[{k}].channels = {channels}u;")


def _output_sink(w: CWriter, symbol: str, k: int, entry: dict[str, Any]) -> None:
    """Statements pointing sinks[k] at OUTN lines of output k (rows printed as they come)."""
    if k >= 8:
        raise ValueError(f"output {entry['name']!r}: at most 8 outputs may be streamed")
    if entry["dtype"] not in _PRINTERS:
        raise ValueError(f"model {symbol}: output {entry['name']!r} has dtype "
                         f"{entry['dtype']}, which the line protocol cannot print")
    _, channels, height, width = entry["shape"]
    w.line(f"sinks[{k}].prefix = {c_string(f'OUTN {symbol} {k}')};",
           f"sinks[{k}].height = {height}u;", f"sinks[{k}].width = {width}u;",
           f"sinks[{k}].channels = {channels}u;",
           f"sinks[{k}].size = {ELEM_SIZES[entry['dtype']]}u;")


def _print_output(symbol: str, k: int, entry: dict[str, Any]) -> str:
    dtype = entry["dtype"]
    if dtype not in _PRINTERS:
        raise ValueError(f"model {symbol}: output {entry['name']!r} has dtype {dtype}, "
                         "which the line protocol cannot print")
    return c_call(_PRINTERS[dtype], c_string(f"OUT {symbol} {k}"),
                  f"(const {CTYPES[dtype]} *)(arena + {entry['offset']}u)",
                  f"{entry['bytes'] // ELEM_SIZES[dtype]}u")
