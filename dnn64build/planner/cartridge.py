"""The cartridge in the bill: what an inference's reads from the Game Pak cost at a stated
bandwidth, measured (a ROM's counters, kernels/platform/dnn64_cart.c) or estimated (the
planner's ranking of fitting plans). docs/platforms.md, "Cartridge-aware time".

The model: a read the CPU waits for (dnn64_asset_read: the first tile of a model, every
tile a dag group re-reads per firing, a streamed input's rows) costs its bytes at the
bandwidth, whole. A prefetch (dnn64_asset_read_start ... _wait: the next weight tile,
streaming into the other staging half while the CPU computes) costs the larger of the
compute it overlaps and its own transfer. Everything else is compute, as measured. The
emulator's own transfer time (cen64 charges a PI DMA bytes / 2 + 100 CPU clocks) is
measured inside the read calls and replaced by the model's.
"""

from __future__ import annotations

from dnn64build.run_protocol import Traffic

# A Game Pak's average PI rate (Nintendo's N64 introductory manual, section 2-6 "PI":
# "average 5 MByte/sec"; peak about 50).
GAME_PAK_BYTES_PER_S = 5e6


def transfer_seconds(nbytes: int, bytes_per_s: float = GAME_PAK_BYTES_PER_S) -> float:
    """Seconds to read ``nbytes`` from the cartridge at ``bytes_per_s``."""
    return nbytes / bytes_per_s


def cartridge_seconds(traffic: Traffic, tickrate: float,
                      bytes_per_s: float = GAME_PAK_BYTES_PER_S) -> float:
    """The inference's time with every read charged at ``bytes_per_s``: compute not beside
    a prefetch, plus each prefetch's max(compute beside it, its transfer), plus every
    waited-for read whole (see the module doc)."""
    beside = sum(ticks for _, ticks in traffic.spans)
    overlapped = sum(max(ticks / tickrate, transfer_seconds(nbytes, bytes_per_s))
                     for nbytes, ticks in traffic.spans)
    # Prefetched bytes no span recorded (past the ROM's log) are charged whole.
    unlogged = traffic.async_bytes - sum(nbytes for nbytes, _ in traffic.spans)
    return ((traffic.compute_ticks - beside) / tickrate + overlapped
            + transfer_seconds(traffic.sync_bytes + max(unlogged, 0), bytes_per_s))


# The planner's compute estimate: CPU cycles per multiply-accumulate, rounded from cen64
# measurements of the int8 zoo at 224x224 (issue 24: kernels: cpu 7.2 to 7.7; the RSP
# kernels bring whole models to 0.7 to 1.0, CPU work included). Only their ratio to the
# cartridge term matters: they rank plans, they predict no time.
CPU_CYCLES_PER_MAC = 7.5
RSP_CYCLES_PER_MAC = 0.5
CPU_HZ = 93.75e6


def compute_seconds(macs: int, rsp_macs: int) -> float:
    """The planner's estimate of an inference's compute: ``macs`` multiply-accumulates in
    all (extra ones of fused groups included), ``rsp_macs`` of them on the RSP."""
    return (RSP_CYCLES_PER_MAC * rsp_macs + CPU_CYCLES_PER_MAC * (macs - rsp_macs)) / CPU_HZ


def estimated_seconds(compute_s: float, cartridge_bytes: int,
                      bytes_per_s: float = GAME_PAK_BYTES_PER_S) -> float:
    """The planner's cost of a plan: its compute estimate plus every byte it reads from
    the cartridge per inference at ``bytes_per_s``, none of it hidden (an upper bound on
    cartridge_seconds for the same compute)."""
    return compute_s + transfer_seconds(cartridge_bytes, bytes_per_s)
