"""``n64_rom``: several models in one ROM, run one after another.

The models share one arena (sized for the largest plan, since only one runs
at a time) and one asset area holding every model's weights.
"""

from __future__ import annotations

from dnn64build.errors import UserError
from dnn64build.rule_helpers import (
    ROM_ATTRS,
    ModelInfo,
    declare_rom,
    resolve_toolchain,
)
from dnn64build.rules_api import Attr, Rule, RuleContext


def _implementation(ctx: RuleContext) -> None:
    models = ctx.deps("models")
    for text, info in zip(ctx.attrs["models"], models, strict=True):
        if not isinstance(info, ModelInfo):
            raise UserError(
                f"target {ctx.label}: {text} is not an n64_model target", where=ctx.where,
                hint="models: lists n64_model targets",
            )
    toolchain = resolve_toolchain(ctx, ctx.attrs["toolchain"])
    mismatched = [str(m.label) for m in models if toolchain not in m.objects]
    if mismatched:
        raise UserError(
            f"target {ctx.label} (toolchain {toolchain}) bundles models built for another "
            f"toolchain: {', '.join(mismatched)}",
            where=ctx.where,
            hint="give the ROM and its models the same toolchain (or set it in workspace defaults)",
        )
    declare_rom(ctx, models, toolchain=toolchain, title=ctx.attrs.get("title", ctx.label.name))


RULE = Rule(
    kind="n64_rom",
    doc="A ROM bundling several models that share one arena and one asset area.",
    implementation=_implementation,
    attrs={
        "models": Attr(
            {"type": "array", "items": {"type": "string"}, "minItems": 1, "uniqueItems": True},
            "the n64_model targets to bundle, run in this order",
            required=True,
            labels=True,
        ),
        **ROM_ATTRS,
    },
)
