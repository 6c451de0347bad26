"""Pictures of a plan (a plan.json dict): an ASCII timeline and an SVG.

ASCII, as TFLite Micro prints its plans: one line per step, the arena scaled
to ``width`` columns, each buffer drawn with its letter, ``.`` for free bytes
and ``!`` where two buffers of different groups claim the same column (a
scaled picture: a shared column is not always a real overlap; the checker
decides that). Alias members are drawn as their group root.

SVG: steps left to right, offsets bottom to top, one box per group root with
its members as dashed outlines, the lower bound as a dashed line.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from typing import Any
from xml.sax.saxutils import escape

_LETTERS = string.ascii_uppercase + string.ascii_lowercase + string.digits
_PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
            "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")


def _roots(plan: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [b for b in plan["buffers"] if "alias_of" not in b]


def _steps(plan: Mapping[str, Any]) -> int:
    schedule = plan.get("schedule") or []
    return max([len(schedule)] + [b["last"] + 1 for b in plan["buffers"]])


def render_ascii(plan: Mapping[str, Any], width: int = 64) -> str:
    arena = max(plan["arena_bytes"], 1)
    roots = _roots(plan)
    letter = {b["name"]: _LETTERS[k % len(_LETTERS)] for k, b in enumerate(roots)}
    schedule: Sequence[str] = plan.get("schedule") or []
    label_width = max([len(s) for s in schedule] + [4])
    lines = [f"arena {plan['arena_bytes']} bytes, lower bound "
             f"{plan.get('lower_bound_bytes', '?')} bytes, 1 column = {arena / width:.1f} bytes"]
    for step in range(_steps(plan)):
        row = ["."] * width
        live = 0
        for b in roots:
            if not b["first"] <= step <= b["last"] or not b["size"]:
                continue
            live += b["size"]
            lo = b["offset"] * width // arena
            hi = max(lo + 1, -(-(b["offset"] + b["size"]) * width // arena))
            for col in range(lo, min(hi, width)):
                row[col] = letter[b["name"]] if row[col] == "." else "!"
        node = schedule[step] if step < len(schedule) else ""
        lines.append(f"{step:4d} {node:<{label_width}} |{''.join(row)}| {live:8d}")
    lines.append("")
    for b in roots:
        members = [m["name"] for m in plan["buffers"] if m.get("alias_of") == b["name"]]
        shared = f" (shared with {', '.join(members)})" if members else ""
        lines.append(f"  {letter[b['name']]}: {b['name']} {b['size']} bytes at "
                     f"{b['offset']}, steps {b['first']}..{b['last']}{shared}")
    return "\n".join(lines) + "\n"


def render_svg(plan: Mapping[str, Any], width: int = 800, height: int = 480) -> str:
    """A standalone SVG document of the plan."""
    margin_left, margin_bottom, margin_top = 70, 40, 30
    plot_w, plot_h = width - margin_left - 10, height - margin_bottom - margin_top
    steps = max(_steps(plan), 1)
    arena = max(plan["arena_bytes"], 1)

    def x(step: float) -> float:
        return margin_left + step * plot_w / steps

    def y(offset: float) -> float:
        return margin_top + plot_h - offset * plot_h / arena

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
        f'<text x="{margin_left}" y="18" font-size="13">arena {plan["arena_bytes"]} bytes, '
        f'lower bound {plan.get("lower_bound_bytes", "?")} bytes</text>',
        f'<rect x="{margin_left}" y="{margin_top}" width="{plot_w}" height="{plot_h}" '
        f'fill="none" stroke="#333"/>',
    ]
    for k, b in enumerate(_roots(plan)):
        bx, bw = x(b["first"]), x(b["last"] + 1) - x(b["first"])
        by, bh = y(b["offset"] + b["size"]), y(b["offset"]) - y(b["offset"] + b["size"])
        name = escape(b["name"])
        out.append(
            f'<rect x="{bx:.1f}" y="{by:.1f}" width="{bw:.1f}" height="{bh:.1f}" '
            f'fill="{_PALETTE[k % len(_PALETTE)]}" fill-opacity="0.75" stroke="#222">'
            f'<title>{name}: {b["size"]} bytes at {b["offset"]}, '
            f'steps {b["first"]}..{b["last"]}</title></rect>'
        )
        if bh >= 12 and bw >= 6 * len(b["name"]):
            out.append(f'<text x="{bx + 3:.1f}" y="{by + 11:.1f}">{name}</text>')
    for m in plan["buffers"]:
        if "alias_of" in m:
            mx, mw = x(m["first"]), x(m["last"] + 1) - x(m["first"])
            my, mh = y(m["offset"] + m["size"]), y(m["offset"]) - y(m["offset"] + m["size"])
            out.append(
                f'<rect x="{mx:.1f}" y="{my:.1f}" width="{mw:.1f}" height="{mh:.1f}" '
                f'fill="none" stroke="#000" stroke-dasharray="3,2">'
                f'<title>{escape(m["name"])} (in {escape(m["alias_of"])} at +'
                f'{m["alias_offset"]})</title></rect>'
            )
    bound = plan.get("lower_bound_bytes")
    if isinstance(bound, int):
        out.append(f'<line x1="{margin_left}" x2="{margin_left + plot_w}" y1="{y(bound):.1f}" '
                   f'y2="{y(bound):.1f}" stroke="#c00" stroke-dasharray="6,3"/>')
    for frac in (0, 0.25, 0.5, 0.75, 1):
        out.append(f'<text x="{margin_left - 5}" y="{y(arena * frac) + 4:.1f}" '
                   f'text-anchor="end">{int(arena * frac)}</text>')
    out.append(f'<text x="{margin_left + plot_w / 2:.1f}" y="{height - 10}" '
               f'text-anchor="middle">step (0..{steps - 1})</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
