"""The ladder: the ways to plan a model that the settings leave to the tool, fastest first
(search.py plans them until one fits).

Vocabulary:

- an *option* (``Option``) is one way to plan a model: a fusion mode (``none``; ``auto``:
  the stream groups with the least activation + staging bytes; ``stream``: every chain;
  ``dag``; ``patch``, see the package doc), whether a dag group streams the graph input
  and hands out the graph output, whether QuantizeLinear + stem pairs run as one call
  (``quantize_stem``), and whether the weight staging is the minimum (every layer tiled
  to at most 32 KiB a half) or shrunk below it (smaller tiles, more calls: the staging
  below the minimum that needs least);
- an option's *needs* are the RDRAM bytes of its plan at its weight staging (low memory
  + arena + staging + program estimate + stack, fit.needed_bytes);
- the *ladder* (``ladder``) is the list of options the settings allow, the fastest first.

Invariants:

- an option's plan and needs depend on the model and the settings, never on the memory:
  so the search meets a memory exactly when it is at least the smallest needs among the
  options (monotonic in the memory), and a refusal names that smallest needs;
- a setting the user fixes (``fusion: dag``, ``input: whole``, ...) only removes options:
  the ladder of the defaults holds every option a hand-set combination of fusion, input
  and output plans, so the defaults never refuse a memory that such a combination meets
  (an explicit ``staging_bytes`` also cuts chains at half of it, groups the shrunk
  staging keeps as they are).

Cost order (``LADDER``): the existing cost notions, not a cost model. RSP kernels make
no fusion fastest (a fused Conv runs the CPU's region kernel); then stream groups (no
extra MACs; a call per band and channel), dag groups (weights re-read from the cartridge
for every firing), dag groups with the graph input streamed, with the output handed out,
with both, and patch groups (extra MACs) last; each at the minimum weight staging, then
shrunk (a few more kernel calls and ROM reads cost less than the next fusion mode, more
than a lost pair: a tile is an RSP call of its own that packs its im2col again); and
each of those with its quantize_stem pairs first (the CPU quantizes while the RSP
computes the stem), then without.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Option:
    """One way to plan the model (see the module doc)."""

    fusion: str  # a fusion mode of records.FUSION_MODES; "auto": the cheapest stream groups
    input: str = "whole"  # "stream": the first dag group reads the graph input row by row
    output: str = "whole"  # "stream": the last dag group hands the graph output out by rows
    pairs: bool = False  # QuantizeLinear + stem pairs as one call
    staging: str = "minimum"  # "shrunk": the weight staging below the minimum that needs least

    def describe(self) -> str:
        fusion = "fusion auto (the cheapest stream groups)" if self.fusion == "auto" else \
            f"fusion {self.fusion}"
        parts = [fusion]
        if self.input == "stream":
            parts.append("input streamed")
        if self.output == "stream":
            parts.append("output streamed")
        if self.pairs:
            parts.append("quantize_stem paired")
        if self.staging == "shrunk":
            parts.append("weight staging shrunk")
        return ", ".join(parts)


# The fusion options of `fusion: auto`, fastest first: (mode, input, output).
LADDER = (("auto", "whole", "whole"), ("none", "whole", "whole"),
          ("stream", "whole", "whole"), ("dag", "whole", "whole"),
          ("dag", "stream", "whole"), ("dag", "whole", "stream"),
          ("dag", "stream", "stream"), ("patch", "whole", "whole"))


@dataclass(frozen=True)
class Settings:
    """What the ladder depends on: the planner settings (``fusion``, ``input``, ``output``:
    ``auto`` leaves the choice to the tool; an input or output ``auto`` streams only under
    fusion ``auto``), the ``kernels`` setting (other than ``cpu``, the model's Convs may
    run on the RSP: no fusion first), ``pairs``: the model has QuantizeLinear + stem pairs
    (each option paired first, then not), and ``staging_auto``: the weight staging is the
    tool's to choose (each option at the minimum staging first, then shrunk: smaller
    tiles, more kernel calls)."""

    fusion: str
    input: str
    output: str
    kernels: str
    pairs: bool
    staging_auto: bool


def ladder(settings: Settings) -> list[Option]:
    """The options ``settings`` allow, fastest first."""
    steps = list(LADDER)
    if settings.kernels != "cpu":  # a fused Conv runs on the CPU: no groups is the fastest
        steps.insert(0, steps.pop(1))
    if settings.fusion != "auto":
        # A hand-set mode streams only what is asked for; `auto` is then "whole".
        steps = [(settings.fusion, _hand_set(settings.input), _hand_set(settings.output))]
    else:
        steps = [s for s in steps
                 if _allowed(s[1], settings.input) and _allowed(s[2], settings.output)]
        if "stream" in (settings.input, settings.output):  # only a dag group streams
            steps = [s for s in steps if s[0] == "dag"]
    return [Option(mode, i, o, paired, staging) for mode, i, o in steps
            for staging in (("minimum", "shrunk") if settings.staging_auto else ("minimum",))
            for paired in ((True, False) if settings.pairs else (False,))]


def _hand_set(mode: str) -> str:
    return "stream" if mode == "stream" else "whole"


def _allowed(how: str, setting: str) -> bool:
    return setting == "auto" or how == setting
