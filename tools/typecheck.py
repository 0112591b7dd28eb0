"""``make lint``'s type check: mypy --strict on the tool, the pipeline and the runtime.

mypy cannot follow setuptools' package-dir mapping, so this builds the installed layout
under ``build/lint/`` from symbolic links (``kafka_specgen`` = ``generator/``, with
``pipeline/`` and ``templates/`` inside it) and checks that. The runtime sources
(``templates/runtime``) are checked as a package of their own: beside them are linked the
modules that ``specs/`` renders (``generated/kafka_messages``), which some of them import.
mypy reports paths inside ``build/lint``; each one is a link to the file to edit.

    python tools/typecheck.py [mypy options]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "build" / "lint"


def link(target: Path, link_path: Path) -> None:
    link_path.parent.mkdir(parents=True, exist_ok=True)
    link_path.symlink_to(os.path.relpath(target, link_path.parent))


def build_tree() -> Path:
    shutil.rmtree(TREE, ignore_errors=True)
    package = TREE / "kafka_specgen"
    for path in sorted((ROOT / "generator").iterdir()):
        if path.name != "__pycache__":
            link(path, package / path.name)
    link(ROOT / "pipeline", package / "pipeline")
    link(ROOT / "templates" / "__init__.py", package / "templates" / "__init__.py")
    runtime = package / "templates" / "runtime"
    sources = sorted((ROOT / "templates" / "runtime").glob("*.py"))
    for path in sources:
        link(path, runtime / path.name)
    names = {path.name for path in sources}
    for path in sorted((ROOT / "generated" / "kafka_messages").glob("*.py")):
        if path.name not in names:  # the rendered modules the runtime imports
            link(path, runtime / path.name)
    return TREE


def main() -> int:
    tree = build_tree()
    env = {**os.environ, "MYPYPATH": str(tree)}
    status = 0
    for target in (["-p", "kafka_specgen"], [str(ROOT / "tools")]):
        command = [sys.executable, "-m", "mypy", "--strict", *sys.argv[1:], *target]
        status |= subprocess.run(command, cwd=ROOT, env=env, check=False).returncode
    return status


if __name__ == "__main__":
    sys.exit(main())
