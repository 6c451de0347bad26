"""Exact placement: a MiniMalloc-class search (Moffitt, ASPLOS 2023).

The core is a *decision* search: place every buffer with its footprint under a
capacity, or prove that no placement does. Minimising the arena is a sequence
of such probes: at the capacity, if one is given and no plan fits it yet; at
the live-bytes lower bound, where success is a proof of optimality; then a
bisection between the proven bound and the best plan known.

Search space. Pushing buffers down until none can move to a lower free spot
never grows the arena, so some solution has every buffer at its *floor*: the
aligned top of the conflicting (time-overlapping) buffers below it. Listing
that solution by (offset, rank), each buffer's offset is the floor left by the
buffers listed before it. The search picks the next buffer and puts it at its
floor.

Time *sections* are the maximal sets of buffers live together (the maximal
cliques of the interval graph, in time order); a buffer lives in a contiguous
range of them.

Rules, each a named switch in :class:`ExactParams` (every combination is
tested against brute force):

- ``canonical_order``: place in nondecreasing (offset, rank) order, so each
  solution is listed once; rank is a fixed preorder (largest section total,
  then longest lifetime, then largest area first);
- ``section_bound``: in every section the unplaced buffers stack above the
  placed ones (and, under canonical order, above the current offset): prune
  when that exceeds the capacity;
- ``symmetric_buffers``: of identical buffers, place the lower rank first;
- ``dominance``: never place a buffer at or above the floor + footprint of an
  unplaced one (that one would fit in the gap below; needs canonical order);
- ``hatless``: once a buffer with no unplaced conflicts (nothing can land on
  it) has been tried at its floor and failed, stop trying siblings: every
  other branch would have to place it there too;
- ``decomposition``: when no unplaced buffer spans the boundary between two
  sections, the two sides are independent sub-problems, solved one after the
  other (a failure in the second no longer re-enumerates the first), each
  ranked by the preorder's keys anew with its busiest-section key (T) taken
  from the bytes still unplaced (as MiniMalloc does: the sections that
  remain crowded go first; on its set this is what finds E and H);
- ``unplaced_floor``: the unplaced buffers of a section all go at or above the
  lowest of their floors: prune when they cannot fit above it;
- ``stacked_twins``: two buffers with the same conflicts (each other aside),
  alignment and starting floor, stacked back to back, go lower rank below
  (swapping them moves nothing else; needs canonical order);
- ``floor_profile``: for every floor f of a section's unplaced buffers,
  those with floors at or above f go above f: prune when they cannot fit
  there (a strengthening of ``unplaced_floor``, checked with it);
- ``failure_memo``: a node whose state (see ``_state``) already failed is
  not searched again;
- ``tight_windows``: the buffers of a run of tight sections (little slack),
  lifetimes cut to it, are a relaxation of the node; a small search that
  refutes it prunes the node;
- ``restarts``: preorders take turns under doubling node limits, so one bad
  early choice does not eat the budget (the order changes, not the answer);
- ``alternate_windows``: each restart round runs every preorder twice,
  first without tight windows, then with them (windows refute some problems
  fast and only cost nodes on others; needs restarts);
- ``distinct_orders``: a restart round skips a preorder that ranks the
  buffers as one it already searched in that round (the same search again;
  needs restarts);
- ``heuristic_incumbent``: start from best_fit's plan.

The search is bounded by *work*, so a given problem and budget give the same
plan on any machine: a node costs ``NODE_OVERHEAD`` units plus one per buffer
and per section of the sub-problem it works on (what it scans); the search
stops when ``work_budget`` units are spent (or ``node_budget`` nodes, if set).
A wall-clock ``deadline_s`` is opt-in only: with it the result depends on the
machine's speed.

Outcomes are kept apart: optimal (or, with a capacity, the best plan within
it, proven optimal), budget exhausted and deadline exceeded (both with the
best plan found, if any), infeasible under the capacity.
"""

from __future__ import annotations

import bisect
import collections
import ctypes
import enum
import itertools
import random
import sys
import time
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from itertools import accumulate
from operator import add

from dnn64build.planner import native_core
from dnn64build.planner.best_fit import best_fit
from dnn64build.planner.problem import (
    Buffer,
    BufferId,
    Offset,
    Problem,
    arena_bytes,
    conflict_lists,
    lower_bound,
)

