"""``--release all``: the union of the releases' spec sets (``kafka_specgen.union``).

- the merge rules, each on two small made-up releases, the output run through schema and
  model as ``generate`` runs it;
- the real releases (2.4.0 ... 4.3.1 from ``genpkg.CORPORA``): the wire-layout check
  (``union_check``) over every version of every release, the versions it excepts, and that
  the check fails on a broken union;
- the early-access table is needed, entry by entry;
- the output is the same under another hash seed.
The union package itself (round trips, golden frames, release bytes) is
``test_union_package.py``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kafka_specgen import union
from kafka_specgen.catalog import build_catalog
from kafka_specgen.facts import Facts
from kafka_specgen.load import RawSpec
from kafka_specgen.plan import plan_message
from kafka_specgen.union import build_union, union_specs
from kafka_specgen.union_check import check_union
from kafka_specgen.union_tree import UnionError
from tests.support import unionpkg

ROOT = Path(__file__).resolve().parents[2]


# --- made-up releases -------------------------------------------------------------------------


def field(name: str, ftype: str, versions: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "type": ftype, "versions": versions, "about": f"{name}.", **extra}


def spec(name: str, kind: str, valid: str, fields: list[dict[str, Any]], **extra: Any) -> RawSpec:
    folder = extra.pop("folder", "message")
    data = {"name": name, "type": kind, "validVersions": valid, "flexibleVersions": "none"}
    data.update(extra, fields=fields)
    return RawSpec(f"{folder}/{name}.json", data, ())


def api(
    key: int,
    name: str,
    valid: str,
    request: list[dict[str, Any]],
    response: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> list[RawSpec]:
    """A request and its response."""
    response_extra = {k: v for k, v in extra.items() if k == "flexibleVersions"}
    return [
        spec(f"{name}Request", "request", valid, request, apiKey=key, **extra),
        spec(f"{name}Response", "response", valid, response or [], apiKey=key, **response_extra),
    ]


def merged(*releases: tuple[str, list[RawSpec]]) -> dict[str, RawSpec]:
    """The union's specs by name; they must pass schema and model."""
    raws = union_specs(releases)
    unionpkg.messages_of(raws)
    return {str(raw.data["name"]): raw for raw in raws}


def wire_names(specs: dict[str, RawSpec], name: str, version: int) -> list[str]:
    """The names of a message's regular fields on the wire at ``version``."""
    (message,) = [m for m in unionpkg.messages_of(list(specs.values())) if m.name == name]
    return [p.field.name for p in plan_message(message).root[version].regular]


def test_removed_versions_come_back_with_their_fields_in_place() -> None:
    old = api(
        2,
        "Offsets",
        "0-2",
        [field("A", "int32", "0+"), field("Old", "int32", "0"), field("B", "string", "0+")],
    )
    new = api(
        2,
        "Offsets",
        "1-3",
        [field("A", "int32", "0+"), field("B", "string", "0+"), field("C", "int64", "3+")],
    )
    specs = merged(("3.9.0", old), ("4.0.0", new))
    request = specs["OffsetsRequest"]
    assert request.data["validVersions"] == "0-3"
    assert request.data["deprecatedVersions"] == "0"  # the newest release dropped it
    assert wire_names(specs, "OffsetsRequest", 0) == ["A", "Old", "B"]
    assert wire_names(specs, "OffsetsRequest", 2) == ["A", "B"]
    assert wire_names(specs, "OffsetsRequest", 3) == ["A", "B", "C"]
    assert "versions 0 as in Kafka 3.9.0; 1-3 as in Kafka 4.0.0" in request.notes


def test_renamed_fields_and_structs_take_the_newest_names() -> None:
    topic = [field("Name", "string", "0+")]
    old = api(0, "Produce", "0-1", [field("Topics", "[]Topic", "0+", fields=topic)])
    new = api(
        0,
        "Produce",
        "1-2",
        [field("TopicData", "[]TopicProduceData", "0+", fields=topic, about="The newest text.")],
    )
    request = merged(("2.7.0", old), ("2.8.0", new))["ProduceRequest"]
    (only,) = request.data["fields"]
    assert (only["name"], only["type"], only["versions"]) == (
        "TopicData",
        "[]TopicProduceData",
        "0+",
    )
    assert only["about"] == "The newest text."


