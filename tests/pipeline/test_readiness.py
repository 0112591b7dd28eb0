"""Upgrade readiness judged without Spark: versions and message formats against real spec
sets and release tables (``pipeline.readiness``), the verdict and its gaps
(``pipeline.verdict``), and what to do (``pipeline.advice``, ``client_lines.json``). The
pipeline's readiness/ table over real traffic is checked in test_pipeline_spark.py and
test_mixed_fleet.py."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from kafka_specgen.library import SpecSet
from kafka_specgen.pipeline.advice import TABLE, bug_rows, client_lines, fix_for, identify
from kafka_specgen.pipeline.readiness import (
    ReadinessRow,
    Target,
    TargetError,
    client_label,
    judge_format,
    judge_rows,
    judge_version,
)
from kafka_specgen.pipeline.tables.readiness import unseen_brokers
from kafka_specgen.pipeline.verdict import Evidence, gap_rows, verdict
from kafka_specgen.versions import Versions
from tests.support import genpkg

OLD = genpkg.CORPORA / "3.8.0"


@pytest.fixture(scope="module")
def target() -> Target:
    """kafka-python 3.0.12's specs: Kafka 4.x-era (Produce 3-13, Fetch 4-18, ...)."""
    return Target([genpkg.kafka_python_specs()], label="kafka-python 4.x specs")


def request(client_id: str, api_key: int, name: str, version: int, **extra: Any) -> dict[str, Any]:
    return {
        "address": "10.0.0.5",
        "client_ids": [client_id],
        "api_key": api_key,
        "api_name": name,
        "api_version": version,
        "requests": 3,
        **extra,
    }


def test_versions_the_target_does_not_accept_break(target: Target) -> None:
    assert target.accepted[0][1] == Versions(3, 13)  # what the spec set says: the premise
    for version in (0, 1, 2):
        j = judge_version(target, 0, version, version, None)
        assert j.verdict == "breaks" and not j.supported and j.target_versions == "3-13"
        assert j.reason == (
            f"Produce v{version} is not accepted: the target accepts v3-13 only (the client "
            "asked for no ApiVersions: it sends fixed versions)"
        )
    assert judge_version(target, 0, 3, 3, None).supported
    missing = judge_version(target, 999, 0, 0, 5)
    assert missing.verdict == "breaks" and missing.target_versions == "none"
    assert missing.reason.startswith("api key 999 (api key 999) is not in the target")


def test_above_the_highest_is_negotiated_unless_the_client_is_pinned(target: Target) -> None:
    negotiating = judge_version(target, 18, 5, 5, 5)  # ApiVersions: the target has 0-4
    assert negotiating.verdict == "ok" and negotiating.will_use == 4
    assert negotiating.reason.startswith("ok, will use v4: v5 is newer than the target's")
    pinned = judge_version(target, 18, 5, 5, None)
    assert pinned.verdict == "breaks"
    assert "above the target's highest (v4)" in pinned.reason


def test_message_formats_follow_the_targets_produce_versions(target: Target) -> None:
    for magic in (0, 1):
        j = judge_format(target, magic)
        assert not j.supported
        assert f"message format v{magic} (magic {magic})" in j.reason and "KIP-724" in j.reason
    assert judge_format(target, 2).supported
    if OLD.is_dir():  # Kafka 3.8 still takes Produce v0-v2, and with it magic 0 and 1
        old = Target([OLD / "message"])
        assert judge_format(old, 0).supported and judge_format(old, 1).supported
        assert "Produce v0-2" in judge_format(old, 1).reason


def test_a_version_not_accepted_breaks_whatever_else_the_client_sent(target: Target) -> None:
    """The same client sent Produce v2 on one connection and v7 on another: the v2 row is
    a break (it may send v2 again), the v7 row is fine."""
    rows = judge_rows(
        target,
        [
            request("app", 0, "Produce", 2, broker_newest=2),
            request("app", 0, "Produce", 7, broker_newest=9),
        ],
    )
    assert [(r.api_version, r.verdict, r.will_use) for r in rows] == [
        (2, "breaks", None),
        (7, "ok", 7),
    ]
    assert "the client also sent v7, but sent v2 on this connection" in rows[0].reason
    result = verdict(rows, target.label)
    assert result.state == "breaks" and result.breaking == {
        "software unknown at 10.0.0.5 ('app')": ["Produce v2"]
    }


