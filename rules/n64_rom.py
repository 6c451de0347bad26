"""``n64_rom``: several models in one ROM, run one after another.

The models share one arena (sized for the largest plan, since only one runs
at a time) and one asset area holding every model's weights.
"""

from __future__ import annotations

from dnn64build.errors import UserError
from dnn64build.rules_api import Rule, RuleContext, labels_attr

from ._model import ModelInfo, resolve_toolchain
from ._rom import ROM_ATTRS, declare_rom


def _implementation(ctx: RuleContext) -> None:
    models = ctx.attrs["models"]
    toolchain = resolve_toolchain(ctx, ctx.attrs["toolchain"])
    mismatched = [str(m.label) for m in models if toolchain not in m.objects]
    if mismatched:
        raise UserError(
            f"target {ctx.label} (toolchain {toolchain}) bundles models built for another "
            f"toolchain: {', '.join(mismatched)}",
            where=ctx.where_of("toolchain"),
            hint="give the ROM and its models the same toolchain (or set it in workspace defaults)",
        )
    declare_rom(ctx, models, toolchain=toolchain)


RULE = Rule(
    kind="n64_rom",
    doc="A ROM bundling several models that share one arena and one asset area.",
    implementation=_implementation,
    attrs={
        "models": labels_attr("the n64_model targets to bundle, run in this order",
                              provides=ModelInfo, required=True),
        **ROM_ATTRS,
    },
)
