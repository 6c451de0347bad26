"""The tile program of a fused group: which region of which tensor every member
computes, tile by tile, and the buffers that hold the intermediates.

A group is a chain of spatial ops (Conv, MaxPool, AveragePool) in which each
intermediate tensor feeds only the next op. Its input X and output Y are whole
tensors in the arena; the intermediates never are:

- ``stream`` (no extra multiply-accumulates): Y is computed a band of rows at
  a time, top to bottom. Each intermediate lives in a *row buffer* holding only
  the rows the next op's windows still need; before a band, the rows no longer
  needed are dropped and the kept ones moved to the front
  (``dnn64_region_keep``), then the rows the band newly needs are computed
  below them. Every row of every intermediate is computed exactly once.
- ``patch`` (MCUNetV2): Y is computed tile by tile over a ``grid`` (rows x
  columns); each tile computes, for every intermediate, the region its windows
  need (the halo is recomputed by neighbouring tiles: extra MACs). Two
  ping-pong buffers hold the intermediates (member j writes buffer j % 2).

Regions use half-open row/column ranges of the tensor they belong to; a
region as the kernels see it (``dnn64_region`` in kernels/dnn64_kernels.h) adds
where it is stored: element offset, row stride and plane stride.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Span = tuple[int, int]  # half-open [lo, hi)


@dataclass(frozen=True)
class Axis:
    """One spatial axis of a windowed op: output o reads input o*stride - pad + k*dil."""

    kernel: int
    stride: int
    pad: int
    dil: int
    size_in: int
    size_out: int

    def needed(self, out: Span) -> Span:
        """The input range every in-bounds tap of outputs ``out`` lies in (clamped)."""
        lo, hi = out
        if hi <= lo:
            return (0, 0)
        first = lo * self.stride - self.pad
        last = (hi - 1) * self.stride - self.pad + (self.kernel - 1) * self.dil
        return (max(first, 0), min(last + 1, self.size_in))


@dataclass(frozen=True)
class Member:
    """One op of a group: its row and column axes, channels, element size, MACs per output."""

    rows: Axis
    cols: Axis
    channels_out: int
    elem_bytes: int
    macs_per_output: int  # per output element (0 for pooling)


@dataclass(frozen=True)
class Region:
    """A ``dnn64_region``: tensor rows/cols held and how they are stored (elements)."""

    row0: int
    rows: int
    col0: int
    cols: int
    offset: int
    row_stride: int
    plane_stride: int

    def fields(self) -> list[int]:
        return [self.row0, self.rows, self.col0, self.cols, self.offset, self.row_stride,
                self.plane_stride]


def compact(rows: Span, cols: Span) -> Region:
    """A region stored alone, rows and planes back to back."""
    r, c = rows[1] - rows[0], cols[1] - cols[0]
    return Region(rows[0], r, cols[0], c, 0, c, r * c)


def whole(height: int, width: int, rows: Span = (0, -1), cols: Span = (0, -1)) -> Region:
    """Rows/cols of a whole [C, height, width] tensor in the arena (default: all of it)."""
    rows = (rows[0], height if rows[1] < 0 else rows[1])
    cols = (cols[0], width if cols[1] < 0 else cols[1])
    return Region(rows[0], rows[1] - rows[0], cols[0], cols[1] - cols[0],
                  rows[0] * width + cols[0], width, height * width)


@dataclass(frozen=True)
class Keep:
    """``dnn64_region_keep`` arguments of one row buffer before a band."""

    old_rows: int
    keep_from: int
    keep_rows: int
    new_rows: int


@dataclass(frozen=True)
class Step:
    """Member ``member`` computes region ``y`` of its output from region ``x`` of its
    input; ``keep`` first reshapes its output row buffer (stream mode)."""

    member: int
    x: Region
    y: Region
    keep: Keep | None = None


@dataclass(frozen=True)
class Program:
    """Every step of a group, the bytes of each buffer, and the MACs it performs."""

    steps: tuple[tuple[Step, ...], ...]  # per tile (or band)
    buffer_bytes: tuple[int, ...]
    buffer_of: tuple[int, ...]  # the buffer intermediate j (output of member j) lives in
    macs: int


def unfused_macs(members: list[Member]) -> int:
    return sum(m.macs_per_output * m.channels_out * m.rows.size_out * m.cols.size_out
               for m in members)


def _macs(member: Member, y: Region) -> int:
    return member.macs_per_output * member.channels_out * y.rows * y.cols


def split(size: int, parts: int) -> list[Span]:
    """``size`` cut into ``parts`` near-equal spans (empty ones dropped)."""
    cuts = [size * i // parts for i in range(parts + 1)]
    return [(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if b > a]


def stream_program(members: list[Member], band_rows: int = 1) -> Program:
    """Row-streamed: bands of ``band_rows`` output rows; one row buffer per intermediate."""
    last = members[-1]
    count = len(members)
    held: list[Span] = [(0, 0)] * (count - 1)
    biggest = [0] * (count - 1)
    tiles, macs = [], 0
    for band in split(last.rows.size_out, math.ceil(last.rows.size_out / band_rows)):
        want: list[Span] = [(0, 0)] * count
        want[-1] = band
        for j in range(count - 1, 0, -1):
            want[j - 1] = members[j].rows.needed(want[j])
        steps = []
        for j, member in enumerate(members):
            width = member.cols.size_out
            if j == 0:
                x = whole(member.rows.size_in, member.cols.size_in)
            else:
                x = compact(held[j - 1], (0, members[j].cols.size_in))
            if j == count - 1:
                y, keep = whole(member.rows.size_out, width, band), None
            else:
                (old_lo, old_hi), (lo, hi) = held[j], want[j]
                kept_lo = min(max(old_lo, lo), old_hi)
                keep = Keep(old_hi - old_lo, kept_lo - old_lo, old_hi - kept_lo, hi - lo)
                new_lo = max(old_hi, lo)
                y = Region(new_lo, hi - new_lo, 0, width, (new_lo - lo) * width, width,
                           (hi - lo) * width)
                held[j] = (lo, hi)
                biggest[j] = max(biggest[j], (hi - lo) * width)
            macs += _macs(member, y)
            steps.append(Step(j, x, y, keep))
        tiles.append(tuple(steps))
    sizes = tuple(b * m.channels_out * m.elem_bytes for b, m in zip(biggest, members,
                                                                     strict=False))
    return Program(tuple(tiles), sizes, tuple(range(count - 1)), macs)


def patch_program(members: list[Member], grid: tuple[int, int]) -> Program:
    """Patch by patch over a ``grid`` of Y; intermediates in two ping-pong buffers."""
    last = members[-1]
    count = len(members)
    biggest = [0, 0]
    tiles, macs = [], 0
    for band in split(last.rows.size_out, grid[0]):
        for strip in split(last.cols.size_out, grid[1]):
            want: list[tuple[Span, Span]] = [((0, 0), (0, 0))] * count
            want[-1] = (band, strip)
            for j in range(count - 1, 0, -1):
                rows, cols = want[j]
                want[j - 1] = (members[j].rows.needed(rows), members[j].cols.needed(cols))
            steps = []
            for j, member in enumerate(members):
                if j == 0:
                    x = whole(member.rows.size_in, member.cols.size_in)
                else:
                    x = compact(*want[j - 1])
                if j == count - 1:
                    y = whole(member.rows.size_out, member.cols.size_out, band, strip)
                else:
                    y = compact(*want[j])
                    biggest[j % 2] = max(biggest[j % 2],
                                         y.plane_stride * member.channels_out * member.elem_bytes)
                macs += _macs(member, y)
                steps.append(Step(j, x, y))
            tiles.append(tuple(steps))
    used = 2 if count > 2 else 1
    return Program(tuple(tiles), tuple(biggest[:used]), tuple(j % 2 for j in range(count - 1)),
                   macs)
