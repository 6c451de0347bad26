"""Weight staging: how big the two staging halves are, and how layers are tiled.

Every kernel call reads its weights from one *tile*: a contiguous run of the
weight blob holding its parts (weights, bias, requant parameters), each part
padded to 16 bytes. Tiles are read into the two halves of the staging area in
turn (tile t into half t % 2), so the next tile can be fetched while the
current one is used. A layer whose weights do not fit one half is split into
output-channel tiles of at most one half each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dnn64build.codegen.arena import align_up
from dnn64build.codegen.lowering import Call, Reread, Step, Tiled, part_bytes
from dnn64build.errors import UserError

# Default cap on the whole staging area (both halves) when no size is given; a
# layer's single output channel may still need more, and then gets it.
DEFAULT_STAGING_CAP = 64 * 1024


@dataclass(frozen=True)
class Tile:
    """One rom read: ``parts`` laid out back to back, each padded to 16 bytes."""

    parts: tuple[np.ndarray, ...]
    label: str

    @property
    def nbytes(self) -> int:
        return part_bytes(self.parts)

    def part_offsets(self) -> list[int]:
        offsets, at = [], 0
        for part in self.parts:
            offsets.append(at)
            at += align_up(part.nbytes)
        return offsets

    def encode(self, big_endian: bool) -> bytes:
        out = bytearray(self.nbytes)
        order = ">" if big_endian else "<"
        for offset, part in zip(self.part_offsets(), self.parts, strict=True):
            data = np.ascontiguousarray(part).astype(part.dtype.newbyteorder(order)).tobytes()
            out[offset:offset + len(data)] = data
        return bytes(out)


def _need(step: Step) -> int:
    """The bytes of a step's largest tile that must fit one half as it is."""
    if isinstance(step, Tiled):
        return step.tile_bytes(1)
    if isinstance(step, Reread):
        return max((part_bytes(t) for t in step.tiles), default=0)
    return part_bytes(step.parts)


def smallest_half(steps: Sequence[Step]) -> int:
    """The smallest half every step's largest tile fits (a layer tiled one channel a
    tile): the least weight staging the steps can run with."""
    return align_up(max((_need(step) for step in steps), default=0))


def half_bytes(steps: Sequence[Step], staging_bytes: int | None, where: str) -> int:
    """Bytes of one staging half: from ``staging_bytes`` if given, else the default."""
    if staging_bytes is None:
        need = 0
        for step in steps:
            if isinstance(step, Reread):
                need = max(need, _need(step))
            elif isinstance(step, Tiled):
                full, one = step.tile_bytes(step.rows), step.tile_bytes(1)
                need = max(need, min(full, max(DEFAULT_STAGING_CAP // 2, one)))
            else:
                need = max(need, part_bytes(step.parts))
        return align_up(need)
    if staging_bytes < 0:
        raise UserError(f"staging_bytes must not be negative, got {staging_bytes}", where=where)
    half = staging_bytes // 2 // 16 * 16
    for step in steps:
        need = _need(step)
        if need > half:
            raise UserError(
                f"a staging area of {staging_bytes} bytes is too small: a weight tile needs "
                f"{need} bytes in each of its two halves", where=where,
                hint=f"use a staging size of at least {2 * align_up(need)} bytes")
    return half


def grown_half(steps: Sequence[Tiled], half: int, limit: int) -> int:
    """The half ``staging_bytes: auto`` grows to: the smallest one of at most ``limit``
    bytes that cuts ``steps`` into as few tiles as ``limit`` allows; ``half`` (the
    minimum, holding every tile of the model) when no larger half up to ``limit`` saves a
    tile. Sized to the tiles it gives, not to ``limit``: memory no tile uses stays free."""
    limit = max(half, limit // 16 * 16)
    grown = max((step.tile_bytes(tile_counts(step, limit)[0][1]) for step in steps
                 if step.rows), default=0)
    grown = max(half, align_up(grown))
    saved = sum(len(tile_counts(s, half)) - len(tile_counts(s, grown)) for s in steps)
    return grown if saved > 0 else half


def tile_counts(step: Tiled, half: int) -> list[tuple[int, int]]:
    """(first channel, count) of each tile: as few tiles as fit, balanced in size."""
    rows = step.rows
    if rows == 0:
        return []
    low, high = 1, rows  # largest count whose tile fits
    while low < high:
        mid = (low + high + 1) // 2
        if step.tile_bytes(mid) <= half:
            low = mid
        else:
            high = mid - 1
    tiles = -(-rows // low)
    count = -(-rows // tiles)
    return [(begin, min(count, rows - begin)) for begin in range(0, rows, count)]


def expand(step: Step, half: int) -> list[Call | Reread]:
    """The kernel calls of one step, a tiled layer split to fit ``half``."""
    if isinstance(step, Call | Reread):
        return [step]
    calls = []
    for k, (begin, count) in enumerate(tile_counts(step, half)):
        parts = tuple(np.ascontiguousarray(a[begin:begin + count]) for a in step.arrays)
        calls.append(Call(lambda p, b=begin, n=count: step.render(b, n, p), parts,
                          f"channels {begin}..{begin + count - 1}", (step, k)))
    return calls
