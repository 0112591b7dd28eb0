"""`make compiled`: build the generated package with mypyc, into build/compiled/ (issue 6).

    python bench/compile.py [--all] [--out build/compiled]

Copies ``generated/kafka_messages`` unchanged to ``build/compiled/kafka_messages`` and compiles
its modules there with mypyc (C extensions next to the sources; an extension wins over the
``.py`` on import). The pure-Python package in ``generated/`` stays the default everywhere;
``KAFKA_MESSAGES_COMPILED=1 make test`` (see ``tests/conftest.py``) runs the tests against
this build, and ``bench/run.py --compiled`` benchmarks it.

mypyc rejects class definitions nested in a class body ("Unsupported statement in class
body"), and every API module nests its struct classes in the message class (e.g.
``MetadataResponse.MetadataResponsePartition``). Those modules are therefore left as pure
Python in the build; so is ``headers``, which mypyc compiles but whose decoders then fail:
they build instances with ``object.__new__(cls)`` (skipping ``__init__``), which a native class
refuses ("object.__new__(RequestHeader) is not safe, use RequestHeader.__new__()"). The others
(``_wire``, ``errors``, ``framing``, ``registry``, ...) are compiled: a partial build, reported
as such and written to ``build/compiled/MANIFEST.json``.
``--all`` hands every module to mypyc anyway and fails with mypyc's own errors.
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

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "generated" / "kafka_messages"


def nested_classes(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{outer.name}.{inner.name}"
        for outer in ast.walk(tree)
        if isinstance(outer, ast.ClassDef)
        for inner in outer.body
        if isinstance(inner, ast.ClassDef)
    ]


def builds_without_init(path: Path) -> bool:
    """Whether the module makes instances with ``object.__new__`` (decoders skip __init__),
    which a mypyc native class refuses at run time ("object.__new__(X) is not safe")."""
    return "object.__new__" in path.read_text(encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--all",
        action="store_true",
        help="give every module to mypyc, even those it is known to reject",
    )
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "compiled")
    args = ap.parse_args(argv)
    out: Path = args.out.resolve()
    package = out / "kafka_messages"
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(SOURCE, package, ignore=shutil.ignore_patterns("__pycache__", "*.so"))

    compile_, pure = [], {}
    for path in sorted(package.glob("*.py")):
        nested = nested_classes(path)
        if nested and not args.all:
            pure[path.stem] = (
                f"mypyc: 'Unsupported statement in class body' (nested classes "
                f"{', '.join(nested[:3])}{', ...' if len(nested) > 3 else ''})"
            )
        elif builds_without_init(path) and not args.all:
            pure[path.stem] = (
                "compiles, but its decoders build instances with object.__new__"
                ", which mypyc's native classes refuse at run time"
            )
        else:
            compile_.append(path)
    print(f"mypyc: compiling {len(compile_)} modules in {out} ...", flush=True)
    proc = subprocess.run(
        [sys.executable, "-m", "mypyc", *[str(p.relative_to(out)) for p in compile_]],
        cwd=out,
        capture_output=True,
        text=True,
    )
    shutil.rmtree(out / "build", ignore_errors=True)  # mypyc's C sources and objects
    if proc.returncode != 0:
        errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
        print("\n".join(errors or proc.stdout.splitlines()[-30:]), file=sys.stderr)
        print(proc.stderr[-3000:], file=sys.stderr)
        print(f"mypyc failed ({len(errors)} errors)", file=sys.stderr)
        return 1

    # Check what the build really imports: extensions where compiled, sources elsewhere.
    check = (
        "import importlib, json, kafka_messages, pkgutil\n"
        "mods = ['__init__'] + [m.name for m in pkgutil.iter_modules(kafka_messages.__path__)]\n"
        "print(json.dumps({m: importlib.import_module('kafka_messages' + ('' if m == '__init__'"
        " else '.' + m)).__file__ for m in mods}))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(out))
    files = json.loads(
        subprocess.run(
            [sys.executable, "-c", check],
            env=env,
            cwd=out,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    compiled = sorted(m for m, f in files.items() if f.endswith((".so", ".pyd")))
    manifest = {
        "source": str(SOURCE.relative_to(ROOT)),
        "mypyc_compiled": compiled,
        "pure_python": pure,
        "partial": bool(pure),
    }
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"compiled with mypyc: {', '.join(compiled)}")
    if pure:
        print("left as pure Python (mypyc cannot compile them unchanged):")
        for name, why in pure.items():
            print(f"  {name}: {why}")
        print("PARTIAL BUILD: the codecs of the API modules above still run as Python.")
    print(f"use it: KAFKA_MESSAGES_COMPILED=1 make test, or PYTHONPATH={out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
