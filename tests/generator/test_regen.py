"""The spec-bump workflow: ``make regen-check`` and the policy for versions removed upstream.

Policy (README, "Spec bumps"): the generated package follows the specs it is given, so
versions removed upstream disappear from it. To keep speaking them, generate the older
spec set into a second package and choose the package by version; the recipe is tested
here on Produce, whose versions 0-2 Kafka 4.0 removed (trunk-2024-10 has 0-11, the
kafka-python 3.0.12 set 3-13).
"""

from __future__ import annotations

import importlib
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support.genpkg import CORPORA, ROOT, generate_package

OLD = CORPORA / "trunk-2024-10" / "message"
NEW = CORPORA / "kafka-python-3.0.12" / "message"


def test_regen_check_on_the_repo_specs() -> None:
    """Regenerating specs/ gives what is committed, and the changelog is empty."""
    run = subprocess.run(
        ["make", "--no-print-directory", "regen-check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    assert "== generated code: generated/kafka_messages -> fresh generation from specs ==" in out
    assert "no change" in out
    assert "== changelog: specs -> specs ==" in out
    assert " 0 changed" in out and "0 evolution-rule violations" in out


def test_regen_check_shows_the_code_and_the_changelog(tmp_path: Path) -> None:
    """A spec set that drops and adds messages: files listed, changelog printed."""
    specs = tmp_path / "specs"
    specs.mkdir()
    for name in (
        "ApiVersionsRequest",
        "ApiVersionsResponse",
        "RequestHeader",
        "ResponseHeader",
        "ProduceRequest",
        "ProduceResponse",
    ):
        (specs / f"{name}.json").write_bytes((NEW / f"{name}.json").read_bytes())
    run = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "regen-check",
            f"SPECS={specs}",
            f"REGEN_DIFF={tmp_path / 'code.diff'}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    assert "  added    produce.py" in out
    assert "  removed  metadata.py" in out
    assert "  changed  api_versions.py" in out or "  changed  registry.py" in out
    assert (tmp_path / "code.diff").read_text().startswith("diff ")
    assert "API 0 Produce" in out and "ProduceRequest: added (versions 3-13" in out
    assert "MetadataRequest: not in the new set (had versions 0-12)" in out


# --- carrying removed versions forward -----------------------------------------------------


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> tuple[ModuleType, ModuleType]:
    out = tmp_path_factory.mktemp("carry")
    files = ["ProduceRequest", "ProduceResponse", "RequestHeader", "ResponseHeader"]
    generate_package([OLD / f"{f}.json" for f in files], out, "carry_legacy")
    generate_package([NEW / f"{f}.json" for f in files], out, "carry_current")
    return (
        importlib.import_module("carry_legacy.produce"),
        importlib.import_module("carry_current.produce"),
    )


def produce_codec(version: int, current: ModuleType, legacy: ModuleType) -> Any:
    """The recipe of docs/spec-bumps.md: the current package where it has the version,
    else legacy."""
    cls = current.ProduceRequest
    if cls.MIN_VERSION <= version <= cls.MAX_VERSION:
        return cls
    return legacy.ProduceRequest


def test_removed_versions_disappear_from_the_new_package(
    packages: tuple[ModuleType, ModuleType],
) -> None:
    legacy, current = packages
    assert (legacy.ProduceRequest.MIN_VERSION, legacy.ProduceRequest.MAX_VERSION) == (0, 11)
    assert (current.ProduceRequest.MIN_VERSION, current.ProduceRequest.MAX_VERSION) == (3, 13)
    errors = importlib.import_module("carry_current.errors")
    with pytest.raises(errors.UnsupportedVersionError):
        current.ProduceRequest().encode(2)
    with pytest.raises(errors.DecodeError):
        current.ProduceRequest.decode(legacy.ProduceRequest().encode(2), 2)


def test_carrying_old_versions_forward(packages: tuple[ModuleType, ModuleType]) -> None:
    legacy, current = packages
    data = {
        "transactional_id": None,
        "acks": -1,
        "timeout_ms": 1000,
        "topic_data": [{"name": "orders", "partition_data": [{"index": 0, "records": "AAEC"}]}],
    }
    for version in range(0, 13):  # v13 names topics by id only (Name is 0-12)
        cls = produce_codec(version, current, legacy)
        fields = dict(data)
        if version < 3:
            del fields["transactional_id"]
        obj = cls.from_dict(fields)
        body = obj.encode(version)
        assert cls.decode(body, version) == obj
        if 3 <= version <= 11:
            # Where both packages have the version, they write the same bytes.
            assert legacy.ProduceRequest.from_dict(fields).encode(version) == body
    assert produce_codec(0, current, legacy) is legacy.ProduceRequest
    assert produce_codec(12, current, legacy) is current.ProduceRequest
