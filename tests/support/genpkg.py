"""Test helpers: generate a package from specs into a temp folder and import it."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Sequence

from kafka_specgen import history
from kafka_specgen.library import BUNDLED_FACTS, extracted_bundle, generate_files, load_specs
from kafka_specgen.format import compare_package, write_package
from kafka_specgen.model import Message
from kafka_specgen.release_names import Release

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "specs"
GENERATED = ROOT / "generated"


#: Kafka's spec sets, one folder per set (``2.4.0/``, ..., ``trunk-2024-10/``,
#: ``kafka-python-3.0.12/``): the tool's bundle (``library.extracted_bundle``), or
#: ``KAFKA_SPECGEN_CORPORA`` if set.
CORPORA = Path(os.environ.get("KAFKA_SPECGEN_CORPORA") or extracted_bundle())

_BEFORE_TRUNK = [str(r) for r in history.releases() if r < Release.parse("4.0")]
#: Kafka's spec sets in the order they were cut: the releases oldest first, with
#: trunk-2024-10 (the 4.0 line in the making) after 3.9.0.
RELEASES = tuple(
    _BEFORE_TRUNK
    + ["trunk-2024-10"]
    + [str(r) for r in history.releases() if str(r) not in _BEFORE_TRUNK]
)
#: The spec set kafka-python 3.0.12 ships (a Kafka 4.x-era set, a few files edited).
KAFKA_PYTHON_SET = "kafka-python-3.0.12"


def corpus_folders() -> list[Path]:
    """Every corpus folder: the releases oldest first, then any other set (kafka-python's)
    by name."""
    order = {name: i for i, name in enumerate(RELEASES)}
    folders = [p for p in CORPORA.iterdir() if p.is_dir()]
    return sorted(folders, key=lambda p: (order.get(p.name, len(order)), p.name))


def newest_corpus() -> Path:
    """The newest Kafka release's folder."""
    return [p for p in corpus_folders() if p.name in RELEASES][-1]


def full_version_corpus() -> Path:
    """The newest corpus that still has every version the golden captures use (Kafka 4.0
    removed Produce v0-2, Fetch v0-3, ...): trunk-2024-10."""
    return CORPORA / "trunk-2024-10"


def kafka_python_specs() -> Path:
    """The spec files inside the installed kafka-python, for tests that compare with
    kafka-python itself (the same files as the ``kafka-python-3.0.12`` set)."""
    import kafka

    return Path(kafka.__file__).parent / "protocol" / "schemas" / "resources"


def stale_generated(package_dir: Path = GENERATED / "kafka_messages") -> str | None:
    """One line saying how the committed package differs from a fresh generation from
    ``specs/`` (generated in memory, ~0.5 s), or None when it is fresh."""
    differences = compare_package(generate_files([SPECS], warn=False), package_dir)
    if not differences:
        return None
    more = f" and {len(differences) - 1} more" if len(differences) > 1 else ""
    shown = package_dir.relative_to(ROOT) if package_dir.is_relative_to(ROOT) else package_dir
    return (
        f"{shown} is stale ({differences[0]}{more}, against a fresh generation from "
        "specs/): run `make generate`"
    )


def load_messages(spec_paths: Sequence[Path]) -> list[Message]:
    return load_specs(spec_paths, warn=False)[0]


def generate_package(
    spec_paths: Sequence[Path],
    out_dir: Path,
    package: str,
    *,
    facts: Path | str | None = BUNDLED_FACTS,
) -> ModuleType:
    """Generate ``package`` into ``out_dir`` and import it (a fresh import every time)."""
    files = generate_files(spec_paths, warn=False, facts=facts, package=package)
    write_package(files, out_dir / package)
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        del sys.modules[name]
    if str(out_dir) not in sys.path:
        sys.path.insert(0, str(out_dir))
    importlib.invalidate_caches()
    return importlib.import_module(package)


def import_module(package: str, module: str) -> ModuleType:
    return importlib.import_module(f"{package}.{module}")


def mypy_strict(target: str, cwd: Path, cache_dir: Path | str = "/dev/null") -> str | None:
    """Run ``mypy --strict`` on a package folder or module in ``cwd``: None if clean,
    else the tail of its report."""
    import subprocess

    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--cache-dir",
            str(cache_dir),
            target,
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if result.returncode == 0:
        return None
    return "\n".join((result.stdout + result.stderr).splitlines()[-40:])
