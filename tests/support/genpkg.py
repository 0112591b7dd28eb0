"""Test helpers: generate a package from specs into a temp folder and import it."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Sequence

from kafka_specgen.library import BUNDLED_FACTS, generate_files, load_specs
from kafka_specgen.format import compare_package, write_package
from kafka_specgen.model import Message

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "specs"
GENERATED = ROOT / "generated"
#: Apache Kafka's specs, one folder per release (``KAFKA_SPECGEN_CORPORA`` moves it).
CORPORA = Path(os.environ.get("KAFKA_SPECGEN_CORPORA") or ROOT.parent / "shared" / "kafka-specs")


#: Kafka's releases in the order they were cut: trunk-2024-10 came after 3.8 and before 4.0.
RELEASES = (
    "2.4.0",
    "2.8.0",
    "3.0.0",
    "3.5.0",
    "3.8.0",
    "trunk-2024-10",
    "4.0.2",
    "4.1.2",
    "4.2.1",
    "4.3.1",
)


def corpus_folders() -> list[Path]:
    """Every corpus folder in ../shared/kafka-specs: the releases oldest first, then any
    other set (kafka-python's) by name."""
    if not CORPORA.is_dir():
        return []
    order = {name: i for i, name in enumerate(RELEASES)}
    folders = [p for p in CORPORA.iterdir() if p.is_dir()]
    return sorted(folders, key=lambda p: (order.get(p.name, len(order)), p.name))


def newest_corpus() -> Path:
    """The newest Kafka release's folder, or kafka-python's spec files when there is none."""
    releases = [p for p in corpus_folders() if p.name in RELEASES]
    return releases[-1] if releases else kafka_python_specs()


def full_version_corpus() -> Path:
    """The newest corpus that still has every version the golden captures use (Kafka 4.0
    removed Produce v0-2, Fetch v0-3, ...): trunk-2024-10, else the newest there is."""
    trunk = CORPORA / "trunk-2024-10"
    return trunk if trunk.is_dir() else newest_corpus()


def kafka_python_specs() -> Path:
    """The spec files inside the installed kafka-python (the fallback corpus)."""
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