# Units of work (see above): a unit is a few hundred bytecodes' worth, so the
# default budget is about a second on an idle machine (more under load).
WORK_BUDGET = 6_000_000
NODE_OVERHEAD = 256  # a node's fixed cost (candidates, place, check, unplace), in units
# Preorders tried in turn by ``restarts`` (see ``Search.use_preorder``): a
# portfolio, the busiest-section-first orders alternating with area-first ones
# (these find the tightest random packings of tools/hard_problems.py).
PREORDERS = ("TWA", "AWT", "WAT", "ATW", "TAW", "WTA")
# Tight windows: a section is tight when its free bytes are at most
# 1/TIGHT_SLACK of the capacity; a window's relaxation may explore
# WINDOW_NODES nodes per buffer in it before it is given up (no verdict);
# relaxations are skipped while theirs exceed WINDOW_SHARE x the nodes the search
# made with windows on (the runs without them, see ``alternate_windows``, do not count).
TIGHT_SLACK = 64
WINDOW_NODES = 32
WINDOW_SHARE = 4
WINDOW_SETUP = 8 * NODE_OVERHEAD  # building a relaxation costs about eight nodes' work

SWITCHES = (
    "canonical_order", "section_bound", "symmetric_buffers", "dominance", "hatless",
    "decomposition", "unplaced_floor", "stacked_twins", "floor_profile", "failure_memo",
    "tight_windows",
    "restarts", "alternate_windows", "distinct_orders", "heuristic_incumbent",
)


@dataclass(frozen=True)
class ExactParams:
    canonical_order: bool = True
    section_bound: bool = True
    symmetric_buffers: bool = True
    dominance: bool = True
    hatless: bool = True
    decomposition: bool = True
    unplaced_floor: bool = True
    stacked_twins: bool = True
    floor_profile: bool = True
    failure_memo: bool = True
    tight_windows: bool = True
    restarts: bool = True
    alternate_windows: bool = True
    heuristic_incumbent: bool = True
    distinct_orders: bool = True
    work_budget: int = WORK_BUDGET
    node_budget: int | None = None  # an extra cap on nodes, if set
    deadline_s: float | None = None  # opt-in: seconds from the start of the search
    # With a capacity: stop at the first plan within it (the decision problem,
    # as MiniMalloc poses it) instead of minimising the arena under it.
    first_fit: bool = False


class ExactOutcome(enum.Enum):
    OPTIMAL = "optimal"
    BUDGET_EXHAUSTED = "budget_exhausted"
    DEADLINE_EXCEEDED = "deadline_exceeded"
    INFEASIBLE = "infeasible"
    FITS = "fits"  # first_fit: a plan within the capacity, not minimised


@dataclass(frozen=True)
class ExactResult:
    outcome: ExactOutcome
    offsets: dict[BufferId, Offset] | None  # best plan within the capacity, if any
    arena_bytes: int | None
    nodes: int
    lower_bound_bytes: int = 0  # the live-bytes bound, raised by every refuted probe


class _Stop(Exception):
    def __init__(self, outcome: ExactOutcome):
        self.outcome = outcome


class _RoundOver(Exception):
    """A restart round used its nodes: try the next preorder."""


def maximal_cliques(lowers: list[int], uppers: list[int]) -> tuple[list[int], list[int], int]:
    """Sections of half-open lifetimes: for each buffer the range [first, last)
    of the maximal cliques it belongs to, and the number of cliques. A sweep
    (ends before starts at one step) that closes a clique at every end that
    follows a start."""
    events = sorted([(u, 0, i) for i, u in enumerate(uppers)]
                    + [(lo, 1, i) for i, lo in enumerate(lowers)])
    first, last = [0] * len(lowers), [0] * len(lowers)
    count, opened = 0, False
    for _, is_start, i in events:
        if is_start:
            first[i], opened = count, True
        else:
            if opened:
                count, opened = count + 1, False
            last[i] = count
    return first, last, count


