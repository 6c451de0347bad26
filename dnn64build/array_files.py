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
    """``array`` if it holds real numbers (or booleans), else a UserError naming it (complex
    numbers too: casting them to a model's type would drop the imaginary part)."""
    if not (array.dtype.kind in "iuf" or array.dtype == np.bool_):
        raise UserError(f"array {name!r} holds {array.dtype} values, not real numbers",
                        where=where)
    return array


def fitting(array: np.ndarray, dtype: np.dtype, name: str, *, where: str) -> np.ndarray:
    """``array`` (real numbers), the values of graph input ``name``, as ``dtype``; integers
    outside an integer ``dtype``'s range are a UserError naming the input, never wrapped
    (300 as int8 would be 44), and so are finite numbers a float ``dtype`` would make
    infinite."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu" and array.dtype.kind in "iu" and array.size:
        info = np.iinfo(dtype)
        low, high = int(array.min()), int(array.max())
        if low < info.min or high > info.max:
            raise UserError(f"input {name!r} holds values from {low} to {high}, outside "
                            f"{dtype}'s {info.min}..{info.max}", where=where,
                            hint=f"give {dtype} values (or floats, which are quantised)")
    with np.errstate(over="ignore"):
        cast = array.astype(dtype)
    if dtype.kind == "f" and np.any(np.isinf(cast) & np.isfinite(array)):
        raise UserError(f"input {name!r} holds values beyond {dtype}'s range (magnitude "
                        f"{float(np.finfo(dtype).max):g} at most)", where=where)
    return cast
