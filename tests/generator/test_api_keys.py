"""Names, not numbers: the tool's ``ApiKey`` is Kafka's table, every package's
``registry.ApiKey`` and ``error_codes.ErrorCode`` hold what the runtime spells, and the
runtime works in a client-only package and in one generated without facts (against a fake
broker)."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from kafka_specgen.api_keys import ApiKey
from kafka_specgen.errors import SpecError
from kafka_specgen.fake_broker import FakeCluster
from kafka_specgen.fake_broker.errors import ErrorCode as FakeBrokerErrorCode
from kafka_specgen.library import generate_files
from kafka_specgen.runtime_names import RUNTIME, member_name, runtime_members, tool_facts
from kafka_specgen.selection import Selection
from tests.support.genpkg import CORPORA, SPECS, generate_package

NEWEST = CORPORA / "4.3.1" / "message"
#: The repo's specs without its facts tables (``specs/facts``).
MESSAGE_SPECS = sorted(SPECS.glob("*.json"))


def test_the_tools_api_keys_are_the_facts_table() -> None:
    table = {member_name(fact.name): fact.key for fact in tool_facts().api_keys}
    assert {key.name: key.value for key in ApiKey} == table
    assert ApiKey.API_VERSIONS == 18 and ApiKey.DESCRIBE_LOG_DIRS == 35
    assert member_name("OffsetForLeaderEpoch") == "OFFSET_FOR_LEADER_EPOCH"


def test_the_fake_brokers_error_codes_are_kafkas() -> None:
    table = {fact.name: fact.code for fact in tool_facts().error_codes}
    assert {code.name: code.value for code in FakeBrokerErrorCode}.items() <= table.items()


def test_the_runtime_spells_names_the_tables_have() -> None:
    members = runtime_members()
    assert {"API_VERSIONS", "SASL_HANDSHAKE", "PRODUCE", "METADATA"} <= members["ApiKey"]
    assert {"NONE", "UNSUPPORTED_VERSION"} <= members["ErrorCode"]
    assert members["ApiKey"] <= {key.name for key in ApiKey}
    assert members["ErrorCode"] <= {fact.name for fact in tool_facts().error_codes}


def test_the_docs_name_what_the_runtime_spells() -> None:
    text = (SPECS.parent / "docs" / "generated-package.md").read_text(encoding="utf-8")
    members = runtime_members()
    assert [
        name for name in sorted(members["ApiKey"] | members["ErrorCode"]) if f"`{name}`" not in text
    ] == []


def test_the_runtime_assigns_no_api_key_or_error_code_numbers() -> None:
    """No module-level ``PRODUCE = 0`` or ``UNSUPPORTED_VERSION = 35`` left in the
    runtime: it spells the package's enums."""
    names = {key.name for key in ApiKey} | {fact.name for fact in tool_facts().error_codes}
    found = []
    for path in sorted(RUNTIME.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign):
                targets = [t for t in node.targets if isinstance(t, ast.Name)]
                if any(t.id.lstrip("_") in names for t in targets):
                    found.append(f"{path.name}:{node.lineno}")
    assert found == []


def enum_members(text: str, enum: str) -> dict[str, int]:
    tree = ast.parse(text)
    [cls] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == enum]
    return {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in cls.body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
    }


def package_text(specs: list[Path], **options: Any) -> dict[str, str]:
    return {f.path: f.text for f in generate_files(specs, warn=False, **options)}


def test_a_packages_api_keys_are_its_names_and_the_runtimes() -> None:
    files = package_text([SPECS])
    members = enum_members(files["registry.py"], "ApiKey")
    assert members == {key.name: key.value for key in ApiKey}  # the bundled names: all of them
    without = enum_members(package_text(MESSAGE_SPECS, facts=None)["registry.py"], "ApiKey")
    runtime = {name: ApiKey[name].value for name in runtime_members()["ApiKey"]}
    # the specs' three APIs, and what the runtime spells
    assert without == {**runtime, "METADATA": 3, "API_VERSIONS": 18, "UPDATE_FEATURES": 57}


