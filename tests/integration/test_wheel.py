"""The tool as a user installs it: a wheel, into a fresh virtual environment.

The wheel must hold one import package (``kafka_specgen``) with its templates, runtime
sources, schemas, shipped specs, the bundle of Kafka's spec history and the pipeline's
data, and the installed command must generate exactly the bytes the checkout generates:
``generate --release 4.1`` in an empty folder, with no spec folder anywhere. From there
too, ``fake-broker --release R`` answers ApiVersions as every release of kafka-python's
captured table did, the pytest plugin runs a user's test once per release, and the
pipeline (the ``spark`` extra) reads a mixed fleet recorded live (local mode; the
standalone cluster run is in ``tests/pipeline/cluster_pipeline.py``). Slow (one venv with
PySpark and pytest, built once for the module; every release's package generated once).
"""

from __future__ import annotations

import os
import re
import select
import socket
import struct
import subprocess
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafka_specgen.library import SpecSet, generate_files
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
    # the bundle of Kafka's spec sets, with its NOTICE and README
    for path in (ROOT / "specs" / "history").iterdir():
        assert f"kafka_specgen/specs/history/{path.name}" in names, path.name
    assert {"kafka-specs.xz", "NOTICE"} <= {p.name for p in (ROOT / "specs" / "history").iterdir()}
    # the committed package is not shipped: commands generate what they need from specs
    assert not any(name.startswith("kafka_messages") for name in names)


@dataclass(frozen=True)
class Installed:
    """The wheel installed into a fresh venv (with its ``spark`` extra, and pytest), and an
    empty folder to run in with a home and a cache of its own: no repo on the path, no spec
    folder anywhere."""

    bin: Path
    empty: Path
    env: dict[str, str]


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("installed")
    env_dir = fresh_venv(root / "venv", f"{wheel}[spark]", "pytest")
    empty = root / "empty"
    empty.mkdir()
    return Installed(env_dir / "bin", empty, clean_env(root))


def test_the_installed_tool_generates_what_the_checkout_generates(
    installed: Installed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env_dir, empty, env = installed.bin.parent, installed.empty, installed.env
    python = installed.bin / "python"
    # An empty working directory, no repo on the path and no spec folder given: only the
    # wheel (and the spec history inside it) is used.
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
    monkeypatch.setenv("KAFKA_SPECGEN_CACHE", env["KAFKA_SPECGEN_CACHE"])
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


# --- fake brokers from the wheel --------------------------------------------------------------


@contextmanager
def fake_broker(installed: Installed, release: str) -> Iterator[int]:
    """``kafka-specgen fake-broker --release RELEASE`` from the wheel: its port while it
    runs (its first line names the release and the address), stopped after."""
    process = subprocess.Popen(
        [str(installed.bin / "kafka-specgen"), "fake-broker", "--listen", "127.0.0.1:0"]
        + ["--release", release],
        cwd=installed.empty,
        env={**installed.env, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 300)  # a first run generates
        banner = process.stdout.readline() if ready else ""
        match = re.match(
            r"fake cluster speaking Kafka (\S+) .*: 127\.0\.0\.1:(\d+) \(id 0\)", banner
        )
        assert match, (release, banner, process.stderr.read() if process.poll() else "")
        yield int(match[2])
    finally:
        process.terminate()
        process.communicate(timeout=30)


def api_versions_v0(port: int) -> dict[int, tuple[int, int]] | str:
    """ApiVersions v0, built and read by hand: the ranges, or ``closed`` / ``no answer``."""
    client_id = b"wheel"
    request = struct.pack(">hhih", 18, 0, 7, len(client_id)) + client_id
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(struct.pack(">i", len(request)) + request)
        sock.settimeout(1.5)
        data = b""
        try:
            while len(data) < 4 or len(data) < 4 + struct.unpack(">i", data[:4])[0]:
                chunk = sock.recv(65536)
                if not chunk:
                    return "closed"
                data += chunk
        except TimeoutError:
            return "no answer"
    correlation_id, error_code, count = struct.unpack_from(">ihi", data, 4)
    assert (correlation_id, error_code) == (7, 0)
    entries = [struct.unpack_from(">hhh", data, 14 + 6 * n) for n in range(count)]
    assert len(data) == 14 + 6 * count
    return {key: (low, high) for key, low, high in entries}


def test_the_installed_fake_broker_answers_as_every_captured_release(
    installed: Installed,
) -> None:
    """For every release of kafka-python 3's captured ApiVersions answers from 0.9 to 4.3,
    ``fake-broker --release R`` gives exactly those ranges and kafka-python names R from
    them; 0.9 never answers (0.8.x closes the connection)."""
    from kafka.protocol.broker_version_data import (
        BROKER_API_VERSIONS,
        infer_broker_version_from_api_versions,
    )

    captured = sorted(BROKER_API_VERSIONS)
    assert captured[0] == (0, 8, 0) and captured[-1] == (4, 3)
    for version in captured:
        name = ".".join(str(part) for part in version)
        with fake_broker(installed, name) as port:
            answer = api_versions_v0(port)
        if version < (0, 9):
            assert answer == "closed", name
        elif version < (0, 10):
            assert answer == "no answer", name
        else:
            assert answer == BROKER_API_VERSIONS[version], name
            assert infer_broker_version_from_api_versions(answer) == version, name


def test_the_installed_pytest_plugin_runs_a_test_per_release(installed: Installed) -> None:
    (installed.empty / "test_user.py").write_text(
        "import socket\n\n"
        "def test_cluster(kafka_cluster, kafka_release):\n"
        "    host, port = kafka_cluster.bootstrap.rsplit(':', 1)\n"
        "    socket.create_connection((host, int(port)), timeout=5).close()\n"
        "    assert kafka_cluster.release.startswith(kafka_release)\n"
    )
    result = subprocess.run(
        [str(installed.bin / "python"), "-m", "pytest", "-v", "-p", "no:cacheprovider"]
        + ["--kafka-release", "2.8,4.3", "test_user.py"],
        cwd=installed.empty,
        env=installed.env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "test_cluster[kafka-2.8] PASSED" in result.stdout
    assert "test_cluster[kafka-4.3] PASSED" in result.stdout


# --- the pipeline from the wheel -------------------------------------------------------------


def test_the_installed_pipeline_flags_the_pinned_client_of_a_mixed_fleet(
    installed: Installed, tmp_path: Path
) -> None:
    """From the wheel, in an empty folder, with no --specs (so every Kafka release's
    versions, ``--release all``): the pinned kafka-python app's breaks are flagged, its
    requests and its record format, nothing for the other three apps, nothing unseen; and
    the executors (local mode, the venv's Python) import only what was shipped or
    installed."""
    from tests.support.mixed_fleet import record_mixed_fleet

    fleet = record_mixed_fleet(tmp_path / "fleet.jsonl")
    work = tmp_path / "empty"
    work.mkdir()
    result = subprocess.run(
        [str(installed.bin / "kafka-specgen"), "pipeline", "--input", str(fleet)]
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
    assert {line.split(":")[0].strip() for line in breaking} == {
        "Produce v2",
        "Fetch v2",
        "message format v1",
    }
    assert all(pinned in line for line in breaking)
    assert f"fix {pinned}: software unknown; it must send Produce v3 or later" in out
    # every frame decodes with every release's versions: nothing is left unseen
    assert "not observed: " not in out and "could not be decoded" not in out
    assert "Traceback" not in result.stderr and "at org.apache" not in result.stderr
    assert (work / "tables" / "readiness").is_dir()