def test_a_clients_newest_version_is_inferred_with_kip35(target: Target) -> None:
    def judged(version: int, broker: int | None) -> ReadinessRow:
        [row] = judge_rows(target, [request("a", 1, "Fetch", version, broker_newest=broker)])
        return row

    old = judged(3, 11)  # the client stopped at v3 though the broker had v11
    assert old.verdict == "breaks"
    assert "v3 is the client's newest: the broker offered v11" in old.reason
    capped = judged(3, 3)  # the broker's newest: the client may have more, but v3 breaks
    assert capped.verdict == "breaks" and "cannot show whether the client has a newer" in (
        capped.reason
    )
    assert judged(12, 12).reason.startswith("ok, will use v12 or later:")
    assert judged(12, 16).reason.startswith("ok, will use v12:")
    assert judged(12, 16).client_newest == "v12 (below the broker's v16)"
    assert judged(18, 18).reason.startswith("ok, will use v18:")


def test_optional_apis_do_not_break_a_client() -> None:
    """Kafka 3.0 has no telemetry API (KIP-714 came in 3.7): a client that used it against
    a newer broker just stops; an API clients need is a break."""
    old = Target.release("3.0")
    assert 71 not in old.accepted
    rows = judge_rows(
        old,
        [
            request("rd", 71, "GetTelemetrySubscriptions", 0, broker_newest=0),
            request("rd", 75, "DescribeTopicPartitions", 0, broker_newest=0),
        ],
    )
    assert [r.verdict for r in rows] == ["optional", "breaks"]
    assert list(verdict(rows, old.label).breaking.values()) == [["DescribeTopicPartitions v0"]]


def test_a_release_as_target() -> None:
    """A release target is what its brokers accept, from the release table: 4.0.0 dropped
    JoinGroup v0-1 (4.0.1 restored them) and every 4.x refuses Produce v0-2, which it still
    advertises (KAFKA-18659)."""
    target = Target.release("4.0")
    assert target.label == "Kafka 4.0.0" and target.release_name == "4.0.0"
    assert target.accepted[11][1] == Versions(2, 9)
    assert Target.release("4.0.2").accepted[11][1] == Versions(0, 9)
    assert judge_version(target, 0, 2, 2, None).verdict == "breaks"  # KIP-896
    assert target.advertises(0, 2)  # ... though advertised
    assert judge_version(target, 0, 9, 9, 11).reason.startswith("ok, will use v9")
    assert judge_version(Target.release("2.4"), 0, 2, 2, None).verdict == "ok"
    with pytest.raises(TargetError, match="no Kafka 9.9 in the release table"):
        Target.release("9.9")


def test_removed_and_deprecated_versions_of_a_spec_target() -> None:
    newest, trunk = SpecSet.of_release("4.3.1"), SpecSet.of_release("trunk-2024-10")
    removed = judge_version(Target(newest), 4, 7, 7, None, "LeaderAndIsr")
    assert removed.verdict == "breaks" and "was removed from Kafka in the target" in removed.reason
    metadata = judge_version(Target(trunk), 3, 1, 1, 12)  # trunk deprecates Metadata v0-3
    assert metadata.supported and "deprecated there" in metadata.reason
    assert "deprecated" not in judge_version(Target(trunk), 3, 12, 12, 12).reason


def test_client_labels() -> None:
    assert client_label("librdkafka", "2.16", "10.0.0.5", ["a", "b"]) == (
        "librdkafka 2.16 at 10.0.0.5 ('a', 'b')"
    )
    assert client_label(None, None, None, ["p"]) == "'p' (software unknown)"
    assert client_label(None, None, None, []) == "(no client id) (software unknown)"


# --- the verdict and what it does not know ----------------------------------------------------


