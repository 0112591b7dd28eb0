"""The tool as a user installs it: the wheel built from the checkout, and fresh virtual
environments holding what a user would install (nothing editable, nothing of the
checkout on the path)."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build_wheel(out: Path) -> Path:
    """``pip wheel`` of the checkout into ``out``; returns the wheel."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(ROOT)],
        check=True,
        timeout=600,
        capture_output=True,
    )
    [built] = out.glob("kafka_specgen-*.whl")
    return built


def fresh_venv(folder: Path, *requirements: str) -> Path:
    """A new venv in ``folder`` with ``requirements`` pip-installed; returns the folder."""
    venv.create(folder, with_pip=True)
    if requirements:
        subprocess.run(
            [str(folder / "bin" / "python"), "-m", "pip", "install", "--quiet", *requirements],
            check=True,
            timeout=1200,
            capture_output=True,
        )
    return folder


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """An environment with nothing of the checkout: PATH (for Java), a home and a cache of
    its own."""
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "KAFKA_SPECGEN_CACHE": str(home / "cache"),
        **extra,
    }
