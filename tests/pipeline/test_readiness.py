"""Upgrade readiness judged without Spark (``pipeline.readiness``): API versions and message
formats against real spec sets, with the verdict. The pipeline's readiness/ table over
the golden captures is checked in test_pipeline_spark.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_specgen.pipeline.readiness import (
    Judgment,
    Target,
    TargetError,
    client_label,
    judge_rows,
    verdict,
)
from kafka_specgen.library import SpecSet
from kafka_specgen.versions import Versions
from tests.support import genpkg

OLD = genpkg.CORPORA / "3.8.0"


@pytest.fixture(scope="module")
def target() -> Target:
    """kafka-python 3.0.12's specs: Kafka 4.x-era (Produce 3-13, Fetch 4-18, ...)."""
    return Target([genpkg.kafka_python_specs()], label="kafka-python 4.x specs")


def test_removed_versions_and_missing_apis_are_not_supported(target: Target) -> None:
    produce = target.requests[0][1]
    assert produce == Versions(3, 13)  # what the spec set says: the test's premise
    for version in (0, 1, 2):
        j = target.judge_api(0, version)
        assert not j.supported and j.target_versions == "3-13"
        assert j.reason == (
            f"Produce v{version} was removed: the target accepts v3-13 only (the client "
            "asked for no ApiVersions, so its versions are fixed)"
        )
    assert target.judge_api(0, 3).supported and target.judge_api(0, 13).supported
    assert not target.judge_api(1, 3).supported and target.judge_api(1, 4).supported
    missing = target.judge_api(999, 0)
    assert not missing.supported and missing.target_versions == "none"
    assert missing.reason.startswith("api key 999 (api key 999) is not in the target")


def test_a_version_above_the_target_is_negotiated_not_broken(target: Target) -> None:
    j = target.judge_api(18, 5)  # ApiVersions: the target has 0-4
    assert j.supported and j.target_versions == "0-4"
    assert j.reason.startswith("ok, will use v4: v5 is newer than the target's highest")


def test_message_formats_follow_the_targets_produce_versions(target: Target) -> None:
    for magic in (0, 1):
        j = target.judge_format(magic)
        assert not j.supported
        assert f"message format v{magic} (magic {magic})" in j.reason and "KIP-724" in j.reason
    assert target.judge_format(2).supported
    if OLD.is_dir():  # Kafka 3.8 still takes Produce v0-v2, and with it magic 0 and 1
        old = Target([OLD / "message"])
        assert old.judge_format(0).supported and old.judge_format(1).supported
        assert "deprecated but still accepted" in old.judge_format(1).reason
        assert "Produce v0-2" in old.judge_format(1).reason


def test_rows_and_verdict(target: Target) -> None:
    kp = {"software_name": None, "software_version": None, "client_id": "old-producer"}
    rd = {"software_name": "librdkafka", "software_version": "2.16", "client_id": "rd"}
    rows = judge_rows(
        target,
        [
            {**kp, "api_key": 0, "api_name": "Produce", "api_version": 2, "requests": 12},
            {**kp, "api_key": 3, "api_name": "Metadata", "api_version": 1, "requests": 3},
            {**rd, "api_key": 0, "api_name": "Produce", "api_version": 10, "requests": 80},
        ],
        [{**kp, "magic": 1, "batches": 15}, {**rd, "magic": 2, "batches": 80}],
    )
    assert [(r.client_ids, r.kind, r.verdict, r.will_use) for r in rows] == [
        (["old-producer"], "api", "breaks", None),
        (["old-producer"], "api", "ok", 1),
        (["old-producer"], "message_format", "breaks", None),
        (["rd"], "api", "ok", 10),
        (["rd"], "message_format", "ok", 2),
    ]
    assert rows[0].requests == 12 and rows[2].batches == 15 and rows[2].magic == 1
    assert {r.target for r in rows} == {"kafka-python 4.x specs"}
    result = verdict(rows, target.label)
    assert not result.ready and result.clients == 2
    assert result.breaking == {
        "'old-producer' (software unknown)": ["Produce v2", "message format v1"]
    }
    text = result.text()
    assert text.splitlines()[0] == (
        "1 of 2 clients would break on the target (kafka-python 4.x specs):"
    )
    assert "  Produce v2: 1 client ('old-producer' (software unknown))" in text
    fine = verdict([r for r in rows if r.client_ids == ["rd"]], target.label)
    assert fine.ready and fine.text().startswith("all 1 clients seen are ready")