def test_gaps_make_the_verdict_incomplete_never_ready(target: Target) -> None:
    rows = judge_rows(
        target,
        [
            request("admin", 3, "Metadata", 12, broker_newest=12),
            request("prod", 0, "Produce", 9, broker_newest=11),
        ],
    )
    ready = verdict(rows, target.label)
    assert ready.state == "ready" and ready.exit_status() == 0
    assert ready.headline().startswith("all 2 clients seen are ready")
    admin = [r for r in rows if r.client_ids == ["admin"]]
    gaps = gap_rows(
        Evidence(undecoded=7, without_data=admin, unseen_brokers=["b2:9092", "b3:9092"]),
        target.label,
    )
    assert [(g.kind, g.verdict, g.gap, g.client_ids) for g in gaps] == [
        ("gap", "incomplete", "undecoded", None),
        ("gap", "incomplete", "no_data", ["admin"]),
        ("gap", "incomplete", "unseen_brokers", None),
    ]
    result = verdict(rows + gaps, target.label)
    assert result.state == "incomplete" and result.exit_status() == 3 and not result.ready
    text = result.text()
    assert text.startswith("incomplete: no break found for the 2 clients seen")
    assert "not observed: 7 frames could not be decoded: the verdict covers only the rest" in text
    assert (
        "not observed: no Produce or Fetch was captured for these clients: what they send when "
        "they produce or consume was not seen (software unknown at 10.0.0.5 ('admin'))" in text
    )
    assert "Metadata names brokers this capture never saw traffic to (b2:9092, b3:9092)" in text
    broken = judge_rows(target, [request("old", 0, "Produce", 1, broker_newest=None)])
    worse = verdict(broken + gaps, target.label)
    assert worse.state == "breaks" and worse.exit_status() == 1
    assert worse.headline().endswith("(and the capture is incomplete)")


def test_legacy_produce_without_batches_is_a_gap(target: Target) -> None:
    rows = judge_rows(target, [request("pinned", 0, "Produce", 2, broker_newest=None)])
    [gap] = gap_rows(Evidence(legacy_produce_without_batches=rows), target.label)
    assert gap.gap == "no_batches" and gap.reason.startswith(
        "cannot judge message formats: no record batches were read"
    )


def test_brokers_named_but_never_seen() -> None:
    seen = ["10.0.0.2:9092", "10.0.0.3:9092"]
    assert unseen_brokers(["10.0.0.2:9092", "10.0.0.3:9092"], seen) == []
    assert unseen_brokers(["10.0.0.2:9092", "10.0.0.4:9092"], seen) == []  # .3 may be .4's name
    assert unseen_brokers(["10.0.0.2:9092", "10.0.0.4:9092", "10.0.0.5:9092"], seen) == [
        "10.0.0.4:9092",
        "10.0.0.5:9092",
    ]
    # names for addresses, and a capture proxy in front of one broker: counted as seen
    assert unseen_brokers(["localhost:29092"], ["127.0.0.1:9092"]) == []
    assert unseen_brokers(["localhost:9092"], ["127.0.0.1:9092"]) == []
    assert unseen_brokers(["kafka-1:9092", "kafka-2:9092", "kafka-3:9092"], ["10.1.1.1:9092"]) == [
        "kafka-1:9092",
        "kafka-2:9092",
        "kafka-3:9092",
    ]


# --- what to do -----------------------------------------------------------------------------


def test_the_client_lines_table_has_every_line_with_sources() -> None:
    lines = {line.line: line for line in client_lines()}
    assert set(lines) >= {
        "librdkafka",
        "kafka-python",
        "aiokafka",
        "kafkajs",
        "sarama",
        "franz-go",
        "java",
    }
    for line in lines.values():
        assert line.floors, line.line
        for floor in line.floors:
            assert floor.sources and all(s.startswith("https://") for s in floor.sources)
        for bug in line.bugs:
            assert bug.links and all(link.startswith("https://") for link in bug.links)
    raw = json.loads(TABLE.read_text())
    for entry in raw["lines"]:
        for pattern in [*entry["software"].values(), *entry["client_ids"]]:
            re.compile(pattern)
    bugs = {bug.id: bug for line in lines.values() for bug in line.bugs}
    assert bugs["librdkafka-compression-needs-produce-v0"].fixed_in == "2.11.1"
    assert "https://github.com/confluentinc/librdkafka/issues/4956" in (
        bugs["librdkafka-compression-needs-produce-v0"].links
    )
    assert bugs["kafka-python-sasl-handshake-v0"].affects_below == "2.1.0"


