"""The one comparison of a program's outputs with a reference, for ``run`` (vs the
reference executor, and a ROM vs the host build) and ``test`` (also vs expected outputs).

A value a float cannot order is never lost: NaN or an infinity on one side only is a
mismatch (``max(worst, nan)`` keeps ``worst``, which once let an output of NaNs pass as
"bit-exact"); the same infinity or a NaN on both sides is equal. An integer output is
compared by value, so an expected 300 is no int8 44.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

Outputs = Mapping[str, np.ndarray]


def compare_outputs(got: Sequence[Outputs], want: Sequence[Outputs], tolerance: float,
                    exact: set[str]) -> str:
    """'match (...)' or 'MISMATCH (...)' over every sample and output of ``got``: equal
    values for the outputs named in ``exact``, else a max error within ``tolerance`` of the
    reference's largest magnitude."""
    worst = 0.0
    for got_sample, want_sample in zip(got, want, strict=True):
        for name, value in got_sample.items():
            if name not in want_sample:
                return f"MISMATCH (the reference has no output {name!r})"
            ref = np.asarray(want_sample[name])
            if ref.size != value.size:
                return (f"MISMATCH (output {name!r} has shape {list(value.shape)}, the "
                        f"reference {list(ref.shape)})")
            ref = ref.reshape(value.shape)
            v64, r64 = value.astype(np.float64), ref.astype(np.float64)
            finite = np.isfinite(v64) & np.isfinite(r64)
            unequal = ~finite & (v64 != r64) & ~(np.isnan(v64) & np.isnan(r64))
            if unequal.any():
                at = np.argwhere(unequal)[0]
                return (f"MISMATCH (output {name!r}: {int(unequal.sum())} value(s) NaN or "
                        f"infinite on one side only, first at {at.tolist()}: "
                        f"{v64[tuple(at)]:g} vs {r64[tuple(at)]:g})")
            err = float(np.abs(v64[finite] - r64[finite]).max(initial=0.0))
            if name in exact and not np.array_equal(value, _as_type(ref, value.dtype),
                                                    equal_nan=True):
                return f"MISMATCH (output {name!r} is not bit-exact: differs by up to {err:g})"
            scale = float(np.abs(r64[finite]).max(initial=0.0))
            worst = max(worst, err / max(scale, 1e-12))
    if worst > tolerance:
        return f"MISMATCH (max error {worst:.3g} of the output scale > {tolerance:g})"
    return "match (bit-exact)" if worst == 0 else f"match (max error {worst:.3g} of output scale)"


def _as_type(ref: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The reference as the output's type: a float reference rounds to a float output's
    precision; an integer output is compared with the reference's own values (a cast would
    wrap 300 to 44)."""
    return ref.astype(dtype) if np.issubdtype(dtype, np.floating) else ref