def test_common_structs_stay_shared_when_a_removed_field_uses_one() -> None:
    part = {"name": "Part", "versions": "0+", "fields": [field("Id", "int32", "0+")]}
    old = api(
        7,
        "Move",
        "0-1",
        [field("Kept", "[]Part", "0+"), field("Gone", "[]Part", "0")],
        commonStructs=[part],
    )
    new = api(
        7,
        "Move",
        "1-2",
        [field("Kept", "[]Part", "0+"), field("Extra", "int8", "2+")],
        commonStructs=[part],
    )
    specs = merged(("3.9.0", old), ("4.0.0", new))
    request = specs["MoveRequest"].data
    assert [c["name"] for c in request["commonStructs"]] == ["Part"]
    assert [(f["name"], f["type"], f["versions"]) for f in request["fields"]] == [
        ("Kept", "[]Part", "0+"),
        ("Gone", "[]Part", "0"),
        ("Extra", "int8", "2+"),
    ]
    assert wire_names(specs, "MoveRequest", 0) == ["Kept", "Gone"]


def test_a_renamed_api_is_one_message_under_its_newest_name() -> None:
    old = api(2, "ListOffset", "0-1", [field("A", "int32", "0+")])
    new = api(2, "ListOffsets", "0-2", [field("A", "int32", "0+")])
    specs = merged(("2.7.0", old), ("2.8.0", new))
    assert "ListOffsetRequest" not in specs
    assert specs["ListOffsetsRequest"].data["validVersions"] == "0-2"


def test_an_unstable_version_gives_way_to_a_newer_stable_one() -> None:
    old = api(9, "Beta", "0-1", [field("Q", "int32", "1+")], latestVersionUnstable=True)
    new = api(9, "Beta", "0-1", [field("Q", "int64", "1+")])
    result = build_union([("3.6.0", old), ("3.7.0", new)])
    request = {str(r.data["name"]): r for r in result.specs}["BetaRequest"]
    assert request.data["fields"][0]["type"] == "int64"
    assert "latestVersionUnstable" not in request.data
    gone = [(s.release, s.message, s.version, s.differs) for s in result.superseded]
    assert ("3.6.0", "BetaRequest", 1, True) in gone
    # the response of an unstable request version is unstable too
    assert ("3.6.0", "BetaResponse", 1, False) in gone


def test_a_version_only_an_unstable_release_has_is_kept_and_stays_unstable() -> None:
    old = api(9, "Beta", "0", [field("Q", "int32", "0+")])
    new = api(
        9,
        "Beta",
        "0-1",
        [field("Q", "int32", "0+"), field("R", "int8", "1+")],
        latestVersionUnstable=True,
    )
    specs = merged(("4.1.0", old), ("4.2.0", new))
    assert specs["BetaRequest"].data["latestVersionUnstable"] is True
    assert wire_names(specs, "BetaRequest", 1) == ["Q", "R"]


def test_two_stable_releases_that_disagree_are_an_error_naming_both() -> None:
    old = api(9, "Beta", "0-1", [field("Q", "int32", "1+")])
    new = api(9, "Beta", "0-1", [field("Q", "int64", "1+")])
    with pytest.raises(UnionError, match=r"BetaRequest v1: Kafka 3\.6\.0 and 3\.7\.0 lay"):
        union_specs([("3.6.0", old), ("3.7.0", new)])


def test_tagged_fields_added_to_a_version_are_no_conflict() -> None:
    base = [field("A", "int32", "0+")]
    tagged = field("T", "int64", "0+", taggedVersions="0+", tag=0)
    old = [spec("StateValue", "data", "0", base, flexibleVersions="0+")]
    new = [spec("StateValue", "data", "0", base + [tagged], flexibleVersions="0+")]
    result = build_union([("4.0.0", old), ("4.1.0", new)])
    assert not result.superseded
    (value,) = result.specs
    assert [f["name"] for f in value.data["fields"]] == ["A", "T"]


