"""``GeneratedPackage.require``: the one check of what a tool needs of a generated package,
and the one line each tool prints when a spec set lacks it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kafka_specgen.api_keys import ApiKey
from kafka_specgen.broker_versions import BrokerVersionsError, Package
from kafka_specgen.cli import main
from kafka_specgen.fake_broker import FakeBrokerError, FakeCluster
from kafka_specgen.library import PackageLacks, generated_package
from kafka_specgen.pipeline.job import prepare
from tests.support.genpkg import SPECS


@pytest.fixture(autouse=True)
def own_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Generated packages go to a cache folder of the test session, not the user's."""
    monkeypatch.setenv("KAFKA_SPECGEN_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.fixture
def headless(tmp_path: Path) -> Path:
    """The repo's specs without the request and response headers."""
    folder = tmp_path / "headless"
    folder.mkdir()
    for spec in SPECS.glob("*.json"):
        if "Header" not in spec.name:
            shutil.copy(spec, folder)
    return folder


def test_require_names_what_is_missing_and_why(headless: Path) -> None:
    package = generated_package([SPECS])
    package.require(ApiKey.API_VERSIONS, ApiKey.METADATA, because="unused")
    with pytest.raises(PackageLacks) as caught:
        package.require(ApiKey.PRODUCE, ApiKey.METADATA, ApiKey.FETCH, because="it must")
    assert str(caught.value) == "the spec set lacks Produce and Fetch: it must"
    bare = generated_package([headless])
    bare.require(ApiKey.METADATA, because="unused", framing=False)
    with pytest.raises(PackageLacks) as caught:
        bare.require(ApiKey.PRODUCE, because="it must")
    assert str(caught.value) == (
        "the spec set lacks Produce and the request and response headers: it must"
    )


def test_each_tool_says_what_the_spec_set_lacks(
    headless: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bare = generated_package([headless])
    with pytest.raises(FakeBrokerError) as fake:
        FakeCluster(package=bare)
    assert str(fake.value) == (
        "the spec set lacks Produce, Fetch and the request and response headers: a fake "
        "broker needs Kafka's whole spec set"
    )
    with pytest.raises(BrokerVersionsError) as versions:
        Package(bare)
    assert str(versions.value) == (
        "the spec set lacks the request and response headers: broker-versions asks every "
        "broker with ApiVersions and Metadata"
    )
    with pytest.raises(PackageLacks, match=r"lacks the request and response headers: the "):
        prepare([headless])
    code = main(["broker-versions", "--specs", str(headless), "--bootstrap-server", "x:1"])
    assert code == 1
    assert capsys.readouterr().err == f"kafka-specgen broker-versions: {versions.value}\n"