def test_clients_are_recognised_by_software_or_default_client_id() -> None:
    rd = identify("confluent-kafka-python", "2.16.1-rdkafka-2.10.0", ["app"])
    assert rd is not None and rd.line.line == "librdkafka" and rd.version == "2.10.0"
    assert not rd.guessed
    kp = identify(None, None, ["kafka-python-2.0.2"])
    assert kp is not None and kp.line.line == "kafka-python" and kp.version == "2.0.2"
    assert kp.guessed
    assert identify(None, None, ["billing"]) is None
    assert identify("my-own-client", "1.0", ["kafka-python-2.0.2"]) is None


def test_what_to_do_about_a_break() -> None:
    target = Target.release("4.0")
    pinned = judge_rows(
        target, [request("kafka-python-2.0.2", 0, "Produce", 2, broker_newest=None)]
    )
    fix = fix_for(pinned, target)
    assert fix is not None
    assert fix.startswith("kafka-python 2.0.2 (going by its client id) is recent enough, so its")
    assert "api_version setting" in fix and "it must send Produce v3 or later" in fix
    old_rd = [
        r._replace(software_name="librdkafka", software_version="1.5.0", client_ids=["rd"])
        for r in judge_rows(target, [request("rd", 1, "Fetch", 3, broker_newest=11)])
    ]
    fix = fix_for(old_rd, target) or ""
    assert fix.startswith("upgrade librdkafka 1.5.0 to ") and "Fetch v4 or later" in fix
    assert "https://cwiki.apache.org/confluence/display/KAFKA/KIP-896" in fix
    unknown = judge_rows(target, [request("billing", 1, "Fetch", 2, broker_newest=None)])
    fix = fix_for(unknown, target) or ""
    assert fix.startswith("software unknown; it must send Fetch v4 or later.")
    assert "kafka-python 2.0.2" in fix and "Java client 2.1.0" in fix and "unpin it" in fix
    fine = judge_rows(target, [request("ok", 1, "Fetch", 12, broker_newest=17)])
    assert fix_for(fine, target) is None


def test_known_bugs_that_bite_on_the_target() -> None:
    """librdkafka before 2.11.1 drops compression where the broker does not advertise
    Produce v0: a target whose brokers advertise v0-v12 (Kafka 4.0 does, KAFKA-18659) is
    safe, one that advertises v3-v12 only is not."""
    target = Target.release("4.0")
    rows = [
        r._replace(software_name="librdkafka", software_version="2.10.0", client_ids=["rd"])
        for r in judge_rows(target, [request("rd", 0, "Produce", 11, broker_newest=12)])
    ]
    target.advertised[0] = Versions(3, 12)
    target.advertised[11] = Versions(2, 9)  # Kafka 4.0.0: JoinGroup v0-v1 gone
    found = {b.gap: b for b in bug_rows(rows, target)}
    assert set(found) == {
        "librdkafka-compression-needs-produce-v0",
        "librdkafka-features-need-joingroup-v0",
    }
    compression = found["librdkafka-compression-needs-produce-v0"]
    assert compression.kind == "bug" and compression.verdict == "known bug"
    assert compression.reason.startswith("librdkafka before 2.11.1 sends record batches")
    assert "https://github.com/confluentinc/librdkafka/pull/5130" in (compression.fix or "")
    target.advertised[0], target.advertised[11] = Versions(0, 12), Versions(0, 9)
    assert bug_rows(rows, target) == []
    newer = [r._replace(software_version="2.11.1") for r in rows]
    target.advertised[0] = Versions(3, 12)
    assert bug_rows(newer, target) == []
    result = verdict(rows + bug_rows(rows, target), target.label)
    assert result.state == "ready" and list(result.bugs) == ["librdkafka 2.10.0 at 10.0.0.5 ('rd')"]


def test_a_target_that_does_not_load_fails_before_anything_runs(tmp_path: Path) -> None:
    bad = tmp_path / "BadRequest.json"
    bad.write_text('{"apiKey": 0, "type": "request", "name": "ProduceRequest"}')
    with pytest.raises(Exception, match="ProduceRequest|validVersions"):
        Target([bad])
