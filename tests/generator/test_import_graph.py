"""The tool's imports run one way: no cycle, package ``__init__``s included. And the
benchmarks (``bench/``) stand on their own: they import nothing from ``tests/``.

``python -m tests.support.import_graph`` prints the picture (floors, any cycle, imports
inside functions).
"""

from __future__ import annotations

from pathlib import Path

from tests.support.import_graph import ROOT, TOOL, back_up, cycles, floors, imports, imports_of


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "pkg"


def test_the_checker_finds_cycles_of_every_kind(tmp_path: Path) -> None:
    package = write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            # a pair, one side only for type checkers
            "pkg/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n",
            "pkg/b.py": "from . import a\n",
            # a package __init__ and its submodule, one side inside a function
            "pkg/sub/__init__.py": "def f():\n    from .leaf import g\n",
            "pkg/sub/leaf.py": "from . import f\n",
            # no cycle: a submodule imported by name from its package
            "pkg/c.py": "from .sub import leaf\nimport pkg.a\n",
        },
    )
    found = imports(package)
    assert cycles(found) == [["pkg.a", "pkg.b"], ["pkg.sub", "pkg.sub.leaf"]]
    assert {(i.importer, i.imported) for i in back_up(found)} == {
        ("pkg.a", "pkg.b"),
        ("pkg.b", "pkg.a"),
        ("pkg.sub", "pkg.sub.leaf"),
        ("pkg.sub.leaf", "pkg.sub"),
    }
    assert floors(found)["pkg.c"] > floors(found)["pkg.sub.leaf"]


def test_the_tool_has_no_import_cycle() -> None:
    found = imports(TOOL)
    assert cycles(found) == []
    assert back_up(found) == []


def test_the_checker_finds_every_import_of_a_package(tmp_path: Path) -> None:
    folder = write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "import tests.support.genpkg\nfrom tests import x\n",
            "pkg/b.py": "def f():\n    from tests.support.peers import Kio\n",
            "pkg/c.py": "import importlib\nm = importlib.import_module('tests.runtime.t')\n",
            "pkg/d.py": "__import__('tests')\n",
            # not the package: a name that only starts alike, the folder's own modules
            "pkg/e.py": "import testsuite\nfrom . import a\nfrom pkg.tests import y\n",
        },
    )
    found = [(i.importer, i.imported, i.line, i.lazy) for i in imports_of(folder, "tests")]
    assert found == [
        ("pkg.a", "tests", 2, False),
        ("pkg.a", "tests.support.genpkg", 1, False),
        ("pkg.b", "tests.support.peers", 2, True),
        ("pkg.c", "tests.runtime.t", 2, False),
        ("pkg.d", "tests", 1, False),
    ]


def test_bench_imports_nothing_from_tests() -> None:
    bench = ROOT / "bench"
    assert imports_of(bench, "bench") and imports_of(bench, "kafka_specgen")  # it reads them
    found = [f"{i.importer} line {i.line}: {i.imported}" for i in imports_of(bench, "tests")]
    assert found == [], "bench/ must not import from tests/:\n" + "\n".join(found)
