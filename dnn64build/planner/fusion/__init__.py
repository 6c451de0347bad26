"""Fused groups: find chains of spatial ops, decide which run row-streamed or
patch by patch, and rewrite the graph so that each group is one node; and the ladder of
ways to plan a model (fusion modes among them) tried until one fits the memory.

``planner: {fusion: ...}`` (docs/planner.md):

- ``none``: no group;
- ``stream``: every chain runs row-streamed (no extra MACs), bands of one row;
- ``patch``: the planner picks chain sections and grids (MCUNetV2), one group
  at a time, each the one that lowers the peak live bytes most, while the
  extra MACs stay within ``MAX_EXTRA_MACS`` of the model's; what is left of
  every chain is streamed;
- ``dag``: whole sub-DAGs between single-tensor cuts (residual blocks, dense
  blocks) row-streamed (planner/dagstream.py), no extra MACs, each member's weights
  re-read for every firing;
- ``auto``: the stream groups with the least activation + staging bytes (none, every
  chain, or chains added one at a time); the other modes, with the input and output
  streamed, are planned only when that does not fit the memory (ladder.py).

``planner: {input: ...}`` (``INPUT_MODES``): ``stream`` makes the first dag group start
at the graph input and read it row by row (planner/dagstream.py), so the whole input
never occupies the arena (fusion ``dag`` or ``auto`` only); ``whole`` never does;
``auto`` (the default) streams it only under fusion ``auto``, when nothing else fits
(ladder.py).

``planner: {output: ...}`` (``OUTPUT_MODES``): ``stream`` makes the last dag group end
at the graph output and hand its rows to the caller as they are finished (an output
stage, planner/dagstream.py), so the whole output never occupies the arena; ``whole``
never does; ``auto`` (the default) only under fusion ``auto``, when nothing else fits
(after the streamed input alone).

A chain is a run of Conv / MaxPool / AveragePool nodes (batch 1, NCHW) where
each intermediate is read only by the next node and is no graph output. A
group is one node ``FusedGroup`` whose inputs are X and every member's
constants, and whose outputs are Y and the group's buffers (planned like any
tensor, live at that one step). plan.json records each group (``fusion``) so
that code generation rebuilds the same graph with ``apply_groups``.

Weights: all members' weights are staged together as one tile (they are all
used in every band or tile, and re-reading them per band would cost far more
cartridge bandwidth), so the staging area must hold the group's weights in one
half: chains are cut where their weights would pass ``weight_cap``.

Modules, lowest first: ``records`` (a group as plan.json records it, its names),
``chains`` (the nodes a group may hold), ``cost`` (a group's program, MACs and weights;
plan.json's ``fusion``), ``rewrite`` (the graph with each group one node), ``policy``
(the groups each mode chooses), ``ladder`` (the options, fastest first) and ``search``
(the options planned until one fits: the plan stage's one call).
"""
