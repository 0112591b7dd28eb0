"""Where the tool's data packages are: the same code in a checkout and in a wheel."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def package_folder(name: str) -> Path:
    """The folder of the data package ``kafka_specgen.<name>`` (``templates``, ``specs``):
    in a checkout package-dir maps it to a top-level folder, in a wheel it sits inside."""
    spec = importlib.util.find_spec(f"{__package__}.{name}")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"kafka_specgen is installed without its {name!r} data")
    return Path(next(iter(spec.submodule_search_locations)))
