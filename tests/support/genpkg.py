"""Test helpers: generate a package from specs into a temp folder and import it."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Sequence

from kafka_specgen.library import generate_files, load_specs
from kafka_specgen.format import write_package
from kafka_specgen.model import Message

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "specs"
GENERATED = ROOT / "generated"
#: Apache Kafka's specs, one folder per release (``KAFKA_SPECGEN_CORPORA`` moves it).
CORPORA = Path(os.environ.get("KAFKA_SPECGEN_CORPORA") or ROOT.parent / "shared" / "kafka-specs")


def corpus_folders() -> list[Path]:
    """Every corpus folder in ../shared/kafka-specs, oldest first."""
    if not CORPORA.is_dir():
        return []
    return sorted(p for p in CORPORA.iterdir() if p.is_dir())


def newest_corpus() -> Path:
    """The newest corpus folder, or kafka-python's spec files when there is none."""
    folders = corpus_folders()
    return folders[-1] if folders else kafka_python_specs()


def kafka_python_specs() -> Path:
    """The spec files inside the installed kafka-python (the fallback corpus)."""
    import kafka

    return Path(kafka.__file__).parent / "protocol" / "schemas" / "resources"


def load_messages(spec_paths: Sequence[Path]) -> list[Message]:
    return load_specs(spec_paths, warn=False)[0]


def generate_package(
    spec_paths: Sequence[Path], out_dir: Path, package: str, *, formatted: bool = False
) -> ModuleType:
    """Generate ``package`` into ``out_dir`` and import it (a fresh import every time)."""
    files = generate_files(spec_paths, warn=False, formatted=formatted)
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
