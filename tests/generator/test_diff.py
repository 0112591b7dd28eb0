"""``kafka-specgen diff``: every consecutive pair of the corpora, with facts checked by hand.

Each fact asserted below was read from the two JSON files themselves (validVersions,
flexibleVersions, apiKey, field declarations) before it was written here; the comment
next to it names the file and what it says. The synthetic specs at the bottom check each
evolution rule in isolation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kafka_specgen.cli import main
from kafka_specgen.diff import SpecDiff, diff_models, diff_paths, load_model, render
from kafka_specgen.versions import version_ranges as ranges
from kafka_specgen.model import Message

from tests.support.genpkg import CORPORA, KAFKA_PYTHON_SET, RELEASES

#: Every bundled spec set in the order Kafka cut them, then kafka-python's.
ORDER = [*RELEASES, KAFKA_PYTHON_SET]
PAIRS = list(zip(ORDER, ORDER[1:])) + [("3.8.0", "4.0.2")]

_MODELS: dict[str, list[Message]] = {}
_DIFFS: dict[tuple[str, str], SpecDiff] = {}


def model(name: str) -> list[Message]:
    if name not in _MODELS:
        _MODELS[name] = load_model(CORPORA / name)
    return _MODELS[name]


def diff(old: str, new: str) -> SpecDiff:
    if (old, new) not in _DIFFS:
        _DIFFS[old, new] = diff_models(model(old), model(new), old, new)
    return _DIFFS[old, new]


def rules(d: SpecDiff, message: str) -> dict[str, list[str]]:
    """rule -> [change text] for one message."""
    out: dict[str, list[str]] = {}
    for c in d.message(message).changes:
        out.setdefault(c.rule, []).append(c.text())
    return out


def versions_line(d: SpecDiff, message: str) -> tuple[str | None, str | None]:
    m = d.message(message)
    return m.old_versions, m.new_versions


@pytest.mark.parametrize("old,new", PAIRS, ids=[f"{a}->{b}" for a, b in PAIRS])
def test_every_pair_renders_in_every_format(old: str, new: str) -> None:
    d = diff(old, new)
    assert d.summary()["changed"] > 0
    text = render(d, "text")
    assert text.startswith(f"spec diff: {old} -> {new}")
    data = json.loads(render(d, "json"))
    assert data["summary"] == d.summary()
    assert {m["name"] for m in data["messages"]} == {
        m.name for m in d.messages if m.status != "unchanged"
    }
    markdown = render(d, "markdown")
    assert markdown.startswith("# Spec changes")
    # Never a version arithmetic artefact: a message whose valid versions did not
    # change reports no versions-added/removed.
    for m in d.messages:
        if m.status == "changed" and m.old_versions == m.new_versions:
            assert not {c.rule for c in m.changes} & {"versions-added", "versions-removed"}


def test_2_4_to_2_8() -> None:
    d = diff("2.4.0", "2.8.0")
    # ProduceRequest.json: validVersions 0-8 -> 0-9; flexibleVersions "none" -> "9+".
    assert versions_line(d, "ProduceRequest") == ("0-8", "0-9")
    r = rules(d, "ProduceRequest")
    assert r["versions-added"] == ["versions 9 added"]
    assert r["flexible-versions-changed"] == ["flexible versions none -> 9+"]
    # ... and version 9 is new, so no existing version changed its flexibility.
    assert "flexible-versions-changed-existing" not in r
    # Records: "type": "bytes" in 2.4.0, "records" in 2.8.0: the same wire format.
    assert r["field-retyped-compatible"] == [
        "TopicData.PartitionData.Records: type changed bytes -> records (same wire format)"
    ]
    # FetchRequest.json: 0-11 -> 0-12, flexible none -> 12+.
    assert versions_line(d, "FetchRequest") == ("0-11", "0-12")
    # AddPartitionsToTxnRequest.json: 0-1 / none -> 0-3 / 3+.
    assert rules(d, "AddPartitionsToTxnRequest")["versions-added"] == ["versions 2-3 added"]
    # DescribeProducersRequest.json and EnvelopeRequest.json first appear in 2.8.0
    # (apiKey 61 and 58, validVersions "0", flexibleVersions "0+").
    for name, key in (("DescribeProducersRequest", 61), ("EnvelopeRequest", 58)):
        m = d.message(name)
        assert (m.status, m.api_key, m.new_versions, m.new_flexible) == ("added", key, "0", "0+")
    # SaslHandshakeRequest.json has no flexibleVersions in 2.8.0 (the old generator read
    # that as "none", as 2.4.0 says explicitly): no flexible change.
    assert "flexible-versions-changed" not in rules(d, "SaslHandshakeRequest")


def test_2_8_to_3_0() -> None:
    d = diff("2.8.0", "3.0.0")
    # metadata/RegisterBrokerRecord.json: validVersions "0"; no flexibleVersions in 2.8.0,
    # "0+" in 3.0.0: version 0 changed its wire format (KRaft was early access in 2.8).
    r = rules(d, "RegisterBrokerRecord")
    assert r["flexible-versions-changed-existing"] == [
        "existing versions 0 became flexible (their wire format changes)"
    ]
    assert d.message("RegisterBrokerRecord").changes[0].severity in ("info", "violation")
    assert d.count("violation") > 0
    # OffsetFetchRequest.json: 0-7 -> 0-8.
    assert versions_line(d, "OffsetFetchRequest") == ("0-7", "0-8")


def test_3_0_to_3_5() -> None:
    d = diff("3.0.0", "3.5.0")
    # AddPartitionsToTxnRequest.json: 0-3 -> 0-4; the top-level TransactionalId,
    # ProducerId, ProducerEpoch, Topics ("0+") became V3AndBelow* ("0-3") and the v4
    # batch form Transactions ("4+") was added: renames, not remove + add.
    r = rules(d, "AddPartitionsToTxnRequest")
    assert r["versions-added"] == ["versions 4 added"]
    renamed = " ".join(r["field-renamed"])
    for old, new in (
        ("TransactionalId", "V3AndBelowTransactionalId"),
        ("ProducerId", "V3AndBelowProducerId"),
        ("ProducerEpoch", "V3AndBelowProducerEpoch"),
        ("Topics", "V3AndBelowTopics"),
    ):
        assert f"field renamed {old} -> {new}" in renamed
    assert any(t.startswith("Transactions: field added") for t in r["field-added"])
    assert "field-removed" not in r
    # ConsumerGroupHeartbeatRequest.json is new in 3.5.0: apiKey 68, version 0.
    m = d.message("ConsumerGroupHeartbeatRequest")
    assert (m.status, m.api_key, m.new_versions) == ("added", 68, "0")
    # MetadataRequest.json: 0-11 -> 0-12; FetchRequest.json: 0-12 -> 0-15.
    assert versions_line(d, "MetadataRequest") == ("0-11", "0-12")
    assert rules(d, "FetchRequest")["versions-added"] == ["versions 13-15 added"]
    # metadata/RegisterBrokerRecord.json: 0 -> 0-2.
    assert versions_line(d, "RegisterBrokerRecord") == ("0", "0-2")


def test_3_5_to_3_8() -> None:
    d = diff("3.5.0", "3.8.0")
    # ProduceRequest.json: 0-9 -> 0-11, and 3.8.0 adds "deprecatedVersions": "0-6".
    r = rules(d, "ProduceRequest")
    assert r["versions-added"] == ["versions 10-11 added"]
    assert r["deprecated-versions-changed"] == ["deprecated versions none -> 0-6"]
    # DescribeTopicPartitionsRequest.json is new: apiKey 75, version 0.
    m = d.message("DescribeTopicPartitionsRequest")
    assert (m.status, m.api_key, m.new_versions) == ("added", 75, "0")
    # ListGroupsRequest.json: 0-4 -> 0-5; FetchRequest.json 0-15 -> 0-16.
    assert versions_line(d, "ListGroupsRequest") == ("0-4", "0-5")
    assert versions_line(d, "FetchRequest") == ("0-15", "0-16")


def test_3_8_to_trunk() -> None:
    d = diff("3.8.0", "trunk-2024-10")
    # ApiVersionsRequest.json 0-3 -> 0-4; FetchRequest.json 0-16 -> 0-17;
    # ConsumerGroupHeartbeatRequest.json 0 -> 0-1; FetchSnapshotRequest.json 0 -> 0-1.
    assert versions_line(d, "ApiVersionsRequest") == ("0-3", "0-4")
    assert versions_line(d, "FetchRequest") == ("0-16", "0-17")
    assert versions_line(d, "ConsumerGroupHeartbeatRequest") == ("0", "0-1")
    assert versions_line(d, "FetchSnapshotRequest") == ("0", "0-1")
    # Nothing was removed and every rule held (Kafka's checker runs on trunk).
    assert d.summary()["absent"] == 0
    assert d.count("violation") == 0


def test_3_8_to_4_0_reports_kip_896() -> None:
    """Kafka 4.0 removed the ZooKeeper-era inter-broker APIs (their files keep the key with
    validVersions "none") and raised the lowest version of many others (KIP-896)."""
    d = diff("3.8.0", "4.0.2")
    old = {m.name: m for m in model("3.8.0")}
    removed = {m.name for m in model("4.0.2") if m.removed}
    # message/LeaderAndIsrRequest.json ... ControlledShutdownResponse.json in 4.0.2.
    assert removed == {
        f"{api}{side}"
        for api in ("LeaderAndIsr", "StopReplica", "UpdateMetadata", "ControlledShutdown")
        for side in ("Request", "Response")
    }
    for name in removed:
        m = d.message(name)
        assert m.status == "changed" and m.new_versions == "none"
        [change] = m.changes
        assert (change.severity, change.rule) == ("breaking", "api-removed")
        assert change.detail.startswith(
            f"every version removed (had versions {old[name].valid_versions})"
        )
    # Every request whose lowest version went up, worked out from the two models here,
    # is reported as versions removed, and nothing else is.
    raised = {
        m.name
        for m in model("4.0.2")
        if m.type == "request"
        and not m.removed
        and m.name in old
        and m.valid_versions.lo > old[m.name].valid_versions.lo
    }
    reported = {
        m.name
        for m in d.messages
        if m.type == "request" and any(c.rule == "versions-removed" for c in m.changes)
    }
    assert reported == raised and len(raised) == 20
    # ProduceRequest.json 0-11 -> 3-12, FetchRequest.json 0-16 -> 4-17.
    assert rules(d, "ProduceRequest")["versions-removed"] == ["versions 0-2 removed"]
    assert rules(d, "FetchRequest")["versions-removed"] == ["versions 0-3 removed"]
    assert d.count("violation") == 0


def test_4_0_to_4_1_declares_coordinator_records() -> None:
    d = diff("4.0.2", "4.1.2")
    # group-coordinator/OffsetCommitKey.json: "data" with validVersions "0-1" (its record
    # type ids) in 4.0.2; "coordinator-key", apiKey 1, validVersions "0" in 4.1.2.
    [change] = d.message("OffsetCommitKey").changes
    assert (change.severity, change.rule) == ("info", "coordinator-record-declared")
    assert change.detail == "now a coordinator-key record, record type 1"
    # OffsetCommitValue.json: validVersions 0-4 on both sides; tagged topicId added.
    r = rules(d, "OffsetCommitValue")
    assert r["coordinator-record-declared"] == ["now a coordinator-value record, record type 1"]
    assert r["field-added"] == ["topicId: tagged field (tag 0) added, uuid, versions 4+"]
    assert d.message("OffsetCommitValue").group_title == (
        "coordinator record OffsetCommitValue (record type 1)"
    )
    # No key record reports a version change: its versions were record type ids.
    for m in d.messages:
        if m.type == "coordinator-key":
            assert {c.rule for c in m.changes} <= {"coordinator-record-declared", "message-added"}


def test_trunk_to_kafka_python() -> None:
    """The versions Kafka 4.0 removed (KIP-896), as the kafka-python 3.0.12 set has them."""
    d = diff("trunk-2024-10", "kafka-python-3.0.12")
    # ProduceRequest.json: 0-11 -> 3-13.
    assert versions_line(d, "ProduceRequest") == ("0-11", "3-13")
    r = rules(d, "ProduceRequest")
    assert r["versions-removed"] == ["versions 0-2 removed"]
    assert r["versions-added"] == ["versions 12-13 added"]
    # ... TopicData.Name is "0-12" there and TopicData.TopicId "uuid", "13+".
    assert "TopicData.TopicId: field added, uuid, versions 13+" in r["field-added"]
    assert "TopicData.Name: versions 3+ -> 3-12" in r["field-versions-changed"]
    # FetchRequest.json: 0-17 -> 4-18; HighWatermark: int64, tag 1, taggedVersions 18+.
    r = rules(d, "FetchRequest")
    assert r["versions-removed"] == ["versions 0-3 removed"]
    assert r["field-added"] == [
        "Topics.Partitions.HighWatermark: tagged field (tag 1) added, int64, versions 18+"
    ]
    assert "field-added-to-existing-version" not in r
    # MetadataRequest.json: 0-12 -> 0-13. Kafka 4.0 kept Metadata v0-3 (they are only
    # deprecated in trunk): nothing removed.
    assert versions_line(d, "MetadataRequest") == ("0-12", "0-13")
    assert "versions-removed" not in rules(d, "MetadataRequest")
    # MetadataResponse.json: a top-level ErrorCode, int16, "13+".
    assert rules(d, "MetadataResponse")["field-added"] == [
        "ErrorCode: field added, int16, versions 13+"
    ]
    # ListOffsets 0-10 -> 1-11, OffsetCommit 0-9 -> 2-10, OffsetFetch 0-9 -> 1-10.
    assert rules(d, "ListOffsetsRequest")["versions-removed"] == ["versions 0 removed"]
    assert rules(d, "OffsetCommitRequest")["versions-removed"] == ["versions 0-1 removed"]
    assert rules(d, "OffsetFetchRequest")["versions-removed"] == ["versions 0 removed"]
    # The ZooKeeper-era inter-broker APIs are gone (no such files in kafka-python).
    for name in (
        "LeaderAndIsrRequest",
        "StopReplicaRequest",
        "UpdateMetadataRequest",
        "ControlledShutdownRequest",
        "EnvelopeRequest",
    ):
        assert d.message(name).status == "absent"
    # A smaller set is not a break: the files kafka-python does not ship (metadata records,
    # raft messages, ...) are counted apart from the breaking changes.
    old_names = {m.name for m in load_model(CORPORA / "trunk-2024-10")}
    new_names = {m.name for m in load_model(CORPORA / "kafka-python-3.0.12")}
    absent = {m.name for m in d.messages if m.status == "absent"}
    renamed = {m.name for m in d.messages if "message-renamed" in rules(d, m.name)}
    assert absent == old_names - new_names - {
        "ListClientMetricsResourcesRequest",
        "ListClientMetricsResourcesResponse",
    }
    assert len(absent) > 100 and renamed
    assert all(c.rule != "message-absent" for m, c in d.changes if c.severity == "breaking")
    assert d.count("breaking") < 100
    text = render(d, "text")
    assert f"{len(absent)} not in the new set" in text.splitlines()[1]
    # apiKey 74: ListClientMetricsResources (trunk) is ListConfigResources (0-1) there.
    m = d.message("ListConfigResourcesResponse")
    r = rules(d, "ListConfigResourcesResponse")
    assert m.status == "changed" and m.new_versions == "0-1"
    assert r["message-renamed"][0].startswith("renamed from ListClientMetricsResourcesResponse")
    assert any("ClientMetricsResources -> ConfigResources" in t for t in r["field-renamed"])
    # Raising the lowest version breaks no evolution rule; no max version went down.
    assert d.count("violation") == 0
    summary = d.summary()
    # ListConfigResourcesRequest/Response are the only files new in kafka-python, and they
    # are the renamed api 74: no message is plainly added.
    assert summary["added"] == 0
    assert summary["breakings"] > 0


# --- the rules one at a time, on synthetic specs -----------------------------------------


def spec(
    name: str,
    fields: list[dict[str, Any]],
    versions: str = "0-2",
    flexible: str = "1+",
    kind: str = "request",
    key: int = 900,
) -> dict[str, Any]:
    return {
        "apiKey": key,
        "type": kind,
        "name": name,
        "validVersions": versions,
        "flexibleVersions": flexible,
        "fields": fields,
    }


def write(folder: Path, *specs: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for s in specs:
        (folder / f"{s['name']}.json").write_text(json.dumps(s))
        if s["type"] == "request":
            response = dict(
                s, type="response", name=s["name"].replace("Request", "Response"), fields=[]
            )
            (folder / f"{response['name']}.json").write_text(json.dumps(response))
    return folder


BASE = [
    {"name": "A", "type": "int32", "versions": "0+"},
    {"name": "B", "type": "string", "versions": "0+", "nullableVersions": "1+"},
    {"name": "T", "type": "int32", "versions": "1+", "taggedVersions": "1+", "tag": 0},
]


def rule_diff(tmp_path: Path, new_fields: list[dict[str, Any]], **kw: Any) -> dict[str, str]:
    old = write(tmp_path / "old", spec("XRequest", BASE))
    new = write(tmp_path / "new", spec("XRequest", new_fields, **kw))
    d = diff_paths(old, new)
    return {c.rule: c.severity for c in d.message("XRequest").changes}


def test_identical_specs_have_no_changes(tmp_path: Path) -> None:
    old = write(tmp_path / "old", spec("XRequest", BASE))
    d = diff_paths(old, old)
    assert {m.status for m in d.messages} == {"unchanged"}
    assert d.summary()["changed"] == 0


def test_rule_new_version_with_new_field_is_fine(tmp_path: Path) -> None:
    fields = BASE + [{"name": "C", "type": "int64", "versions": "3+"}]
    assert rule_diff(tmp_path, fields, versions="0-3") == {
        "versions-added": "info",
        "field-added": "info",
    }


def test_rule_field_added_to_existing_version(tmp_path: Path) -> None:
    fields = BASE + [{"name": "C", "type": "int64", "versions": "2+"}]
    got = rule_diff(tmp_path, fields)
    assert got["field-added-to-existing-version"] == "violation"


def test_rule_tagged_field_added_to_existing_version_is_fine(tmp_path: Path) -> None:
    fields = BASE + [
        {"name": "U", "type": "int64", "versions": "1+", "taggedVersions": "1+", "tag": 1}
    ]
    assert rule_diff(tmp_path, fields) == {"field-added": "info"}


def test_rule_max_version_lowered_and_versions_removed(tmp_path: Path) -> None:
    got = rule_diff(tmp_path, BASE, versions="1-1")
    assert got["max-version-lowered"] == "violation"
    assert got["versions-removed"] == "breaking"


def test_rule_min_version_raised_is_breaking_not_a_violation(tmp_path: Path) -> None:
    got = rule_diff(tmp_path, BASE, versions="1-2")
    assert got == {"versions-removed": "breaking"}


def test_rule_flexible_versions(tmp_path: Path) -> None:
    plain = [BASE[0], BASE[1]]
    old = write(tmp_path / "old", spec("XRequest", plain))
    new = write(tmp_path / "new", spec("XRequest", plain, flexible="2+"))
    got = {c.rule: c.severity for c in diff_paths(old, new).message("XRequest").changes}
    assert got["flexible-versions-shrunk"] == "violation"
    got = rule_diff(tmp_path / "b", [BASE[0], BASE[1]], flexible="0+")
    assert got["flexible-versions-changed-existing"] == "violation"


def test_rule_api_key_and_type(tmp_path: Path) -> None:
    assert rule_diff(tmp_path, BASE, key=901)["api-key-changed"] == "violation"


def test_rule_tag_changed_and_reused(tmp_path: Path) -> None:
    u = {"name": "U", "type": "int32", "versions": "1+", "taggedVersions": "1+", "tag": 1}
    old = write(tmp_path / "old", spec("XRequest", BASE + [u]))
    new = write(
        tmp_path / "new", spec("XRequest", [BASE[0], BASE[1], dict(BASE[2], tag=1), dict(u, tag=0)])
    )
    got = {c.rule: c.severity for c in diff_paths(old, new).message("XRequest").changes}
    assert got["tag-changed"] == "violation" and got["tag-reused"] == "violation"
    reused = [
        BASE[0],
        BASE[1],
        {"name": "Other", "type": "string", "versions": "1+", "taggedVersions": "1+", "tag": 0},
    ]
    got = rule_diff(tmp_path / "b", reused)
    assert got["tag-reused"] == "violation"
    assert got["field-removed"] == "breaking"


def test_rule_retyped_renamed_nullability_default(tmp_path: Path) -> None:
    retyped = [dict(BASE[0], type="int64"), BASE[1], BASE[2]]
    assert rule_diff(tmp_path / "a", retyped)["field-retyped"] == "violation"
    renamed = [dict(BASE[0], name="Alpha"), BASE[1], BASE[2]]
    assert rule_diff(tmp_path / "b", renamed) == {"field-renamed": "breaking"}
    nullable = [BASE[0], dict(BASE[1], nullableVersions="0+"), BASE[2]]
    assert rule_diff(tmp_path / "c", nullable) == {"nullability-changed": "info"}
    # A default matters on the wire where decoders fill it in: T is absent in v0.
    defaulted = [BASE[0], BASE[1], dict(BASE[2], default="7")]
    assert rule_diff(tmp_path / "d", defaulted)["default-changed"] == "violation"
    defaulted = [dict(BASE[0], default="7"), BASE[1], BASE[2]]
    assert rule_diff(tmp_path / "e", defaulted)["default-changed"] == "breaking"


def test_rule_untagging_a_field_breaks_existing_versions(tmp_path: Path) -> None:
    untagged = [BASE[0], BASE[1], {"name": "T", "type": "int32", "versions": "1+"}]
    got = rule_diff(tmp_path, untagged)
    assert got["field-layout-changed"] == "violation"


def test_ranges() -> None:
    assert ranges([0, 1, 2, 5, 7, 8]) == "0-2, 5, 7-8"
    assert ranges([]) == "none"


def test_cli_formats_and_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = write(tmp_path / "old", spec("XRequest", BASE))
    new = write(tmp_path / "new", spec("XRequest", BASE, versions="0-1"))
    assert main(["diff", str(old), str(new)]) == 0
    out = capsys.readouterr().out
    assert "API 900 X" in out and "max-version-lowered" in out
    assert main(["diff", str(old), str(new), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["summary"]["violations"] == 2  # the request and the response
    assert main(["diff", str(old), str(new), "--format", "markdown"]) == 0
    assert "## Evolution-rule violations" in capsys.readouterr().out
    assert main(["diff", str(old), str(new), "--fail-on-violation"]) == 1
    capsys.readouterr()
    # A bad spec on either side is one error line, exit 1.
    (new / "Broken.json").write_text("{")
    assert main(["diff", str(old), str(new)]) == 1
    assert "Broken.json" in capsys.readouterr().err


# --- releases by name (the tool's bundled spec data) ------------------------------------------


def test_cli_diff_of_two_releases_reports_kip_896(capsys: pytest.CaptureFixture[str]) -> None:
    """``diff 3.9 4.0``: each side a Kafka release, read from the bundle and named in the
    output. Kafka 4.0.0 removed the ZooKeeper-era APIs and the old versions (KIP-896), and
    JoinGroup v0-1, which 4.0.1 put back."""
    assert main(["diff", "3.9", "4.0", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["old"], data["new"]) == ("Kafka 3.9.0", "Kafka 4.0.0")
    found = {m["name"]: m for m in data["messages"]}

    def rules_of(name: str) -> dict[str, list[str]]:
        got: dict[str, list[str]] = {}
        for change in found[name]["changes"]:
            got.setdefault(change["rule"], []).append(change["detail"])
        return got

    for api in ("LeaderAndIsr", "StopReplica", "UpdateMetadata", "ControlledShutdown"):
        assert found[f"{api}Request"]["new_versions"] == "none"
        assert "api-removed" in rules_of(f"{api}Request")
    assert rules_of("ProduceRequest")["versions-removed"] == ["versions 0-2 removed"]
    assert rules_of("FetchRequest")["versions-removed"] == ["versions 0-3 removed"]
    assert rules_of("JoinGroupRequest")["versions-removed"] == ["versions 0-1 removed"]
    # 4.0.1 (4.0.2's spec data) serves JoinGroup from v0 again
    assert main(["diff", "3.9", "4.0.1"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("spec diff: Kafka 3.9.0 -> Kafka 4.0.1 (spec data of 4.0.2)\n")
    assert "  JoinGroupRequest: versions 0-9, flexible 6+\n" in text


def test_cli_diff_of_a_path_and_a_release(capsys: pytest.CaptureFixture[str]) -> None:
    """A side that names an existing path is that path; a release's bundled data equals
    the same files read from a folder."""
    assert main(["diff", str(CORPORA / "4.1.2"), "4.1.1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"spec diff: {CORPORA / '4.1.2'} -> Kafka 4.1.1 (spec data of 4.1.2)\n")
    assert "0 added, 0 not in the new set, 0 changed" in out


@pytest.mark.parametrize(
    ("side", "message"),
    [
        ("no/such/folder", "'no/such/folder': no such file or folder, and not a Kafka release"),
        ("2.3", "Kafka's JSON specs start at 2.4: release 2.3.0 has none"),
        ("9.1", "no bundled spec data for Kafka 9.1.0"),
    ],
)
def test_cli_diff_of_an_unknown_side_is_one_line(
    side: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["diff", "3.9", side]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("kafka-specgen diff: ")
    assert message in captured.err