def test_without_facts_error_codes_hold_the_runtimes() -> None:
    files = package_text(MESSAGE_SPECS, facts=None)
    codes = enum_members(files["error_codes.py"], "ErrorCode")
    assert codes.keys() == runtime_members()["ErrorCode"]
    assert codes["UNSUPPORTED_VERSION"] == 35 and codes["NOT_LEADER_OR_FOLLOWER"] == 6
    assert "        6,\n" in files["error_codes.py"]  # retriable, as Kafka says


def test_an_older_name_keeps_its_member_and_the_runtime_gets_kafkas() -> None:
    """Kafka 2.4 named key 2 ListOffset: its package has LIST_OFFSET; a name the runtime
    spells for a key named otherwise is an alias."""
    members = enum_members(package_text([CORPORA / "2.4.0"])["registry.py"], "ApiKey")
    assert members["LIST_OFFSET"] == 2 and "LIST_OFFSETS" not in members


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        (
            [{"key": 18, "name": "ApiVersions"}, {"key": 99, "name": "APIVersions"}],
            "api keys 18 (ApiVersions) and 99 (APIVersions) would both be ApiKey.API_VERSIONS",
        ),
        (
            [{"key": 99, "name": "SaslHandshake"}],
            "api key 99 is named SASL_HANDSHAKE, Kafka's name of api key 17, which the "
            "runtime uses",
        ),
    ],
)
def test_api_key_names_that_clash_are_refused(
    tmp_path: Path, entries: list[dict[str, Any]], message: str
) -> None:
    (tmp_path / "names.json").write_text(json.dumps({"facts": "api-keys", "entries": entries}))
    with pytest.raises(SpecError, match="api-key-name") as caught:
        generate_files(MESSAGE_SPECS, warn=False, facts=tmp_path)
    assert message in str(caught.value)


def test_a_client_only_package_without_facts_talks_to_a_broker(tmp_path: Path) -> None:
    """``--apis Metadata --facts none``: the handshake, a Metadata request and the cluster
    helpers' metadata, against a fake 4.3 broker."""
    files = generate_files(
        [NEWEST], warn=False, facts=None, selection=Selection(apis=("Metadata",)), package="slim"
    )
    assert not any(f.path == "produce.py" for f in files)
    package = generate_package_files(files, tmp_path, "slim")
    assert sorted(package.registry.API_KEYS) == [3, 18]
    assert package.registry.ApiKey.SASL_HANDSHAKE == 17  # the runtime's, without a codec
    with FakeCluster(release="4.3", topics={"t": 2}) as fake:
        host, port = fake.bootstrap.rsplit(":", 1)
        with package.client.Client.connect(host, int(port)) as client:
            request = package.metadata.MetadataRequest(topics=None)
            response = client.request(request)
            assert [t.name for t in response.topics] == ["t"]
        with package.cluster.Cluster.connect(fake.bootstrap) as cluster:
            assert cluster.metadata.leader("t", 1) == 0


def test_a_package_without_facts_produces_and_fetches(tmp_path: Path) -> None:
    """``--facts none`` over Kafka 4.3's specs: the cluster helpers (which read error codes
    by name) produce and fetch through a fake broker."""
    package = generate_package([NEWEST], tmp_path, "bare", facts=None)
    from bare import cluster, error_codes, records  # type: ignore[import-not-found]

    assert error_codes.ErrorCode.NOT_LEADER_OR_FOLLOWER.retriable
    batch = records.build_batch([records.Record(0, 1_700_000_000_000, b"k", b"v")])
    with FakeCluster(release="4.3", topics={"t": 1}) as fake:
        with cluster.Cluster.connect(fake.bootstrap) as client:
            assert client.produce("t", {0: batch}) == {0: 0}
            fetched = client.fetch("t", {0: 0}, max_wait_ms=10)
            assert fetched[0].error == error_codes.ErrorCode.NONE
            assert [r.value for r in fetched[0].records] == [b"v"]
    assert package.__name__ == "bare"


class Modules:
    """A package's modules by attribute (``package.registry``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, module: str) -> Any:
        import importlib

        return importlib.import_module(f"{self.name}.{module}")


def generate_package_files(files: list[Any], out: Path, name: str) -> Modules:
    import importlib
    import sys

    from kafka_specgen.format import write_package

    write_package(files, out / name)
    sys.path.insert(0, str(out))
    importlib.invalidate_caches()
    return Modules(name)
