"""The loop that runs tiles 1.. of a tiled layer (a ``Tiled`` step cut into several
output-channel tiles, codegen/staging.py), so a layer's code does not grow with its
tile count.

Tile 0 is emitted as a plain call (model.py); the loop then runs tile k = 1 .. K-1
exactly as the plain calls did: it starts reading the next streamed tile (the layer's own
or, after its last, the model's next one) into the other staging half, calls the kernel
on channels [k * C, k * C + n) from stage[(k0 + k) % 2], and waits for the read. Every
tile but the last holds C channels and the same bytes, so tile k's blob offset is the
second tile's plus (k - 1) times those bytes; a part's offset in the staged tile is the
padded bytes of the parts before it, for the tile's channel count n. A layer whose tiles
are all resident (planner/resident.py) runs the same loop on the resident buffer, at the
same blob offsets, with no reads.
"""

from __future__ import annotations

from collections.abc import Sequence

from dnn64build.codegen.arena import ARENA_ALIGN
from dnn64build.codegen.cfmt import c_call
from dnn64build.codegen.emit import CWriter
from dnn64build.codegen.lowering import CTYPES, Call
from dnn64build.codegen.staging import Tile

MIN_TILES = 3  # a loop pays from three tiles on (tile 0 stays a plain call)


def tile_loop(w: CWriter, calls: Sequence[Call], tiles: Sequence[Tile], offsets: Sequence[int],
              t0: int, k0: int | None, after: int | None) -> bool:
    """Write ``calls[1:]`` (tiles 1.. of one layer, whose tile 0 is tile ``t0`` of the
    model's ``tiles`` at blob ``offsets``) as one loop; False, writing nothing, when the
    tiles are not uniform (then they stay plain calls). ``k0``: tile t0's place among the
    streamed tiles (its staging half is k0 % 2), None when the layer's tiles are resident;
    ``after``: the streamed tile to start reading after the layer's last, if any."""
    step, _ = calls[0].tile_of
    count = calls[0].parts[0].shape[0]
    size = tiles[t0 + 1].nbytes
    if any(tiles[t0 + k].nbytes != size or offsets[t0 + k] != offsets[t0 + 1] + (k - 1) * size
           for k in range(1, len(calls) - 1)) or offsets[t0 + len(calls) - 1] != offsets[
               t0 + 1] + (len(calls) - 2) * size:
        return False
    k_end, last = len(calls), tiles[t0 + len(calls) - 1]
    half = (f"(resident + {offsets[t0 + 1]}u + (uint32_t)(k - 1) * {size}u)" if k0 is None
            else f"stage[(k + {k0 % 2}) & 1]")
    pointers, at = [], "0u"
    for array in step.arrays:
        pointers.append(f"(const {CTYPES[str(array.dtype)]} *)({half} + {at})")
        row = array.nbytes // max(array.shape[0], 1)
        padded = f"(((uint32_t)n * {row}u + {ARENA_ALIGN - 1}u) & ~{ARENA_ALIGN - 1}u)"
        at = padded if at == "0u" else f"{at} + {padded}"
    w.comment(f"tiles {t0 + 1}..{t0 + k_end - 1}: {count} channels a tile, one loop")
    with w.block("{"):
        w.code("int32_t k;")
        with w.block(f"for (k = 1; k < {k_end}; ++k) {{"):
            w.code(f"const int32_t n = k + 1 < {k_end} ? {count} : {last.parts[0].shape[0]};")
            wait = "dnn64_asset_read_wait();"
            if k0 is not None:
                next_half = f"stage[(k + {k0 % 2 + 1}) & 1]"
                w.code(f"if (k + 1 < {k_end})")
                with w.indented():
                    w.code(c_call("dnn64_asset_read_start", next_half,
                                  f"weights.offset + {offsets[t0 + 1]}u + (uint32_t)k * {size}u",
                                  f"k + 2 < {k_end} ? {size}u : {last.nbytes}u"))
                if after is not None:
                    w.code("else")
                    with w.indented():
                        w.code(c_call("dnn64_asset_read_start", next_half,
                                      f"weights.offset + {offsets[after]}u",
                                      f"{tiles[after].nbytes}u"))
            w.code(step.render(f"k * {count}", "n", pointers))
            if k0 is not None and after is not None:
                w.code(wait)
            elif k0 is not None:
                w.code(f"if (k + 1 < {k_end})")
                with w.indented():
                    w.code(wait)
    return True