def test_a_clients_newest_version_is_inferred_with_kip35(target: Target) -> None:
    """A version below the broker's newest is the client's own newest; one equal to it
    says only "this or later"; without ApiVersions the versions are fixed."""
    client = {"software_name": "app", "software_version": "1", "address": "10.0.0.5"}

    def judged(*versions: int, broker: int | None) -> Judgment:
        rows = judge_rows(
            target,
            [
                {
                    **client,
                    "client_ids": ["a"],
                    "api_key": 1,
                    "api_version": v,
                    "broker_newest": broker,
                }
                for v in versions
            ],
        )
        assert len({(r.verdict, r.will_use, r.reason) for r in rows}) == 1
        return target.judge_api(1, max(versions), None, broker)

    # Fetch: the target has v4-18
    old = judged(2, 3, broker=11)  # the client stopped at v3 though the broker had v11
    assert old.verdict == "breaks" and "v3 is the client's newest: the broker offered v11" in (
        old.reason
    )
    capped = judged(3, broker=3)  # the broker's newest: the client may have more
    assert capped.verdict == "cannot tell" and capped.supported is None
    assert "its own newest is v3 or later; the target needs v4 or later" in capped.reason
    pinned = judged(3, broker=None)
    assert pinned.verdict == "breaks" and "its versions are fixed" in pinned.reason
    assert judged(12, broker=12).reason.startswith("ok, will use v12 or later:")
    assert judged(12, broker=16).reason.startswith("ok, will use v12:")
    assert judged(18, broker=18).reason.startswith("ok, will use v18:")


def test_cannot_tell_is_reported_apart(target: Target) -> None:
    rows = judge_rows(
        target,
        [
            {
                "address": "10.0.0.5",
                "client_ids": ["a"],
                "api_key": 1,
                "api_version": 3,
                "broker_newest": 3,
            },
        ],
    )
    result = verdict(rows, target.label)
    assert result.ready and result.undecided == {"software unknown at 10.0.0.5 ('a')": ["Fetch v3"]}
    assert result.text().splitlines()[1].startswith("cannot tell for 1 client")


def test_client_labels() -> None:
    assert client_label("librdkafka", "2.16", "10.0.0.5", ["a", "b"]) == (
        "librdkafka 2.16 at 10.0.0.5 ('a', 'b')"
    )
    assert client_label(None, None, None, ["p"]) == "'p' (software unknown)"
    assert client_label(None, None, None, []) == "(no client id) (software unknown)"


def test_a_target_that_does_not_load_fails_before_anything_runs(tmp_path: Path) -> None:
    bad = tmp_path / "BadRequest.json"
    bad.write_text('{"apiKey": 0, "type": "request", "name": "ProduceRequest"}')
    with pytest.raises(Exception, match="ProduceRequest|validVersions"):
        Target([bad])


def test_a_release_as_target() -> None:
    target = Target.release("4.0")
    assert target.label == "Kafka 4.0.0"
    assert target.requests[11][1] == Versions(2, 9)  # JoinGroup v0-1: gone in 4.0.0 only
    assert Target.release("4.0.2").requests[11][1] == Versions(0, 9)
    assert not target.judge_api(0, 2).supported  # Produce v0-2: gone in 4.0 (KIP-896)
    ok = target.judge_api(0, 9)
    assert ok.supported and ok.reason.startswith("ok, will use v9")
    assert Target.release("2.4").judge_api(0, 2).supported
    with pytest.raises(TargetError, match="no Kafka 9.9 in the release table"):
        Target.release("9.9")


def test_optional_apis_do_not_break_a_client() -> None:
    """Kafka 3.0 has no telemetry API (KIP-714 came in 3.7): a client that used it against
    a newer broker just stops; an API clients need is a break."""
    old = Target.release("3.0")
    assert 71 not in old.requests
    telemetry = old.judge_api(71, 0, "GetTelemetrySubscriptions")
    assert telemetry.supported and telemetry.reason.startswith("optional, not used after")
    rows = judge_rows(
        old,
        [
            {"client_ids": ["rd"], "api_key": 71, "api_version": 0, "api_name": "GetTelemetry"},
            {"client_ids": ["rd"], "api_key": 75, "api_version": 0, "api_name": "DescribeTopic"},
        ],
    )
    result = verdict(rows, old.label)
    assert list(result.breaking.values()) == [["DescribeTopic v0"]]


def test_removed_and_deprecated_versions_of_a_spec_target() -> None:
    newest, trunk = SpecSet.of_release("4.3.1"), SpecSet.of_release("trunk-2024-10")
    removed = Target(newest).judge_api(4, 7, "LeaderAndIsr")  # validVersions "none"
    assert not removed.supported and "was removed from Kafka in the target" in removed.reason
    metadata = Target(trunk).judge_api(3, 1)  # trunk deprecates Metadata v0-3
    assert metadata.supported and "deprecated there" in metadata.reason
    assert "deprecated" not in Target(trunk).judge_api(3, 12).reason


def test_the_newest_version_is_judged_against_its_own_connections_broker(
    target: Target,
) -> None:
    """The client's newest Fetch, v12, went to a broker whose newest is v12: that says "v12
    or later" only, whatever another connection's broker offered (v17 here)."""
    client = {"address": "10.0.0.5", "client_ids": ["a"], "api_key": 1}
    rows = judge_rows(
        target,
        [
            {**client, "api_version": 12, "broker_newest": 12},
            {**client, "api_version": 3, "broker_newest": 17},
        ],
    )
    assert {r.client_newest for r in rows} == {"v12 or later (the broker's newest)"}
    assert {r.will_use for r in rows} == {12}