def test_removed_apis_stay_with_their_last_definition_and_listeners_merge() -> None:
    old = api(4, "LeaderAndIsr", "0-1", [field("A", "int32", "0+")], listeners=["zkBroker"])
    gone = api(4, "LeaderAndIsr", "none", [])
    other_old = api(3, "Metadata", "0", [], listeners=["zkBroker", "broker"])
    other_new = api(3, "Metadata", "0", [], listeners=["broker", "controller"])
    specs = merged(("3.9.0", old + other_old), ("4.0.0", gone + other_new))
    request = specs["LeaderAndIsrRequest"]
    assert request.data["validVersions"] == "0-1"
    assert request.data["deprecatedVersions"] == "0-1"
    assert request.data["listeners"] == ["zkBroker"]
    assert specs["MetadataRequest"].data["listeners"] == ["broker", "controller", "zkBroker"]
    always_gone = union_specs([("3.9.0", gone), ("4.0.0", gone)])
    assert {r.data["validVersions"] for r in always_gone} == {"none"}


def test_old_coordinator_keys_become_one_key_per_record_type() -> None:
    fields = [field("Group", "string", "0-1"), field("Partition", "int32", "0-1")]
    value = [field("Offset", "int64", "0+")]
    old = [
        spec("OffsetCommitKey", "data", "0-1", fields, folder="core"),
        spec("OffsetCommitValue", "data", "0-1", value, folder="core"),
        spec(
            "ShareThingKey", "data", "9", [field("Id", "string", "9")], folder="group-coordinator"
        ),
        spec("ShareThingValue", "data", "0", value, folder="group-coordinator"),
    ]
    key = [field("Group", "string", "0"), field("Partition", "int32", "0")]

    def record(name: str, kind: str, number: int, fields: list[dict[str, Any]]) -> RawSpec:
        return spec(
            name,
            kind,
            "0" if kind.endswith("key") else "0-1",
            fields,
            apiKey=number,
            folder="group-coordinator",
        )

    new = [
        record("LegacyOffsetCommitKey", "coordinator-key", 0, key),
        record("LegacyOffsetCommitValue", "coordinator-value", 0, value),
        record("OffsetCommitKey", "coordinator-key", 1, key),
        record("OffsetCommitValue", "coordinator-value", 1, value),
    ]
    raws = union_specs([("3.4.0", old), ("4.1.0", new)])
    catalog = build_catalog(unionpkg.messages_of(raws), Facts())
    records = {r.record_type: (r.key.name, r.value.name) for r in catalog.coordinators["group"]}
    assert records == {
        0: ("LegacyOffsetCommitKey", "LegacyOffsetCommitValue"),
        1: ("OffsetCommitKey", "OffsetCommitValue"),
        9: ("ShareThingKey", "ShareThingValue"),  # gone by 4.1: converted the same way
    }


# --- the real releases ------------------------------------------------------------------------

