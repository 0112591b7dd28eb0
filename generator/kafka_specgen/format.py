"""The format stage: check the rendered files, optionally run black over them, write them.

The templates lay code out as black does (the tests hold every corpus to it), so what
render gives is final: this stage compiles each Python file, so that a template bug is a
clear error rather than a broken package, and writes the package, removing stale files.
``black=True`` also runs black (an optional dependency: ``kafka-specgen[black]``), which
then only confirms the layout; its results are cached by input.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .render import GeneratedFile

#: The line length the templates lay code out for, and black's when it runs.
LINE_LENGTH = 100


class GeneratedCodeError(Exception):
    """A rendered module is not valid Python: a bug of the templates."""


def check_one(f: GeneratedFile) -> None:
    if f.path.endswith(".py"):
        try:
            compile(f.text, f.path, "exec", dont_inherit=True)
        except SyntaxError as exc:
            raise GeneratedCodeError(
                f"generated {f.path} is not valid Python: {exc.msg} (line {exc.lineno})"
            ) from None


def black_mode() -> Any:
    import black  # optional: only --black needs it

    return black.Mode(line_length=LINE_LENGTH)


def black_one(f: GeneratedFile) -> GeneratedFile:
    """Black-format one Python file."""
    import black

    if not f.path.endswith(".py") or f.formatted:
        return f
    try:
        return GeneratedFile(f.path, black.format_str(f.text, mode=black_mode()), formatted=True)
    except black.parsing.InvalidInput as exc:
        raise GeneratedCodeError(f"generated {f.path} is not valid Python: {exc}") from exc


def cache_dir() -> Path:
    """Where the tool keeps what it can reuse between runs: generated packages, black's
    results (``KAFKA_SPECGEN_CACHE`` overrides)."""
    configured = os.environ.get("KAFKA_SPECGEN_CACHE")
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kafka-specgen"


def cache_key(f: GeneratedFile) -> str:
    """Same input text, black version and mode -> same key (so the same output)."""
    import importlib.metadata

    seed = f"{importlib.metadata.version('black')}\0{black_mode()!r}\0{f.text}"
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()


def format_files(
    files: list[GeneratedFile],
    *,
    black: bool = False,
    jobs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[GeneratedFile]:
    """Check every file, and with ``black`` run black over the Python ones. ``progress(done,
    total)`` follows black, the long part."""
    if not black:
        for f in files:
            check_one(f)
        return sorted(files, key=lambda f: f.path)
    black_mode()  # fails at once, with the name of what to install, when black is missing
    cache = cache_dir()
    done: dict[str, GeneratedFile] = {}
    todo: list[GeneratedFile] = []
    for f in files:
        if f.formatted or not f.path.endswith(".py"):
            done[f.path] = f
            continue
        cached = cache / cache_key(f)
        if cached.is_file():
            done[f.path] = GeneratedFile(f.path, cached.read_text(encoding="utf-8"), formatted=True)
        else:
            todo.append(f)
    jobs = jobs or os.cpu_count() or 1
    formatted: dict[str, GeneratedFile] = {}

    def finished(f: GeneratedFile) -> None:
        formatted[f.path] = f
        if progress is not None:
            progress(len(formatted), len(todo))

    if jobs > 1 and sum(len(f.text) for f in todo) > 500_000:
        with concurrent.futures.ProcessPoolExecutor(jobs) as pool:
            # Biggest first, so no core is left with one large file at the end.
            ordered = sorted(todo, key=lambda f: -len(f.text))
            for future in concurrent.futures.as_completed(
                [pool.submit(black_one, f) for f in ordered]
            ):
                finished(future.result())
    else:
        for f in todo:
            finished(black_one(f))
    for f in todo:
        done[f.path] = formatted[f.path]
        store(cache / cache_key(f), formatted[f.path].text)
    return sorted(done.values(), key=lambda f: f.path)


def store(path: Path, text: str) -> None:
    """Write a cache entry atomically; a cache that cannot be written is only slower."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError:
        pass


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
    # Python's own __pycache__ is left alone: it never imports a .pyc without its source.
    for path in sorted(package_dir.rglob("*")):
        rel = path.relative_to(package_dir).as_posix()
        if path.is_file() and "__pycache__" not in path.parts and rel not in wanted:
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