class Search:
    """Decision search under ``capacity``. State, kept by ``place``/``unplace``
    pairs: ``floor[i]`` is the aligned top of the placed buffers conflicting
    with unplaced i; ``remaining[k]`` / ``unplaced_in[k]`` are the unplaced
    footprint bytes and buffers of section k; ``cuts[k]`` counts unplaced
    buffers living in both sections k and k + 1."""

    def __init__(self, problem: Problem, params: ExactParams, deadline: float | None,
                 floors: list[int] | None = None):
        """``floors``: lowest offsets allowed, if not 0 (a window's relaxation)."""
        bufs = problem.buffers
        n = len(bufs)
        self.params = params
        self.start_floor = floors or [0] * n
        self.deadline = deadline
        self.footprint = [b.footprint for b in bufs]
        self.alignment = [b.alignment for b in bufs]
        self.conflicts = conflict_lists(problem)
        self.first, self.last, sections = maximal_cliques(
            [b.lower for b in bufs], [b.upper for b in bufs])
        self.total = [0] * sections  # footprint bytes of each section
        self.members: list[list[int]] = [[] for _ in range(sections)]
        for i in range(n):
            for k in range(self.first[i], self.last[i]):
                self.total[k] += self.footprint[i]
                self.members[k].append(i)
        width = [b.upper - b.lower for b in bufs]
        self.keys = {
            "T": [max(self.total[self.first[i]:self.last[i]]) for i in range(n)],
            "W": width,
            "A": [w * f for w, f in zip(width, self.footprint, strict=True)],
        }
        self.lifetime = [(b.lower, b.upper) for b in bufs]
        # Stacked twins: buffers with the same conflicts (each other aside)
        # and alignment; ``twin_tops[c]`` maps the top of each placed member
        # of class c to its buffer.
        classes: dict[tuple[frozenset[int], int, int], int] = {}
        self.twin_class = [
            classes.setdefault((frozenset(self.conflicts[i]) | {i}, self.alignment[i],
                                self.start_floor[i]), len(classes))
            for i in range(n)
        ]
        self.classes = len(classes)
        class_size = collections.Counter(self.twin_class)
        self.stacked = [class_size[c] > 1 for c in self.twin_class]
        # Failure memo: a node's subtree is a function of its *state* (the
        # unplaced buffers and their floors, where the listing stands, and
        # for stacked twins the placed class members whose top is not below
        # it), kept as a sum with random 128-bit coefficients (a collision
        # needs one of 2**128 values: never in practice).
        rng = random.Random(0x5EED)
        self.zobrist = [rng.getrandbits(128) | 1 for _ in range(n)]
        self.top_key = [rng.getrandbits(128) | 1 for _ in range(n)]
        self.where_key = [rng.getrandbits(128) | 1 for _ in range(4)]
        # a decomposition's piece is keyed by the buffers it started with
        # (they decide its ranking)
        self.piece_keys = [rng.getrandbits(128) | 1 for _ in range(n)]
        self.piece_key = 0
        self.memos: dict[tuple[str, int | None], set[int]] = {}
        self.memo: set[int] = set()
        self.window_verdicts: dict[tuple[int, int, int], bool] = {}  # emptied by each probe
        self.rank = [0] * n  # the listing's rank (a piece's own, within a piece)
        self.order_rank = [0] * n  # the preorder's rank (stacked twins compare it)
        self.orders: dict[tuple[str, int | None], tuple[list[int], list[float]]] = {}
        self.use_preorder(PREORDERS[0])
        self.nodes = 0  # this search's own nodes (restart rounds count these)
        self.relaxed_nodes = 0  # the nodes of tight windows' relaxations
        self.windowed_nodes = 0  # this search's own nodes with tight windows on
        self.max_units = params.work_budget
        self.max_nodes = params.node_budget
        self.units = 0
        self.round_end = sys.maxsize  # the node count where a restart round ends
        self.next_clock = 1  # the node count where the deadline is checked next
        self.sections = sections
        self.windows = True  # tight windows in this restart round (``alternate_windows``)
        self.reset()

    def reset(self) -> None:
        n = len(self.footprint)
        self.offset: list[Offset | None] = [None] * n
        self.floor = list(self.start_floor)
        self.tops = list(map(add, self.floor, self.footprint))  # floor + footprint
        self.remaining = list(self.total)
        self.unplaced_in = [list(m) for m in self.members]
        self.cuts = [0] * max(self.sections - 1, 0)
        for i in range(n):
            for k in range(self.first[i], self.last[i] - 1):
                self.cuts[k] += 1
        self.history: list[tuple[int, list[int], list[int], int]] = []
        self.twin_tops: list[dict[int, int]] = [{} for _ in range(self.classes)]
        # (top, buffer) of the placed buffers with a stacked twin, in order
        self.stacked_placed: list[tuple[int, int]] = []
        # unplaced j adds zobrist[j] * (floor[j] + 1)
        self.state_key = sum(z * (f + 1) for z, f in zip(self.zobrist, self.floor, strict=True))

    def use_preorder(self, letters: str, shuffle: int | None = None) -> None:
        """Rank buffers by the keys named in ``letters``, each largest first
        (T busiest section's bytes, W lifetime, A lifetime x footprint). With
        ``shuffle`` (a seed), every buffer's keys are scaled by a random factor
        within 2**±0.5 first, so that near-ties fall differently. Each order
        is computed once (restart rounds come back to the plain ones)."""
        cached = self.orders.get((letters, shuffle))
        if cached is None:
            keys = [self.keys[c] for c in letters]
            scale = [1.0] * len(self.rank)
            if shuffle is not None:
                rng = random.Random(shuffle)
                scale = [2 ** rng.uniform(-0.5, 0.5) for _ in scale]
            cached = self.orders[letters, shuffle] = sorted(
                range(len(self.rank)), key=lambda i: [-k[i] * scale[i] for k in keys] + [i]), scale
        self.order, self.scale = cached
        self.letters = letters
        for r, i in enumerate(self.order):
            self.rank[i] = self.order_rank[i] = r
        self.twin = self._twins() if self.params.symmetric_buffers else [None] * len(self.rank)

    def _twins(self) -> list[int | None]:
        """For each buffer, the identical buffer just before it in rank, if any."""
        seen: dict[tuple[tuple[int, int], int, int, int], int] = {}
        twin: list[int | None] = [None] * len(self.rank)
        for i in self.order:
            key = (self.lifetime[i], self.footprint[i], self.alignment[i], self.start_floor[i])
            twin[i] = seen.get(key)
            seen[key] = i
        return twin

    def place(self, i: int, offset: Offset) -> bool:
        """Put i at ``offset``; True when that leaves some boundary between
        sections with no unplaced buffer across it (a decomposition point)."""
        size = self.footprint[i]
        top = offset + size
        floor, remaining, cuts = self.floor, self.remaining, self.cuts
        alignment, unplaced_in = self.alignment, self.unplaced_in
        raised: list[int] = []  # the unplaced conflicts whose floors i raises
        olds: list[int] = []  # and their floors before
        key, zobrist, placed_at = self.state_key, self.zobrist, self.offset
        tops, footprint = self.tops, self.footprint
        saved_key = key
        # Only unplaced conflicts change: a placed buffer's floor is not read,
        # and when it is unplaced (LIFO) it is again what it was at its placing.
        for j in self.conflicts[i]:
            old = floor[j]
            if old < top and placed_at[j] is None:
                raised.append(j)
                olds.append(old)
                floor[j] = new = -(-top // alignment[j]) * alignment[j]
                tops[j] = new + footprint[j]
                key += zobrist[j] * (new - old)
        self.state_key = key - zobrist[i] * (floor[i] + 1)
        start, stop = self.first[i], self.last[i]
        split = False
        for k in range(start, stop):
            remaining[k] -= size
            unplaced_in[k].remove(i)
        for k in range(start, stop - 1):
            cuts[k] -= 1
            split = split or not cuts[k]
        self.offset[i] = offset
        self.twin_tops[self.twin_class[i]][top] = i
        if self.stacked[i]:
            bisect.insort(self.stacked_placed, (top, i))
        self.history.append((i, raised, olds, saved_key))
        return split

    def unplace(self) -> None:
        i, raised, olds, self.state_key = self.history.pop()
        size = self.footprint[i]
        floor, remaining, cuts, unplaced_in = (
            self.floor, self.remaining, self.cuts, self.unplaced_in)
        tops, footprint = self.tops, self.footprint
        for j, old in zip(raised, olds, strict=True):
            floor[j] = old
            tops[j] = old + footprint[j]
        start, stop = self.first[i], self.last[i]
        for k in range(start, stop):
            remaining[k] += size
            unplaced_in[k].append(i)
        for k in range(start, stop - 1):
            cuts[k] += 1
        top = self.offset[i] + size
        del self.twin_tops[self.twin_class[i]][top]
        if self.stacked[i]:
            del self.stacked_placed[bisect.bisect_left(self.stacked_placed, (top, i))]
        self.offset[i] = None

    def rollback(self, depth: int) -> None:
        while len(self.history) > depth:
            self.unplace()

    def probe(self, capacity: int) -> bool:
        """Whether every buffer fits under ``capacity`` (on True they stay
        placed). With ``restarts``, preorders take turns with node limits that
        double each round (a bad early choice costs one round, not the whole
        budget): the plain ``PREORDERS``, and from the second round on, before
        them, shuffled ones (seeded by the round, so the search stays
        deterministic).
        A round that ends without running out of nodes proves the answer."""
        self._forget()  # failures under another capacity say nothing here
        self.windows = True
        if not self.params.restarts:
            self.reset()
            self._use_memo(("", None))
            return self.solve(list(self.order), capacity)
        limit = 2 * len(self.rank)
        # Tight windows refute some problems quickly and only cost nodes on
        # others: with ``alternate_windows``, each preorder runs without them,
        # then with them (one memo: a refuted subtree is refuted either way).
        windows = (False, True) if self.params.alternate_windows else (True,)
        for round_ in itertools.count():
            # A new shuffle first: the plain preorders already had half this
            # limit in the round before (and keep what they learned there).
            shuffles = [None] if round_ == 0 else [round_, None]
            searched: set[tuple[tuple[int, ...], bool]] = set()
            for shuffle, letters, self.windows in itertools.product(shuffles, PREORDERS,
                                                                    windows):
                self.use_preorder(letters, shuffle)
                # Two preorders can rank alike (AWT and ATW when no two areas
                # are equal; shuffled keys almost never tie, so a shuffle ranks
                # by its first letter alone): it would search the same tree again.
                if self.params.distinct_orders:
                    run = (tuple(self.order), self.windows)
                    if run in searched:
                        continue
                    searched.add(run)
                self.reset()
                # A subtree that failed in an earlier round under the same
                # preorder fails again: the memo carries over.
                self._use_memo((letters, shuffle))
                self.round_end = self.nodes + limit
                try:
                    return self.solve(list(self.order), capacity)
                except _RoundOver:
                    pass
                finally:
                    self.round_end = sys.maxsize
            limit *= 2
        raise AssertionError("unreachable")

    def _forget(self) -> None:
        self.memos.clear()
        self.window_verdicts: dict[tuple[int, int, int], bool] = {}

    def _use_memo(self, key: tuple[str, int | None]) -> None:
        """The failure memo of one preorder (``key``: its letters and shuffle)."""
        self.memo = self.memos.setdefault(key, set())

    def solve(self, part: list[int], capacity: int) -> bool:
        """Place every buffer of ``part`` (rank order, all unplaced) under
        ``capacity``; on success they stay placed."""
        lo, hi = self._span(part)
        if self.params.decomposition and any(not self.cuts[k] for k in range(lo, hi - 1)):
            return self._solve_pieces(part, lo, hi, capacity)
        return self._search(part, lo, hi, capacity, 0, -1)

    def _solve_pieces(self, part: list[int], lo: int, hi: int, capacity: int) -> bool:
        """The unplaced buffers of ``part`` split at boundaries no unplaced buffer
        crosses; each piece is independent of the others given the placed ones."""
        starts = [k + 1 for k in range(lo, hi - 1) if not self.cuts[k]]
        pieces: list[list[int]] = [[] for _ in range(len(starts) + 1)]
        for i in part:
            if self.offset[i] is None:
                pieces[bisect.bisect_right(starts, self.first[i])].append(i)
        depth = len(self.history)
        outer, ranks = self.piece_key, [self.rank[i] for i in part]
        try:
            for piece in pieces:
                if not piece:
                    continue
                self._rank_piece(piece)
                if not self._search(piece, *self._span(piece), capacity, 0, -1):
                    self.rollback(depth)
                    return False
            return True
        finally:  # the enclosing search goes on with its own ranks
            self.piece_key = outer
            for i, r in zip(part, ranks, strict=True):
                self.rank[i] = r

    def _rank_piece(self, piece: list[int]) -> None:
        """Rank a piece's buffers (all unplaced) by the preorder's letters, T now
        the most bytes still unplaced in any of a buffer's sections (the
        preorder's shuffle scaling them alike), ties by the preorder. A piece
        keeps its ranks while it is searched (the canonical listing needs them
        fixed); only its buffers' are read meanwhile, and a piece's subtree
        depends on the buffers it started with, which key its nodes' states."""
        remaining, first, last, scale = self.remaining, self.first, self.last, self.scale
        keys = [self.keys[c] if c != "T" else None for c in self.letters]

        def key(i: int) -> list[float | int]:
            busiest = max(remaining[first[i]:last[i]])
            return [-(busiest if k is None else k[i]) * scale[i] for k in keys] + [
                self.order_rank[i]]

        for r, i in enumerate(sorted(piece, key=key)):
            self.rank[i] = r
        self.piece_key = sum(map(self.piece_keys.__getitem__, piece))

    def _span(self, piece: list[int]) -> tuple[int, int]:
        """The range of sections the buffers of ``piece`` live in."""
        return min(self.first[i] for i in piece), max(self.last[i] for i in piece)

    def _tick(self, units: int) -> None:
        self.nodes += 1
        self.windowed_nodes += self.windows
        self.units += units
        if self.units > self.max_units or (self.max_nodes is not None
                                           and self.nodes + self.relaxed_nodes > self.max_nodes):
            raise _Stop(ExactOutcome.BUDGET_EXHAUSTED)
        if self.nodes > self.round_end:
            raise _RoundOver
        # The clock is read every 64 nodes (and a relaxation is small).
        if self.deadline is not None and self.nodes >= self.next_clock:
            self.next_clock = self.nodes + 64
            if time.perf_counter() > self.deadline:
                raise _Stop(ExactOutcome.DEADLINE_EXCEEDED)

    def _search(self, part: list[int], lo: int, hi: int, capacity: int,
                last_at: int, last_rank: int) -> bool:
        """One node: the buffers of ``part`` not yet placed, continuing the
        canonical listing after (``last_at``, ``last_rank``)."""
        params = self.params
        offset, floor, footprint, rank = self.offset, self.floor, self.footprint, self.rank
        order_rank = self.order_rank
        todo = [i for i in part if offset[i] is None]
        if not todo:
            return True
        self._tick(NODE_OVERHEAD + len(part) + hi - lo)
        if params.failure_memo:
            state = self._state(lo, hi, last_at, last_rank)
            if state in self.memo:
                return False
        # Relaxations may take at most WINDOW_SHARE x this search's own nodes with windows on.
        if (params.tight_windows and self.windows
                and self.relaxed_nodes <= WINDOW_SHARE * self.windowed_nodes
                and not self._windows_fit(lo, hi, capacity, last_at)):
            if params.failure_memo:
                self.memo.add(state)
            return False
        canonical = params.canonical_order
        twin = self.twin
        stacked = canonical and params.stacked_twins
        twin_tops, twin_class = self.twin_tops, self.twin_class
        # Dominance: a buffer at or above this would leave room below it for
        # an unplaced buffer that the canonical listing can no longer put there.
        gap_bound = (min(map(self.tops.__getitem__, todo))
                     if canonical and params.dominance else None)
        # Section bound: a new buffer's offset plus the unplaced bytes of each
        # of its sections must fit (each section's, under canonical order,
        # where every later buffer goes at or above it).
        remaining, first, last = self.remaining, self.first, self.last
        bound = params.section_bound
        ceiling = capacity - max(remaining[lo:hi]) if bound and canonical else capacity
        # A child's offset is in [low, high).
        low = last_at if canonical else 0
        high = ceiling + 1 if gap_bound is None else min(ceiling + 1, gap_bound)
        children = []
        for i in [i for i in todo if low <= floor[i] < high]:  # few: a fast first pass
            at = floor[i]
            if at + footprint[i] > capacity:
                continue
            if canonical and at == last_at and rank[i] < last_rank:
                continue
            t = twin[i]
            if t is not None and offset[t] is None:
                continue
            if bound and not canonical and at + max(remaining[first[i]:last[i]]) > capacity:
                continue
            if stacked:
                below = twin_tops[twin_class[i]].get(at)
                if below is not None and order_rank[below] > order_rank[i]:
                    continue
            children.append((at, rank[i], i))
        children.sort()
        depth = len(self.history)
        for at, r, i in children:
            split = self.place(i, at)
            ok = not params.unplaced_floor or self._floors_fit(i, lo, hi, capacity)
            if ok:
                if split and params.decomposition:
                    ok = self._solve_pieces(part, lo, hi, capacity)
                else:
                    ok = self._search(part, lo, hi, capacity, at, r)
            if ok:
                return True
            self.rollback(depth)
            if params.hatless and not any(offset[j] is None for j in self.conflicts[i]):
                break
        if params.failure_memo:
            self.memo.add(state)
        return False

    def _windows_fit(self, lo: int, hi: int, capacity: int, last_at: int) -> bool:
        """Tight windows: a window is a maximal run of this piece's sections
        (within [lo, hi)) whose free bytes (the capacity less the unplaced
        bytes and less the lowest offset left to them: their lowest floor, or
        the listing's offset) are at most 1/TIGHT_SLACK of the capacity. Its
        unplaced buffers, lifetimes cut to it, placed above their floors and
        the listing's offset, are a relaxation of this node: when that has no
        solution, neither has the node. Its search gets a small node budget
        (counted here); running out of it says nothing. Verdicts are kept by
        (window, floors)."""
        floor, alignment, remaining, unplaced_in = (
            self.floor, self.alignment, self.remaining, self.unplaced_in)
        limit = capacity // TIGHT_SLACK
        tight = [bool(unplaced_in[k]) and capacity - remaining[k] - max(
            last_at, min(map(floor.__getitem__, unplaced_in[k]))) <= limit
            for k in range(lo, hi)]
        for a, b in _runs(tight, lo):
            inside = sorted({j for k in range(a, b) for j in unplaced_in[k]})
            if len(inside) < 2:
                continue
            floors = [max(floor[j], -(-last_at // alignment[j]) * alignment[j]) for j in inside]
            key = (a, b, sum(self.zobrist[j] * (f + 1) for j, f in zip(inside, floors,
                                                                         strict=True)))
            verdict = self.window_verdicts.get(key)
            if verdict is None:
                verdict = self.window_verdicts[key] = self._window_fits(inside, floors, a, b,
                                                                         capacity)
            if not verdict:
                return False
        return True

    def _window_fits(self, inside: list[int], floors: list[int], a: int, b: int,
                     capacity: int) -> bool:
        """The relaxation of one window; False when it proves no solution."""
        first, last, alignment = self.first, self.last, self.alignment
        sub = Problem.of(
            Buffer(str(j), max(first[j], a), min(last[j], b), self.footprint[j], alignment[j])
            for j in inside)
        relaxed = Search(sub, replace(self.params, tight_windows=False, restarts=False,
                                       work_budget=sys.maxsize,
                                       node_budget=WINDOW_NODES * len(inside),
                                       deadline_s=None), self.deadline, floors)
        relaxed.memo = set()
        try:
            fits = relaxed.solve(list(relaxed.order), capacity)
        except _Stop as stop:
            if stop.outcome is ExactOutcome.DEADLINE_EXCEEDED:
                raise
            fits = True  # its node budget ran out: no verdict
        finally:
            self.relaxed_nodes += relaxed.nodes + relaxed.relaxed_nodes
            self.units += relaxed.units + WINDOW_SETUP
        return fits

    def _state(self, lo: int, hi: int, last_at: int, last_rank: int) -> int:
        """The key of a node's state (see ``zobrist``). Two nodes with equal
        keys search identical subtrees."""
        top_key, where = self.top_key, self.where_key
        key = (self.state_key + where[0] * lo + where[1] * hi + where[2] * last_at
               + where[3] * (last_rank + 1) + self.piece_key)
        if self.params.stacked_twins:
            placed = self.stacked_placed
            for top, j in placed[bisect.bisect_left(placed, (last_at, -1)):]:
                key += top_key[j] * (top + 1)
        return key

    def _floors_fit(self, i: int, lo: int, hi: int, capacity: int) -> bool:
        """Unplaced floor: the unplaced buffers of a section all go at or above
        the lowest of their floors. With ``floor_profile``, for every floor f
        of a section, those whose floors are at or above f go above f. Placing
        i leaves fewer bytes in its sections and raises the floors of some
        conflicts: only the sections of those can have got tighter, and only
        thresholds up to the highest floor raised gained bytes, so a section
        is looked at only when that floor plus its unplaced bytes exceed the
        capacity (when i raised none of its members and it still fits, it fit
        before)."""
        raised = self.history[-1][1]
        if not raised:  # no floor rose: no section got tighter
            return True
        floor_of, remaining, unplaced_in = self.floor.__getitem__, self.remaining, self.unplaced_in
        footprint_of = self.footprint.__getitem__
        first, last = self.first, self.last
        profile = self.params.floor_profile
        highest = max(map(floor_of, raised))
        # their sections: a contiguous range (each meets i's)
        start = min(map(first.__getitem__, raised))
        stop = max(map(last.__getitem__, raised))
        for k in range(max(lo, start), min(hi, stop)):
            left = remaining[k]
            if highest + left <= capacity:
                continue
            members = unplaced_in[k]
            if not members:
                continue
            floors = list(map(floor_of, members))
            if min(floors) + left > capacity:
                return False
            if profile:
                order = sorted(range(len(floors)), key=floors.__getitem__, reverse=True)
                above = accumulate(map(footprint_of, map(members.__getitem__, order)))
                if max(map(add, map(floors.__getitem__, order), above)) > capacity:
                    return False
        return True


# The counters the compiled core keeps during a round (exact_core.c's C_* order).
CORE_COUNTERS = ("nodes", "relaxed_nodes", "windowed_nodes", "units", "round_end", "windows")
CORE_SWITCHES = SWITCHES[:11]  # the rules of the inner loop (exact_core.c's enum order)
_INT64_MAX = 2**63 - 1


class CompiledSearch(Search):
    """The same search with each round run by the compiled core (exact_core.c,
    see native_core.py): this class keeps the restart schedule, the preorders
    and the counters between rounds; the core places, prunes, memoises and
    runs the windows' relaxations, node for node as :class:`Search` does."""

    def __init__(self, problem: Problem, params: ExactParams, deadline: float | None,
                 lib: ctypes.CDLL):
        super().__init__(problem, params, deadline)
        self.lib = lib
        bufs = problem.buffers
        column = ctypes.c_int64 * len(bufs)
        # The random keys in the order the Python search draws them.
        keys = [*self.zobrist, *self.top_key, *self.where_key, *self.piece_keys]
        self._keys = ctypes.create_string_buffer(
            b"".join(k.to_bytes(16, "little") for k in keys), 16 * len(keys))
        seconds = -1.0 if deadline is None else max(deadline - time.perf_counter(), 0.0)
        self._core = lib.exact_new(
            len(bufs), column(*(b.lower for b in bufs)), column(*(b.upper for b in bufs)),
            column(*self.footprint), column(*self.alignment), self._keys,
            bytes(getattr(params, s) for s in CORE_SWITCHES),
            min(params.work_budget, _INT64_MAX),
            -1 if params.node_budget is None else params.node_budget, seconds)
        if not self._core:
            raise MemoryError("the exact search's compiled core")
        weakref.finalize(self, lib.exact_free, self._core)
        self._memo_ids: dict[tuple[str, int | None], int] = {}
        self._memo_id = 0

    def reset(self) -> None:
        """The core resets its own state at the start of each round (``solve``)."""

    def _twins(self) -> list[int | None]:
        return []  # the core finds them (exact_set_order)

    def _forget(self) -> None:
        self._memo_ids.clear()
        self.lib.exact_forget(self._core)

    def _use_memo(self, key: tuple[str, int | None]) -> None:
        self._memo_id = self._memo_ids.setdefault(key, len(self._memo_ids))

    def solve(self, part: list[int], capacity: int) -> bool:
        """One round: ``part`` is the whole preorder."""
        lib, core = self.lib, self._core
        if (lib.exact_set_order(core, (ctypes.c_int * len(part))(*part),
                                (ctypes.c_double * len(part))(*self.scale),
                                self.letters.encode())
                or lib.exact_use_memo(core, self._memo_id)):
            raise MemoryError("the exact search's compiled core")
        lib.exact_reset(core)
        counters = lib.exact_counters(core)
        for k, name in enumerate(CORE_COUNTERS):
            counters[k] = min(int(getattr(self, name)), _INT64_MAX)
        offsets = (ctypes.c_int64 * len(part))()
        code = lib.exact_solve(core, capacity, offsets)
        for k, name in enumerate(CORE_COUNTERS[:4]):
            setattr(self, name, counters[k])
        if code == 1:
            self.offset = list(offsets)
        if code in (0, 1):
            return bool(code)
        if code == -3:
            raise _RoundOver
        if code in (-1, -2):
            raise _Stop(ExactOutcome.BUDGET_EXHAUSTED if code == -1
                        else ExactOutcome.DEADLINE_EXCEEDED)
        raise MemoryError("the exact search's compiled core")


def _runs(flags: list[bool], start: int) -> Iterator[tuple[int, int]]:
    """The maximal runs of True in ``flags`` as ranges [a, b), numbered from
    ``start``."""
    a = None
    for k, flag in enumerate(flags, start):
        if flag and a is None:
            a = k
        elif not flag and a is not None:
            yield a, k
            a = None
    if a is not None:
        yield a, start + len(flags)


@contextmanager
def _deep_recursion(depth: int) -> Iterator[None]:
    """The search recurses once per placed buffer; Python >= 3.11 keeps such
    frames off the C stack, so a higher limit is safe."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 3 * depth + 200))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def solve_exact(
    problem: Problem,
    params: ExactParams | None = None,
    capacity: int | None = None,
    incumbent: Mapping[BufferId, Offset] | None = None,
    *,
    compiled: bool | None = None,
) -> ExactResult:
    """Minimise the arena; with ``capacity``, only plans that fit it count.
    ``compiled``: run the compiled core (None: when it can be built, see
    native_core.py; True: it must be; False: the Python search)."""
    params = params or ExactParams()
    start = time.perf_counter()
    deadline = None if params.deadline_s is None else start + params.deadline_s
    lower = lower_bound(problem).bytes
    # Empty buffers take no bytes: they sit at 0 (aligned for any alignment)
    # and stay out of the search, where stacking them could cost alignment.
    empty = {b.id: 0 for b in problem.buffers if not b.footprint}
    sized = Problem.of(b for b in problem.buffers if b.footprint)
    if not sized.buffers:
        return ExactResult(ExactOutcome.OPTIMAL, empty, 0, 0, 0)
    if incumbent is None and params.heuristic_incumbent:
        incumbent = best_fit(problem)
    best: dict[BufferId, Offset] | None = None
    if incumbent is not None and (capacity is None
                                  or arena_bytes(problem, incumbent) <= capacity):
        best = dict(incumbent)
    # Arenas are multiples of the smallest alignment: probe only those.
    unit = min(b.alignment for b in sized.buffers)
    top = arena_bytes(problem, best) - unit if best is not None else (
        capacity if capacity is not None else sum(b.footprint for b in sized.buffers))
    if capacity is not None:
        top = min(top, capacity)
    lib = native_core.load() if compiled is not False else None
    if compiled and lib is None:
        raise RuntimeError("the exact search's compiled core is not available")
    search = (Search(sized, params, deadline) if lib is None
              else CompiledSearch(sized, params, deadline, lib))
    outcome = ExactOutcome.OPTIMAL
    # Probe the capacity first (any plan that fits it), then the bound (success
    # proves optimality), then bisect between the bound and the best plan.
    probe = top if capacity is not None and best is None else lower
    bound_probed = probe == lower
    # first_fit: a plan within the capacity ends the search (the incumbent's too)
    searching = not (params.first_fit and capacity is not None and best is not None)
    with _deep_recursion(len(sized)):
        while searching and lower <= top:
            try:
                found = search.probe(probe)
            except _Stop as stop:
                outcome = stop.outcome
                break
            if found:
                offsets = {b.id: search.offset[k] for k, b in enumerate(sized.buffers)}
                best = offsets | empty
                top = arena_bytes(problem, best) - unit
                if params.first_fit and capacity is not None:
                    break
            else:
                lower = probe + unit
            if bound_probed:
                probe = max((lower + (top - lower) // 2) // unit * unit, lower)
            else:
                probe, bound_probed = lower, True
    if best is None and outcome is ExactOutcome.OPTIMAL:
        outcome = ExactOutcome.INFEASIBLE
    elif best is not None and outcome is ExactOutcome.OPTIMAL and lower <= top:
        outcome = ExactOutcome.FITS  # first_fit stopped before the bound was reached
    arena = arena_bytes(problem, best) if best is not None else None
    return ExactResult(outcome, best, arena, search.nodes + search.relaxed_nodes, lower)
