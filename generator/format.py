"""The format stage: black-format the rendered files and write them, removing stale ones."""

from __future__ import annotations

import concurrent.futures
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import black

from .render import GeneratedFile

BLACK_MODE = black.Mode(line_length=100)


def format_one(f: GeneratedFile) -> GeneratedFile:
    """Black-format one Python file; a template bug surfaces here as a clear error."""
    if not f.path.endswith(".py"):
        return f
    try:
        return GeneratedFile(f.path, black.format_str(f.text, mode=BLACK_MODE))
    except black.parsing.InvalidInput as exc:
        raise RuntimeError(f"generated {f.path} is not valid Python: {exc}") from exc


def format_files(files: list[GeneratedFile], *, jobs: int | None = None) -> list[GeneratedFile]:
    """Format every file, on all cores when there is enough work (black dominates run time)."""
    jobs = jobs or os.cpu_count() or 1
    total = sum(len(f.text) for f in files)
    if jobs > 1 and total > 500_000:
        with concurrent.futures.ProcessPoolExecutor(jobs) as pool:
            # Biggest first, so no core is left with one large file at the end.
            ordered = sorted(files, key=lambda f: -len(f.text))
            formatted = list(pool.map(format_one, ordered))
    else:
        formatted = [format_one(f) for f in files]
    return sorted(formatted, key=lambda f: f.path)


@dataclass(frozen=True)
class WriteReport:
    written: list[str]
    unchanged: list[str]
    removed: list[str]


def write_package(files: list[GeneratedFile], package_dir: Path) -> WriteReport:
    """Write the package, touching only files whose bytes change; delete stale files."""
    package_dir.mkdir(parents=True, exist_ok=True)
    wanted = {f.path for f in files}
    written, unchanged, removed = [], [], []
    for f in files:
        target = package_dir / f.path
        data = f.text.encode("utf-8")
        if target.is_file() and target.read_bytes() == data:
            unchanged.append(f.path)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written.append(f.path)
    for path in sorted(package_dir.rglob("*")):
        rel = path.relative_to(package_dir).as_posix()
        if path.is_dir():
            if path.name == "__pycache__":
                shutil.rmtree(path)
            continue
        if rel not in wanted:
            path.unlink()
            removed.append(rel)
    return WriteReport(written, unchanged, removed)


def compare_package(files: list[GeneratedFile], package_dir: Path) -> list[str]:
    """The files that differ between ``files`` and what is in ``package_dir`` (for checks)."""
    wanted = {f.path: f.text.encode("utf-8") for f in files}
    differences = []
    for name, data in sorted(wanted.items()):
        target = package_dir / name
        if not target.is_file():
            differences.append(f"missing: {name}")
        elif target.read_bytes() != data:
            differences.append(f"differs: {name}")
    if package_dir.is_dir():
        for path in sorted(package_dir.rglob("*")):
            rel = path.relative_to(package_dir).as_posix()
            if path.is_file() and "__pycache__" not in path.parts and rel not in wanted:
                differences.append(f"stale: {rel}")
    return differences
