"""The tool as a user installs it: a wheel, into a fresh virtual environment.

The wheel must hold one import package (``kafka_specgen``) with its templates, runtime
sources, schemas, shipped specs and the bundle of Kafka's spec history, and the installed
command must generate exactly the bytes the checkout generates: ``generate --release 4.1``
in an empty folder, with no spec folder anywhere. Slow-ish (a venv and three dependencies): one test builds
everything once.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from kafka_specgen.library import SpecSet, generate_files

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(ROOT)],
        check=True,
        timeout=600,
        capture_output=True,
    )
    [built] = out.glob("kafka_specgen-*.whl")
    return built


def test_the_wheel_installs_one_import_package_with_its_data(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert tops == {"kafka_specgen"}
    # every source and data file of the checkout's package folders, none forgotten
    shipped = {
        "generator/kafka_specgen": "kafka_specgen",
        "templates": "kafka_specgen/templates",
        "specs": "kafka_specgen/specs",
    }
    for folder, inside in shipped.items():
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".j2", ".json") and "__pycache__" not in path.parts:
                needed = f"{inside}/{path.relative_to(ROOT / folder).as_posix()}"
                assert needed in names, needed
    # the bundle of Kafka's spec sets, with its NOTICE and README
    for path in (ROOT / "specs" / "history").iterdir():
        assert f"kafka_specgen/specs/history/{path.name}" in names, path.name
    assert {"kafka-specs.xz", "NOTICE"} <= {p.name for p in (ROOT / "specs" / "history").iterdir()}
    # the committed package is not shipped: commands generate what they need from specs
    assert not any(name.startswith("kafka_messages") for name in names)


def test_the_installed_tool_generates_what_the_checkout_generates(
    wheel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", str(wheel)],
        check=True,
        timeout=600,
        capture_output=True,
    )
    # An empty working directory, no repo on the path and no spec folder given: only the
    # wheel (and the spec history inside it) is used.
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {"PATH": os.environ.get("PATH", ""), "KAFKA_SPECGEN_CACHE": str(tmp_path / "cache")}
    result = subprocess.run(
        [str(env_dir / "bin" / "kafka-specgen"), "generate", "--release", "4.1"]
        + ["--out", "out", "--package", "from_wheel"],
        cwd=empty,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert "from Kafka 4.1.0 (spec data of 4.1.2)" in result.stdout
    out = empty / "out"
    where = subprocess.run(
        [str(python), "-c", "import kafka_specgen; print(kafka_specgen.__file__)"],
        cwd=empty,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert str(env_dir) in where.stdout  # the installed copy, not the checkout
    # The checkout's generation, formatted the same way (sharing the black cache is fine:
    # an entry is only found for identical rendered text).
    monkeypatch.setenv("KAFKA_SPECGEN_CACHE", str(tmp_path / "cache"))
    expected = {
        f.path: f.text
        for f in generate_files(SpecSet.of_release("4.1"), warn=False, package="from_wheel")
    }
    written = {
        p.relative_to(out / "from_wheel").as_posix(): p.read_text(encoding="utf-8")
        for p in (out / "from_wheel").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert sorted(written) == sorted(expected)
    different = [path for path in expected if written[path] != expected[path]]
    assert not different, different
