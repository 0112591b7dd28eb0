"""The format stage: check the rendered files, optionally run black over them, write them.

The templates lay code out as black does (the tests hold every corpus to it), so what
render gives is final: this stage compiles each Python file, so that a template bug is a
clear error rather than a broken package, and writes the package. ``black=True`` also runs
black (an optional dependency: ``kafka-specgen[black]``), which then only confirms the
layout; its results are cached by input.

Writing is safe wherever it is pointed: it replaces or deletes only files whose first line
says this tool generated them for this package, never writes through a symbolic link, and
refuses a folder of other files unless forced (``write_package``).
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import keyword
import os
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Callable

from .headers import header_package
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


# --- writing the package ------------------------------------------------------------------


class UnsafeTargetError(Exception):
    """The package cannot be written where asked without harm: one line says why."""


def package_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a generated package, or None: it must be an ASCII Python
    identifier that is neither a keyword nor a standard-library module (which it would
    shadow for every import on the same path)."""
    if not (name.isascii() and name.isidentifier()):
        return "is not an ASCII Python identifier"
    if keyword.iskeyword(name):
        return "is a Python keyword"
    if name in sys.stdlib_module_names:
        return f"would shadow the standard library's {name} module"
    return None


@dataclass(frozen=True)
class Survey:
    """What a package folder holds, by whether this tool generated it for this package."""

    ours: dict[str, Path] = field(default_factory=dict)
    """Regular files whose first line says so: these may be replaced or deleted."""
    others: dict[str, Path] = field(default_factory=dict)
    """Everything else (files without the header, symbolic links, fifos, ...): left alone."""


#: The most of a file read to find its first line.
HEADER_BYTES = 512


def survey(package_dir: Path, package: str) -> Survey:
    """Classify every entry under ``package_dir`` (bytecode caches aside), following no
    symbolic link and opening nothing but regular files."""
    found = Survey()
    if not package_dir.is_dir() or package_dir.is_symlink():
        return found
    for folder, dirs, names in os.walk(package_dir):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in [d for d in dirs if (here / d).is_symlink()]:
            found.others[(here / name).relative_to(package_dir).as_posix()] = here / name
        for name in sorted(names):
            path = here / name
            rel = path.relative_to(package_dir).as_posix()
            mode = path.lstat().st_mode
            if stat.S_ISREG(mode) and header_package(first_line(path)) in (package, ""):
                found.ours[rel] = path
            else:
                found.others[rel] = path
    return found


def first_line(path: Path) -> str:
    with open(path, "rb") as stream:
        head = stream.read(HEADER_BYTES)
    return head.split(b"\n", 1)[0].decode("utf-8", errors="replace")


def check_target(package_dir: Path, paths: list[str]) -> None:
    """Refuse a package folder, or a path to write inside it, that is or passes through a
    symbolic link or is not what it must be (a folder; a regular file)."""
    if package_dir.is_symlink():
        raise UnsafeTargetError(
            f"{package_dir} is a symbolic link: kafka-specgen never writes through one "
            "(remove it, or point --out at the folder it links to)"
        )
    for parent in (package_dir, *package_dir.parents):
        if parent.exists():
            if not parent.is_dir():
                raise UnsafeTargetError(f"{parent} is not a folder")
            break
    for path in paths:
        here = package_dir
        parts = PurePosixPath(path).parts
        for i, part in enumerate(parts):
            here = here / part
            if here.is_symlink():
                raise UnsafeTargetError(
                    f"{here} is a symbolic link: kafka-specgen never writes through one "
                    "(remove it)"
                )
            if not here.exists():
                break
            last = i == len(parts) - 1
            if not last and not here.is_dir():
                raise UnsafeTargetError(f"{here} is not a folder")
            if last and not here.is_file():
                raise UnsafeTargetError(f"{here} is not a regular file")


