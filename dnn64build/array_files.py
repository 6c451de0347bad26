"""The user's array files (.npz archives, .npy arrays): read them, or say cleanly why not.

Calibration and evaluation sets, ``test:`` data and ``run --input`` all come from
the user; a file that is not what its name says, holds pickled objects or holds
strings is a UserError naming the file, never a traceback.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from dnn64build.errors import UserError

_HINT = "write it with numpy.savez(path, name=array, ...)"


def read_npz(path: Path, *, where: str | None = None) -> dict[str, np.ndarray]:
    """Every array of the .npz at ``path`` by name; ``where`` names it in errors."""
    where = where or str(path)
    if not path.is_file():
        raise UserError("file not found", where=where)
    if not zipfile.is_zipfile(path):
        raise UserError("not an .npz archive (a zip of .npy arrays)", where=where, hint=_HINT)
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise UserError(f"cannot read the .npz archive: {exc}", where=where, hint=_HINT) from exc


def read_npy(path: Path, *, where: str | None = None) -> np.ndarray:
    """The one array of the .npy at ``path``."""
    where = where or str(path)
    if not path.is_file():
        raise UserError("file not found", where=where)
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise UserError(f"not a readable .npy array: {exc}", where=where,
                        hint="write it with numpy.save(path, array)") from exc


def numeric(array: np.ndarray, name: str, *, where: str) -> np.ndarray:
    """``array`` if it holds numbers (or booleans), else a UserError naming it."""
    if not (np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_):
        raise UserError(f"array {name!r} holds {array.dtype} values, not numbers", where=where)
    return array


def float32_input(value: np.ndarray, name: str, where: str) -> np.ndarray:
    """A graph input's values as float32; UserError if float64 values overflow float32
    (the conversion would change their meaning, not just round them)."""
    value = np.asarray(value)
    with np.errstate(over="ignore"):  # an overflow is the error below
        converted = value.astype(np.float32)
    overflow = np.isfinite(value) & ~np.isfinite(converted)
    if overflow.any():
        raise UserError(f"input {name!r}: float64 values up to "
                        f"{float(np.abs(value[overflow]).max()):.3g} are outside the float32 "
                        "range the model runs in", where=where,
                        hint="scale the input into float32's range (|x| < 3.4e38)")
    return converted
