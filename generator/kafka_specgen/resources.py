"""Where the tool's data folders are: the same code in a checkout and in a wheel."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def package_folder(name: str) -> Path:
    """The data folder ``name`` (``templates``, ``specs``): inside the package in a wheel,
    a top-level folder beside ``generator/`` in a checkout."""
    for folder in (_PACKAGE / name, _PACKAGE.parent.parent / name):
        if folder.is_dir():
            return folder
    raise RuntimeError(f"kafka_specgen is installed without its {name!r} data")
