"""The ninja of the ``ninja`` Python package: where the runner finds ninja, and what the
generator records in the target index so that the runner need not look again."""

from __future__ import annotations

from pathlib import Path


def package_ninja() -> str | None:
    """The ninja executable of the ``ninja`` Python package, if it is installed."""
    try:
        import ninja
    except ImportError:
        return None
    candidate = Path(ninja.BIN_DIR) / "ninja"
    return str(candidate) if candidate.exists() else None
