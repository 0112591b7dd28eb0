"""The vendoring contract: the generated package imports only the stdlib and itself.

Checked on the committed ``generated/kafka_messages`` and on a package generated from a
full corpus: every import is relative or of a top-level stdlib module, nothing imports
``generator``, ``py.typed`` ships, and the folder works when copied into another package.
"""

from __future__ import annotations

import ast
import importlib
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support import genpkg

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "generated" / "kafka_messages"


def corpus_specs() -> Path:
    return genpkg.corpus_folders()[-1]


@pytest.fixture(scope="module")
def corpus_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("contract")
    genpkg.generate_package([corpus_specs()], out, "contract_corpus")
    return out / "contract_corpus"


def bad_imports(package: Path) -> list[str]:
    """Every import in ``package`` that is neither relative nor of the standard library."""
    problems: list[str] = []
    files = sorted(package.rglob("*.py"))
    assert files, f"no Python files in {package}"
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level >= 1:
                    continue
                names = [node.module or ""]
            for name in names:
                top = name.split(".")[0]
                if top in ("generator", "kafka_specgen") or top not in sys.stdlib_module_names:
                    problems.append(f"{path.name}:{getattr(node, 'lineno', 0)}: import {name}")
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "__import__":
                problems.append(f"{path.name}:{getattr(node, 'lineno', 0)}: dynamic __import__")
    return problems


def test_bad_imports_detector_works(tmp_path: Path) -> None:
    """The checker itself must flag third-party, absolute-self and generator imports."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text(
        "import json\nfrom . import b\nimport jinja2\nfrom generator.model import Field\n"
        "from pkg import b\n",
        encoding="utf-8",
    )
    found = bad_imports(pkg)
    assert len(found) == 3, found
    assert any("jinja2" in f for f in found)
    assert any("generator.model" in f for f in found)
    assert any("import pkg" in f for f in found)


@pytest.mark.parametrize("which", ["committed", "corpus"])
def test_imports_only_stdlib_and_itself(which: str, corpus_package: Path) -> None:
    package = COMMITTED if which == "committed" else corpus_package
    assert bad_imports(package) == []


@pytest.mark.parametrize("which", ["committed", "corpus"])
def test_py_typed_ships(which: str, corpus_package: Path) -> None:
    package = COMMITTED if which == "committed" else corpus_package
    assert (package / "py.typed").is_file()
    assert (package / "__init__.py").is_file()


def vendor(package: Path, tmp_path: Path) -> Path:
    lib = tmp_path / "mylib"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text("", encoding="utf-8")
    shutil.copytree(package, lib / "_kafka", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


VENDORED_SCRIPT = textwrap.dedent("""
    import sys
    from mylib._kafka import metadata
    from mylib._kafka.metadata import MetadataRequest, MetadataRequestTopic

    request = MetadataRequest(
        topics=[MetadataRequestTopic(name="orders")],
        allow_auto_topic_creation=False,
    )
    for version in range(MetadataRequest.MIN_VERSION, MetadataRequest.MAX_VERSION + 1):
        if version < 4:
            request.allow_auto_topic_creation = True
        else:
            request.allow_auto_topic_creation = False
        data = request.encode(version)
        assert MetadataRequest.decode(data, version) == request, version
    bad = [name for name in sys.modules
           if name.split(".")[0] in ("kafka_messages", "generator", "kafka_specgen", "jinja2", "black")]
    assert not bad, bad
    assert MetadataRequest.__module__ == "mylib._kafka.metadata"
    print("ok", MetadataRequest.MAX_VERSION)
    """)


@pytest.mark.parametrize("which", ["committed", "corpus"])
def test_copied_into_another_package_works(
    which: str, corpus_package: Path, tmp_path: Path
) -> None:
    package = COMMITTED if which == "committed" else corpus_package
    root = vendor(package, tmp_path)
    # A clean interpreter: no repo on the path, so nothing but the copy can be imported.
    result = subprocess.run(
        [
            sys.executable,
            "-I",
            "-c",
            f"import sys; sys.path.insert(0, {str(root)!r})\n" + VENDORED_SCRIPT,
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok ")


def test_copied_package_imports_every_module_in_process(
    corpus_package: Path, tmp_path: Path
) -> None:
    root = vendor(corpus_package, tmp_path / "v")
    sys.path.insert(0, str(root))
    try:
        modules = sorted(p.stem for p in (root / "mylib" / "_kafka").glob("*.py"))
        for name in modules:
            importlib.import_module(f"mylib._kafka.{name}")
        metadata = importlib.import_module("mylib._kafka.metadata")
        request = metadata.MetadataRequest(topics=[metadata.MetadataRequestTopic(name="t")])
        assert metadata.MetadataRequest.decode(request.encode(1), 1) == request
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n == "mylib" or n.startswith("mylib.")]:
            del sys.modules[name]
