"""`make compiled`: the mypyc flavour of the package, compiled, into build/compiled/.

    python bench/compile.py [--specs specs] [--out build/compiled]

Generates the mypyc flavour of the specs (``kafka-specgen generate --flavour mypyc``: the
same templates, with native constructors and librt reads) into
``build/compiled/kafka_messages`` and compiles every module there with mypyc (C extensions
next to the sources; an extension wins over the ``.py`` on import), then checks that each
module really imports as an extension (runtime subpackages such as ``records`` included). The
pure-Python package in ``generated/`` stays the default everywhere;
``KAFKA_MESSAGES_COMPILED=1 make test`` (see ``tests/conftest.py``) runs the tests against
this build. ``bench/run.py`` benchmarks the same build: ``bench/sides.py`` calls ``build``
below to compile the same sources under another package name (``kafka_messages_mypyc``) into
its own cache, so that the pure-Python and the compiled package can be imported side by side
in one process.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "specs"


class BuildError(Exception):
    """mypyc failed, or a module handed to it does not import as an extension."""


def mypyc_source(spec_paths: list[Path], folder: Path, package: str) -> Path:
    """Generate the mypyc flavour of ``spec_paths`` as ``folder/package``; return that
    package folder."""
    from kafka_specgen.format import write_package
    from kafka_specgen.library import generate_files
    from kafka_specgen.view_kit import Flavour

    files = generate_files(spec_paths, warn=False, flavour=Flavour.MYPYC, package=package)
    write_package(files, folder / package)
    return folder / package


def module_file(package_dir: Path, name: str) -> Path:
    """The source of module ``name`` inside the package folder: ``__init__`` is the
    package's own; a dotted name is in a subpackage (``records._batch``); a subpackage's own
    module is its ``__init__.py`` (``records``)."""
    if name == "__init__":
        return package_dir / "__init__.py"
    base = package_dir.joinpath(*name.split("."))
    return base / "__init__.py" if base.is_dir() else base.parent / f"{base.name}.py"


def package_modules(package_dir: Path) -> list[str]:
    """Every module of the package folder, named as ``module_file`` takes them."""
    names = []
    for path in package_dir.rglob("*.py"):
        parts = list(path.relative_to(package_dir).with_suffix("").parts)
        if "__pycache__" in parts:
            continue
        if parts[-1] == "__init__" and len(parts) > 1:
            parts.pop()
        names.append(".".join(parts))
    return sorted(names)


def with_imports(package_dir: Path, modules: list[str]) -> list[str]:
    """``modules`` (names inside the package) plus every package module they import, directly
    or not, plus ``__init__`` (imported with any of them) and the ``__init__`` of each
    subpackage on the way. The generated packages import each other only relatively
    (``from . import _wire``, ``from .errors import ...``, ``from .. import _crc32c``)."""

    def name_of(parts: list[str]) -> str:
        return ".".join(parts) if parts else "__init__"

    def exists(parts: list[str]) -> bool:
        return module_file(package_dir, name_of(parts)).is_file()

    seen: set[str] = set()
    todo = ["__init__", *modules]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = module_file(package_dir, name)
        parts = [] if name == "__init__" else name.split(".")
        todo += [name_of(parts[:i]) for i in range(1, len(parts))]  # its subpackages
        here = parts if path.name == "__init__.py" else parts[:-1]  # the package it is in
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or not 1 <= node.level <= len(here) + 1:
                continue
            base = here[: len(here) - node.level + 1]
            if node.module:  # from .errors import DecodeError, from ._format import Record
                base = base + node.module.split(".")
                todo += [name_of(base[:i]) for i in range(1, len(base) + 1) if exists(base[:i])]
            else:  # from . import _wire
                todo.append(name_of(base))
            # the names imported may be modules of a package: from .. import _crc32c
            todo += [name_of(base + [a.name]) for a in node.names if exists(base + [a.name])]
    return sorted(seen)


def build(source: Path, out: Path, package: str, modules: list[str] | None = None) -> list[str]:
    """Copy the generated package folder ``source`` to ``out/<package>`` and compile
    ``modules`` (names inside the package, e.g. ``_wire``, ``__init__``; default: all) there
    with mypyc, leaving the others as ``.py``. Returns the compiled modules, after checking
    in a fresh interpreter that each imports as an extension; raises ``BuildError`` if not.

    ``out`` is emptied first and must then be on ``sys.path`` to use the build (mypyc puts the
    modules' shared library there, beside the package). The generated packages use relative
    imports only, so the copy works under any package name.
    """
    if out.exists():
        shutil.rmtree(out)
    target = out / package
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd"))
    names = package_modules(target) if modules is None else sorted(modules)
    missing = [m for m in names if not module_file(target, m).is_file()]
    if missing:
        raise BuildError(f"no module(s) {', '.join(missing)} in {source}")

    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypyc",
            *[module_file(target, m).relative_to(out).as_posix() for m in names],
        ],
        cwd=out,
        capture_output=True,
        text=True,
    )
    # mypyc's C sources and objects, and mypy's cache: only the extensions are needed.
    shutil.rmtree(out / "build", ignore_errors=True)
    shutil.rmtree(out / ".mypy_cache", ignore_errors=True)
    if proc.returncode != 0:
        errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
        raise BuildError(
            "\n".join(
                [
                    *(errors or proc.stdout.splitlines()[-30:]),
                    proc.stderr[-3000:].rstrip(),
                    f"mypyc failed ({len(errors)} errors)",
                ]
            )
        )

    # Check what the build really imports: an extension where compiled, else the source.
    check = (
        "import importlib, json, sys\n"
        "pkg, names = sys.argv[1], sys.argv[2:]\n"
        "print(json.dumps({m: importlib.import_module(pkg if m == '__init__' else pkg + '.' + m)"
        ".__file__ for m in names}))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", check, package, *names],
        env=dict(os.environ, PYTHONPATH=str(out)),
        cwd=out,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise BuildError(f"the mypyc build does not import:\n{proc.stderr[-3000:]}")
    files: dict[str, str] = json.loads(proc.stdout)
    compiled = sorted(m for m, f in files.items() if f.endswith((".so", ".pyd")))
    pure = [m for m in names if m not in compiled]
    if pure:
        raise BuildError(f"not compiled, though handed to mypyc: {', '.join(pure)}")
    return compiled


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--specs", type=Path, action="append", help="default: specs/")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "compiled")
    args = ap.parse_args(argv)
    out: Path = args.out.resolve()
    specs = args.specs or [SPECS]
    source = mypyc_source(specs, out.parent / f"{out.name}-src", "kafka_messages")
    count = len(package_modules(source))
    print(f"mypyc: compiling {count} modules in {out} ...", flush=True)
    try:
        compiled = build(source, out, "kafka_messages")
    except BuildError as exc:
        print(exc, file=sys.stderr)
        return 1
    (out / "MANIFEST.json").write_text(
        json.dumps({"specs": [str(s) for s in specs], "mypyc_compiled": compiled}, indent=2) + "\n"
    )
    print(f"compiled with mypyc: {', '.join(compiled)}")
    print(f"use it: KAFKA_MESSAGES_COMPILED=1 make test, or PYTHONPATH={out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
