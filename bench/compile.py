"""`make compiled`: the mypyc flavour of the package, compiled, into build/compiled/.

    python bench/compile.py [--specs specs] [--out build/compiled]

Generates the mypyc flavour of the specs (``kafka-specgen generate --flavour mypyc``: the
same templates, with native constructors and librt reads) into
``build/compiled/kafka_messages`` and compiles every module there with mypyc (C extensions
next to the sources; an extension wins over the ``.py`` on import), then checks that each
module really imports as an extension. The pure-Python package in ``generated/`` stays the
default everywhere;
``KAFKA_MESSAGES_COMPILED=1 make test`` (see ``tests/conftest.py``) runs the tests against
this build. ``bench/run.py`` benchmarks the same build: it calls ``build`` below to compile
the same sources under another package name (``kafka_messages_mypyc``) into its own cache, so
that the pure-Python and the compiled package can be imported side by side in one process.
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
    """Generate the mypyc flavour of ``spec_paths`` as ``folder/package`` (unformatted:
    nobody reads it but mypyc) and return that package folder."""
    from kafka_specgen.format import write_package
    from kafka_specgen.library import generate_files
    from kafka_specgen.views import Flavour

    files = generate_files(spec_paths, warn=False, formatted=False, flavour=Flavour.MYPYC)
    write_package(files, folder / package)
    return folder / package


def with_imports(package_dir: Path, modules: list[str]) -> list[str]:
    """``modules`` (names inside the package) plus every package module they import, directly
    or not, plus ``__init__`` (imported with any of them). The generated packages import
    each other only relatively (``from . import _wire``, ``from .errors import ...``)."""
    seen = {"__init__"}
    todo = list(modules)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        tree = ast.parse((package_dir / f"{name}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or node.level != 1:
                continue
            if node.module:  # from .errors import DecodeError
                todo.append(node.module.split(".")[0])
            else:  # from . import _wire
                todo += [a.name for a in node.names if (package_dir / f"{a.name}.py").is_file()]
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
    names = sorted(p.stem for p in target.glob("*.py")) if modules is None else sorted(modules)
    missing = [m for m in names if not (target / f"{m}.py").is_file()]
    if missing:
        raise BuildError(f"no module(s) {', '.join(missing)} in {source}")

    proc = subprocess.run(
        [sys.executable, "-m", "mypyc", *[f"{package}/{m}.py" for m in names]],
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
    count = len(list(source.glob("*.py")))
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