#: Versions the union does not lay out as their release did: unstable request versions
#: (and their responses) and early-access definitions (union.EARLY_ACCESS) that a newer
#: release redefined in place. All are version 0. Read off the releases' specs, not off
#: the union: message (as named in the release) -> releases.
SUPERSEDED = {
    "RegisterBrokerRecord": ["2.8.0"],
    "UnregisterBrokerRecord": ["2.8.0"],
    "TopicRecord": ["2.8.0"],
    "PartitionRecord": ["2.8.0"],
    "ConfigRecord": ["2.8.0"],
    "FenceBrokerRecord": ["2.8.0"],
    "UnfenceBrokerRecord": ["2.8.0"],
    "RemoveTopicRecord": ["2.8.0"],
    "QuotaRecord": ["2.8.0"],
    "LeaderChangeMessage": ["2.7.0", "2.8.0"],
    "EndQuorumEpochRequest": ["2.7.0"],
    "DelegationTokenRecord": ["2.8.0", "3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0"],
    "UserScramCredentialRecord": ["2.8.0", "3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.4.0"],
    "FeatureLevelRecord": ["2.8.0", "3.0.0", "3.1.0", "3.2.0"],
    "RemoteLogSegmentMetadataRecord": ["3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0"],
    "RemoteLogSegmentMetadataUpdateRecord": ["3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0"],
    "RemoteLogSegmentMetadataSnapshotRecord": ["3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0"],
    "ConsumerGroupCurrentMemberAssignmentValue": ["3.5.0", "3.6.0", "3.7.0"],
    "ConsumerGroupMemberMetadataValue": ["3.5.0", "3.6.0", "3.7.0"],
    "ConsumerGroupPartitionMetadataValue": ["3.5.0", "3.6.0", "3.7.0"],
    "ConsumerGroupTargetAssignmentMemberValue": ["3.5.0", "3.6.0", "3.7.0"],
    "ConsumerGroupHeartbeatRequest": ["3.5.0", "3.6.0"],
    "ConsumerGroupHeartbeatResponse": ["3.5.0", "3.6.0"],
    "ConsumerGroupDescribeResponse": ["3.7.0"],
    "ShareGroupMetadataValue": ["3.9.0", "4.0.0", "4.0.2"],
    "ShareGroupPartitionMetadataValue": ["3.9.0"],
    "ShareGroupStatePartitionMetadataValue": ["4.0.0", "4.0.2"],
    "ShareSnapshotValue": ["4.0.0", "4.0.2"],
    "ShareUpdateValue": ["4.0.0", "4.0.2"],
    "ReadShareGroupStateSummaryResponse": ["3.9.0", "4.0.0", "4.0.2"],
}


@pytest.fixture(scope="module")
def releases() -> unionpkg.Sets:
    return unionpkg.release_sets()


def test_every_version_of_every_release_is_in_the_union_on_the_wire(
    releases: unionpkg.Sets,
) -> None:
    result = check_union(releases, unionpkg.union_raws())
    assert result.ok, "\n".join(result.problems()[:30])
    expected = sorted((r, name, 0) for name, rs in SUPERSEDED.items() for r in rs)
    assert sorted(result.superseded) == expected
    assert result.checked > 11000  # 20 releases, ~12,000 (message, version) pairs


def test_the_union_records_what_it_superseded(releases: unionpkg.Sets) -> None:
    built = build_union(releases)
    differing = sorted((s.release, s.message, s.version) for s in built.superseded if s.differs)
    assert differing == sorted((r, name, 0) for name, rs in SUPERSEDED.items() for r in rs)
    # unstable versions redefined alike are listed too, and lose nothing
    assert ("3.6.0", "OffsetCommitRequest", 9) in {
        (s.release, s.message, s.version) for s in built.superseded if not s.differs
    }
    assert built.owners["ProduceRequest"][0] == "3.9.0"  # the last release with v0
    assert built.owners["ProduceRequest"][12] == releases[-1][0]


def _edit(raws: tuple[RawSpec, ...], name: str, change: Any) -> list[RawSpec]:
    result = []
    for raw in raws:
        if raw.data["name"] == name:
            data = copy.deepcopy(raw.data)
            change(data)
            raw = RawSpec(raw.source, data, raw.warnings, raw.notes)
        result.append(raw)
    return result


def _fields(data: dict[str, Any], *path: str) -> list[dict[str, Any]]:
    """The fields of the struct at ``path`` (field names) in a spec."""
    fields: list[dict[str, Any]] = data["fields"]
    for name in path:
        fields = next(f for f in fields if f["name"] == name)["fields"]
    return fields


def _partitions(data: dict[str, Any]) -> list[dict[str, Any]]:
    return _fields(data, "Topics", "Partitions")


@pytest.mark.parametrize(
    "name, change, expected",
    [
        (
            "ListOffsetsRequest",
            lambda d: _partitions(d).pop(),  # MaxNumOffsets, the last partition field
            "ListOffsetsRequest v0 of 3.9.0: ListOffsetsRequest.Topics.Partitions: fields "
            "['PartitionIndex', 'Timestamp', 'MaxNumOffsets'] in the release",
        ),
        (
            "ProduceRequest",
            lambda d: d["fields"][1].update(type="int32"),  # Acks
            "ProduceRequest v3 of 2.4.0: ProduceRequest.Acks: int16 in the release, int32",
        ),
        (
            "FetchResponse",
            lambda d: d.update(validVersions="4-18"),
            "FetchResponse v3 of 2.4.0: the union has no v3",
        ),
    ],
    ids=["field-dropped", "type-changed", "version-dropped"],
)
def test_the_check_fails_on_a_broken_union(
    releases: unionpkg.Sets, name: str, change: Any, expected: str
) -> None:
    broken = _edit(unionpkg.union_raws(), name, change)
    result = check_union(releases, broken)
    assert not result.ok
    assert any(p.startswith(expected) for p in result.problems()), result.problems()[:5]


