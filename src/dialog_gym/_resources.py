"""Locate the data folders (`envs/`, `personas/`) in a wheel install and in a source checkout."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


@lru_cache(maxsize=None)
def data_dir(name: str) -> Path:
    """Return the folder holding the bundled `name` data (`"envs"` or `"personas"`).

    A wheel carries them inside the package (`dialog_gym/_data/NAME`); an editable install
    or a plain checkout reads the top-level folder of the repository.
    """
    for candidate in (_PACKAGE_DIR / "_data" / name, _PACKAGE_DIR.parents[1] / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"dialog-gym's bundled {name!r} folder is missing (looked in {_PACKAGE_DIR / '_data'} "
        f"and {_PACKAGE_DIR.parents[1]}); reinstall the package"
    )
