"""The tool as a user installs it: a wheel, into a fresh virtual environment.

The wheel must hold one import package (``kafka_specgen``) with its templates, runtime
sources, schemas, shipped specs and the pipeline's data, and the installed command must
generate exactly the bytes the checkout generates. The same venv, with the ``spark``
extra, runs the pipeline from an empty folder over a mixed fleet recorded live (local
mode; the standalone cluster run is in ``tests/pipeline/cluster_pipeline.py``). Slow (a
venv with PySpark): the venv is built once for the module.
"""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest

from kafka_specgen.library import generate_files
from tests.support import genpkg
from tests.support.wheel import build_wheel, clean_env, fresh_venv

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


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
    # the committed package is not shipped: commands generate what they need from specs
    assert not any(name.startswith("kafka_messages") for name in names)


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel and its ``spark`` extra, not editable."""
    return fresh_venv(tmp_path_factory.mktemp("venv"), f"{wheel}[spark]")


def test_the_installed_tool_generates_what_the_checkout_generates(
    installed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env_dir = installed
    python = env_dir / "bin" / "python"
    corpus = genpkg.newest_corpus()
    out = tmp_path / "out"
    # A working directory of its own and no repo on the path: only the wheel is used.
    env = clean_env(tmp_path)
    result = subprocess.run(
        [str(env_dir / "bin" / "kafka-specgen"), "generate", "--specs", str(corpus)]
        + ["--out", str(out), "--package", "from_wheel"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    where = subprocess.run(
        [str(python), "-c", "import kafka_specgen; print(kafka_specgen.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert str(env_dir) in where.stdout  # the installed copy, not the checkout
    # The checkout's generation, formatted the same way (sharing the black cache is fine:
    # an entry is only found for identical rendered text).
    monkeypatch.setenv("KAFKA_SPECGEN_CACHE", str(tmp_path / "cache"))
    expected = {f.path: f.text for f in generate_files([corpus], warn=False)}
    written = {
        p.relative_to(out / "from_wheel").as_posix(): p.read_text(encoding="utf-8")
        for p in (out / "from_wheel").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert sorted(written) == sorted(expected)
    different = [path for path in expected if written[path] != expected[path]]
    assert not different, different


def test_the_installed_pipeline_flags_the_pinned_client_of_a_mixed_fleet(
    installed: Path, tmp_path: Path
) -> None:
    """From the wheel, in an empty folder, with no --specs: the pinned kafka-python app's
    breaks are flagged (from the request headers), nothing for the other three apps, and
    the executors (local mode, the venv's Python) import only what was shipped or
    installed."""
    from tests.support.mixed_fleet import record_mixed_fleet

    fleet = record_mixed_fleet(tmp_path / "fleet.jsonl")
    work = tmp_path / "empty"
    work.mkdir()
    result = subprocess.run(
        [str(installed / "bin" / "kafka-specgen"), "pipeline", "--input", str(fleet)]
        + ["--out", "tables", "--target-release", "4.0", "--fail-on-unready", "--quiet"],
        cwd=work,
        env=clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 1, result.stdout + result.stderr[-3000:]
    out = result.stdout
    assert "(nothing lost)" in out
    assert "readiness: 1 of 4 clients would break on the target (Kafka 4.0" in out
    pinned = "software unknown at 127.0.0.1 ('legacy-billing')"
    breaking = [
        line for line in out.splitlines() if line.startswith("    ") and ": 1 client (" in line
    ]
    assert {line.split(":")[0].strip() for line in breaking} == {"Produce v2", "Fetch v2"}
    assert all(pinned in line for line in breaking)
    assert f"fix {pinned}: software unknown; it must send Produce v3 or later" in out
    # the default specs decode 3 APIs: the verdict says what it could not see
    assert "not observed: " in out and "frames could not be decoded" in out
    assert "Traceback" not in result.stderr and "at org.apache" not in result.stderr
    assert (work / "tables" / "readiness").is_dir()