def test_every_early_access_entry_is_needed(releases: unionpkg.Sets) -> None:
    """Each listed (message, release) that the sets have is redefined differently by a
    newer release: the table excuses nothing that is not a real change."""
    differing = {(s.message, s.release) for s in build_union(releases).superseded if s.differs}
    for entry in union.EARLY_ACCESS:
        listed = [
            (str(raw.data["name"]), release)
            for release, raws in releases
            for raw in raws
            if entry.covers(str(raw.data["name"]), release)
        ]
        assert listed, f"{entry.why}: matches nothing"
        assert set(listed) <= differing, f"{entry.why}: {sorted(set(listed) - differing)}"


def test_without_the_early_access_table_stable_releases_conflict(
    releases: unionpkg.Sets, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(union, "EARLY_ACCESS", ())
    with pytest.raises(UnionError, match=r"v0: Kafka \d\.\d\.\d and \d\.\d\.\d lay it out"):
        union_specs(releases)


def test_the_union_has_what_kafka_removed() -> None:
    specs = {str(raw.data["name"]): raw.data for raw in unionpkg.union_raws()}
    assert specs["ProduceRequest"]["validVersions"] == "0-13"
    assert specs["ProduceRequest"]["deprecatedVersions"] == "0-2"
    assert specs["FetchRequest"]["validVersions"].startswith("0-")
    assert specs["JoinGroupRequest"]["validVersions"] == "0-9"
    for name, valid in [
        ("LeaderAndIsrRequest", "0-7"),
        ("StopReplicaRequest", "0-4"),
        ("UpdateMetadataRequest", "0-8"),
        ("ControlledShutdownRequest", "0-3"),
    ]:
        assert (specs[name]["validVersions"], specs[name]["deprecatedVersions"]) == (valid, valid)
        assert "zkBroker" in specs[name]["listeners"]
    commit = {f["name"]: f for f in _fields(specs["OffsetCommitRequest"], "Topics", "Partitions")}
    assert commit["CommitTimestamp"]["versions"] == "1"
    assert {f["name"]: f["versions"] for f in _partitions(specs["ListOffsetsRequest"])}[
        "MaxNumOffsets"
    ] == "0"
    assert "AlterPartitionRequest" in specs and "AlterIsrRequest" not in specs
    assert "SubscriptionInfo" in specs and "SubscriptionInfoData" in specs  # renamed data specs
    messages = unionpkg.messages_of(unionpkg.union_raws())
    catalog = build_catalog(messages, Facts())
    # every record type of the group coordinator, 9 (share group partition metadata of
    # 3.9 and 4.0, gone in 4.1) included; no release has a type 18
    group = [r.record_type for r in catalog.coordinators["group"]]
    assert group == [t for t in range(24) if t != 18]
    assert [r.record_type for r in catalog.coordinators["transaction"]] == [0]


def _digest(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*.py"))
    }


def test_the_union_package_is_the_same_under_other_hash_seeds(tmp_path: Path) -> None:
    runs = []
    for seed in ("1", "2"):
        out = tmp_path / f"seed{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        runs.append(
            (
                out,
                subprocess.Popen(
                    [sys.executable, "-m", "tests.support.unionpkg", str(out)], cwd=ROOT, env=env
                ),
            )
        )
    for out, process in runs:
        assert process.wait(timeout=300) == 0
    first, second = (_digest(out / "kafka_union") for out, _ in runs)
    assert len(first) > 150 and first == second
    again = json.dumps([r.data for r in union_specs(unionpkg.release_sets())], sort_keys=False)
    assert again == json.dumps([r.data for r in unionpkg.union_raws()], sort_keys=False)
