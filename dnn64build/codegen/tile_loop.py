"""The loop that runs tiles 1.. of a tiled layer (a ``Tiled`` step cut into several
output-channel tiles, codegen/staging.py), so a layer's code does not grow with its
tile count.

Tile 0 is emitted as a plain call (model.py); the loop then runs tile k = 1 .. K-1
exactly as the plain calls did: it starts reading the next tile (the layer's own or,
after its last, the model's next one) into the other staging half, calls the kernel on
channels [k * C, k * C + n) from stage[(t0 + k) % 2], and waits for the read. Every tile
but the last holds C channels and the same bytes, so tile k's blob offset is the second
tile's plus (k - 1) times those bytes; a part's offset in the staged tile is the padded
bytes of the parts before it, for the tile's channel count n.
"""

from __future__ import annotations

from collections.abc import Sequence

from dnn64build.codegen.arena import ARENA_ALIGN
from dnn64build.codegen.lowering import CTYPES, Call
from dnn64build.codegen.staging import Tile

MIN_TILES = 3  # a loop pays from three tiles on (tile 0 stays a plain call)


def tile_loop(calls: Sequence[Call], tiles: Sequence[Tile], offsets: Sequence[int], t0: int
              ) -> list[str] | None:
    """C lines running ``calls[1:]`` (tiles 1.. of one layer, whose tile 0 is tile ``t0``
    of the model's ``tiles`` at blob ``offsets``) as one loop; None when the tiles are
    not uniform (then they stay plain calls)."""
    step, _ = calls[0].tile_of
    count = calls[0].parts[0].shape[0]
    size = tiles[t0 + 1].nbytes
    if any(tiles[t0 + k].nbytes != size or offsets[t0 + k] != offsets[t0 + 1] + (k - 1) * size
           for k in range(1, len(calls) - 1)):
        return None
    k_end, last = len(calls), tiles[t0 + len(calls) - 1]
    half = f"stage[(k + {t0 % 2}) & 1]"
    pointers, at = [], "0u"
    for array in step.arrays:
        pointers.append(f"(const {CTYPES[str(array.dtype)]} *)({half} + {at})")
        row = array.nbytes // max(array.shape[0], 1)
        padded = f"(((uint32_t)n * {row}u + {ARENA_ALIGN - 1}u) & ~{ARENA_ALIGN - 1}u)"
        at = padded if at == "0u" else f"{at} + {padded}"
    next_half = f"stage[(k + {t0 % 2 + 1}) & 1]"
    own = (f"dnn64_asset_read_start({next_half}, weights.offset + {offsets[t0 + 1]}u + "
           f"(uint32_t)k * {size}u, k + 2 < {k_end} ? {size}u : {last.nbytes}u);")
    after = t0 + k_end  # the model's tile after the layer's last
    lines = [f"    /* tiles {t0 + 1}..{after - 1}: {count} channels a tile, one loop */",
             "    {", "        int32_t k;", f"        for (k = 1; k < {k_end}; ++k) {{",
             f"            const int32_t n = k + 1 < {k_end} ? {count} : "
             f"{last.parts[0].shape[0]};",
             f"            if (k + 1 < {k_end})", f"                {own}"]
    if after < len(tiles):
        lines += ["            else", f"                dnn64_asset_read_start({next_half}, "
                  f"weights.offset + {offsets[after]}u, {tiles[after].nbytes}u);"]
    body = step.render(f"k * {count}", "n", pointers)
    lines += ["            " + line for line in body.splitlines()]
    wait = "dnn64_asset_read_wait();"
    lines += [f"            {wait}" if after < len(tiles) else
              f"            if (k + 1 < {k_end})\n                {wait}", "        }", "    }"]
    return lines
