"""Test helpers for ``--release all``: the releases' spec sets and the union package.

The releases are the bundled spec sets of Kafka releases (``2.4.0`` ... ``4.3.1``), oldest
first, as ``--release all`` takes them (``history.all_specs``); ``trunk-2024-10`` and
kafka-python's set are not releases. ``python -m tests.support.unionpkg OUT`` writes the union package to ``OUT``
(the determinism test runs it under other hash seeds).
"""

from __future__ import annotations

import importlib
import sys
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Sequence

from kafka_specgen import history
from kafka_specgen.errors import each
from kafka_specgen.facts import build_facts, split_raws
from kafka_specgen.format import write_package
from kafka_specgen.catalog import build_catalog
from kafka_specgen.format import format_files
from kafka_specgen.library import bundled_specs
from kafka_specgen.package_views import build_views
from kafka_specgen.render import render_package
from kafka_specgen.view_kit import Flavour
from kafka_specgen.load import RawSpec, load_paths
from kafka_specgen.model import Message
from kafka_specgen.model_builder import build_messages
from kafka_specgen.render import GeneratedFile
from kafka_specgen.schema import validate_spec
from kafka_specgen.selection import Selection

Sets = tuple[tuple[str, tuple[RawSpec, ...]], ...]


@lru_cache(maxsize=None)
def release_sets() -> Sets:
    """(release name, raw specs) of every bundled release, oldest first (read once)."""
    return tuple((str(r), tuple(history.set_specs(str(r)))) for r in history.releases())


@lru_cache(maxsize=None)
def union_raws() -> tuple[RawSpec, ...]:
    """The union as ``--release all`` builds it."""
    return tuple(history.all_specs())


def messages_of(raws: Sequence[RawSpec]) -> list[Message]:
    """schema -> model, as ``library.load_specs`` runs them."""
    specs, _ = split_raws(raws)
    each(specs, validate_spec)
    return build_messages(specs)


def package_from(
    raws: Sequence[RawSpec], package: str, selection: Selection = Selection()
) -> list[GeneratedFile]:
    """catalog -> views -> render -> format on raw specs, with the bundled facts tables: the
    files of ``package``."""
    facts = build_facts(split_raws(load_paths([bundled_specs() / "facts"]))[1])
    catalog = build_catalog(selection.apply(messages_of(raws)), facts)
    return format_files(render_package(build_views(catalog, Flavour.PURE, package)))


def import_package(files: list[GeneratedFile], out_dir: Path, package: str) -> ModuleType:
    """Write ``files`` as ``package`` into ``out_dir`` and import it afresh."""
    write_package(files, out_dir / package)
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        del sys.modules[name]
    if str(out_dir) not in sys.path:
        sys.path.insert(0, str(out_dir))
    importlib.invalidate_caches()
    return importlib.import_module(package)


if __name__ == "__main__":
    write_package(package_from(union_raws(), "kafka_union"), Path(sys.argv[1]) / "kafka_union")