@dataclass(frozen=True)
class WriteReport:
    written: list[str]
    unchanged: list[str]
    removed: list[str]
    """Stale files of this package (generated by this tool for it, no longer generated)."""
    kept: list[str] = field(default_factory=list)
    """Files of others in the folder, left alone."""


def write_package(
    files: list[GeneratedFile], package_dir: Path, *, force: bool = False
) -> WriteReport:
    """Write the package ``package_dir.name`` into ``package_dir``, touching only files
    whose bytes change, and delete the stale files of an earlier generation.

    Safe wherever it is pointed (``UnsafeTargetError`` otherwise, before anything is
    written): it replaces or deletes only files whose first line says kafka-specgen
    generated them for this package (or, from versions that named no package, generated
    them at all); it never writes through a symbolic link nor follows one; a folder that
    holds other files and none of this package's is refused, and so is a file of others
    where a generated file goes. ``force`` writes anyway: generated files replace the
    others' files of the same name, and nothing of theirs is ever deleted.
    """
    package = package_dir.name
    problem = package_name_problem(package)
    if problem is not None:
        raise UnsafeTargetError(f"package name {package!r} {problem}")
    for f in files:
        named = header_package(f.text.split("\n", 1)[0])
        if named not in (None, package):
            raise ValueError(
                f"{f.path} was generated for package {named!r}, not {package!r}: pass "
                f"package={package!r} to generate_files"
            )
    wanted = {f.path: f.text.encode("utf-8") for f in files}
    check_target(package_dir, sorted(wanted))
    found = survey(package_dir, package)
    # A file of others that already holds exactly what would be written loses nothing.
    others = sorted(
        rel
        for rel, path in found.others.items()
        if not (rel in wanted and path.is_file() and path.read_bytes() == wanted[rel])
    )
    if others and not found.ours and not force:
        raise UnsafeTargetError(
            f"{package_dir} holds files kafka-specgen did not generate for package {package} "
            f"({others[0]}{', ...' if len(others) > 1 else ''}): generate into a new or empty "
            "folder, or pass --force to write beside them (none is deleted)"
        )
    replaced = [rel for rel in others if rel in wanted]
    if replaced and not force:
        raise UnsafeTargetError(
            f"{package_dir / replaced[0]} was not generated by kafka-specgen for package "
            f"{package}: move it away, or pass --force to replace it"
        )
    package_dir.mkdir(parents=True, exist_ok=True)
    written, unchanged = [], []
    for rel, data in wanted.items():
        target = package_dir / rel
        if target.is_file() and target.read_bytes() == data:
            unchanged.append(rel)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        write_file(target, data)
        written.append(rel)
    removed = []
    for rel, path in sorted(found.ours.items()):
        if rel not in wanted:
            path.unlink()
            removed.append(rel)
    kept = sorted(rel for rel in found.others if rel not in wanted)
    return WriteReport(written, unchanged, removed, kept)


def write_file(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target``, never through a symbolic link (one put there after the
    checks makes this fail rather than write elsewhere)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(os.open(target, flags, 0o666), "wb") as stream:
        stream.write(data)


def compare_package(files: list[GeneratedFile], package_dir: Path) -> list[str]:
    """What ``write_package`` would change in ``package_dir`` (for checks): each missing,
    differing and stale file; files of others it would leave alone are not differences."""
    wanted = {f.path: f.text.encode("utf-8") for f in files}
    found = survey(package_dir, package_dir.name)
    differences = []
    for rel, data in sorted(wanted.items()):
        target = package_dir / rel
        path = PurePosixPath(rel)
        links = [package_dir / path.parents[i] for i in range(len(path.parts))]
        if any(p.is_symlink() for p in [target, *links]) or (
            target.exists() and not target.is_file()
        ):
            differences.append(f"differs: {rel} (a symbolic link or not a regular file)")
        elif not target.is_file():
            differences.append(f"missing: {rel}")
        elif target.read_bytes() != data:
            differences.append(f"differs: {rel}")
    differences += [f"stale: {rel}" for rel in sorted(found.ours) if rel not in wanted]
    return differences
