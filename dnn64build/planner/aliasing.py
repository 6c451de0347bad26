"""Alias groups: tensors that share one arena buffer.

Walking the ops in schedule order, a tensor is attached to a *parent* at a
byte offset inside it:

- a view's output is its input (offset 0);
- an in-place op's output overwrites an input of the same size, if nothing in
  that input's group is used after this op and the group holds no model input
  or output (offset 0; the output itself may be a model output);
- a concat's inputs are laid out inside its output at their running byte
  offsets (the caller marks only concats whose inputs are contiguous chunks of
  the output): an input's whole group moves there if only views share it
  (nothing overwrites it), it holds no model input or output, the input is its
  root's full bytes, and the offset is aligned.

The forest is flattened to ``{member: (root, offset in root)}``. A group is
planned as one buffer: the root's size, over the union of the members'
lifetimes; members never reach past the root (views and in-place outputs have
the same size, concat parts fit inside).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dnn64build.planner.schedule import Dag

Aliases = dict[str, tuple[str, int]]  # member -> (root, byte offset in root)


def find_aliases(
    dag: Dag,
    order: Sequence[int],
    spans: Mapping[str, tuple[int, int]],
    alignment: int,
    kinds: frozenset[str] = frozenset({"view", "inplace", "concat"}),
    copied: frozenset[tuple[str, str]] = frozenset(),
) -> Aliases:
    """Alias groups for ``dag`` run in ``order`` (op indices); ``spans`` are the
    tensors' half-open lifetimes under that order; ``kinds`` switches each rule;
    ``copied`` holds (concat op, input) pairs left outside the output: the concat
    copies that input into its slice."""
    parent: dict[str, tuple[str, int]] = {}
    members: dict[str, list[str]] = {t: [t] for t in spans}  # root -> group
    pure_views: dict[str, bool] = {t: True for t in spans}  # root -> only views share it
    fixed = set(dag.inputs) | set(dag.outputs)

    def root(t: str) -> tuple[str, int]:
        offset = 0
        while t in parent:
            t, shift = parent[t]
            offset += shift
        return t, offset

    def attach(child: str, target: str, offset: int, view: bool) -> None:
        parent[child] = (target, offset)
        top, _ = root(target)
        members[top] += members.pop(child)
        child_pure = pure_views.pop(child)
        pure_views[top] = pure_views[top] and view and child_pure

    for step, i in enumerate(order):
        op = dag.ops[i]
        if op.alias not in kinds or not op.outputs or op.outputs[0] not in spans:
            continue
        out = op.outputs[0]
        ins = [t for t in op.inputs if t in spans]
        if op.alias == "view" and op.inputs and op.inputs[0] in spans:
            if dag.sizes[out] <= dag.sizes[op.inputs[0]]:
                attach(out, op.inputs[0], 0, view=True)
        elif op.alias == "inplace":
            allowed = op.inplace_inputs
            for t in dict.fromkeys(t for t in ins if allowed is None or t in allowed):
                top, _ = root(t)
                group = members[top]
                if (
                    dag.sizes[t] == dag.sizes[out]
                    and not fixed.intersection(group)
                    and all(spans[m][1] <= step + 1 for m in group)
                ):
                    attach(out, t, 0, view=False)
                    break
        elif op.alias == "concat" and len(set(op.inputs)) == len(op.inputs) == len(ins):
            offset = 0
            for t in op.inputs:
                top, shift = root(t)  # a view's bytes are its root's
                if (
                    (op.name, t) not in copied
                    and shift == 0
                    and top != out
                    and dag.sizes[top] == dag.sizes[t]
                    and pure_views.get(top, False)
                    and top not in fixed
                    and offset % alignment == 0
                    and offset + dag.sizes[t] <= dag.sizes[out]
                ):
                    attach(top, out, offset, view=False)
                offset += dag.sizes[t]
    return {t: root(t) for t in parent}
