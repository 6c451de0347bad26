"""Which weight tiles stay resident in RDRAM (planner ``weights``), and the plan.json record.

Every weight tile is read from the cartridge each time it is used, unless it is
*resident*: loaded once (at init, or by the first inference) into a static buffer of
the model's own and read from RAM ever after. The modes:

- ``stream`` (the default): none resident; RAM holds only the staging area.
- ``resident``: every tile; the fit check counts all of them.
- ``auto``: the tiles that fit the memory the plan leaves free (``free`` bytes: the
  target memory less what the model needs streamed and a reserve), most reads per
  inference first (a dag group re-reads its tiles every firing), then in blob order;
  one that does not fit is skipped for smaller ones after it. The rest stream.

Tiles are indexed as codegen's CodeShape.tiles lists them: (bytes, reads per inference).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

WEIGHT_MODES = ("stream", "resident", "auto")
# Not auto: a plan sees only its own model, and the models of an n64_rom bundle or an
# n64_library each keep their resident weights in a buffer of their own, so a bundle of
# models that fits streamed (they share one arena) could stop fitting (docs/planner.md).
DEFAULT_WEIGHT_MODE = "stream"


def choose_resident(tiles: Sequence[tuple[int, int]], mode: str, free: int) -> list[int]:
    """The indices (ascending) of the tiles ``mode`` keeps resident within ``free`` bytes
    (``free`` binds ``auto`` only: ``resident`` takes every tile, the fit check judges)."""
    if mode == "stream":
        return []
    if mode == "resident":
        return list(range(len(tiles)))
    if mode != "auto":
        raise ValueError(f"weights must be one of {WEIGHT_MODES}, not {mode!r}")
    chosen = []
    for i in sorted(range(len(tiles)), key=lambda i: (-tiles[i][1], i)):
        if tiles[i][0] <= free:
            chosen.append(i)
            free -= tiles[i][0]
    return sorted(chosen)


def weights_record(tiles: Sequence[tuple[int, int]], mode: str, chosen: Sequence[int],
                   why: str) -> dict[str, Any]:
    """plan.json's ``weights``: the mode, the resident tiles and bytes, and what an
    inference and the load at init read from the cartridge."""
    resident = set(chosen)
    return {
        "mode": mode,
        "tiles": [list(t) for t in tiles],
        "resident_tiles": sorted(resident),
        "resident_bytes": sum(tiles[i][0] for i in resident),
        "streamed_bytes_per_inference": sum(size * reads for i, (size, reads)
                                            in enumerate(tiles) if i not in resident),
        "why": why,
    }
