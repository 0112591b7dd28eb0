"""The release table (specs/facts/broker-releases.json) against its sources, each read here
independently of tools/release_table.py: kafka-python 3's captured ApiVersions answers, the
specs of each release (straight from the JSON files), and franz-go's kversion. Every
difference must be one the table explains."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from kafka.protocol.broker_version_data import BROKER_API_VERSIONS

from kafka_specgen.broker_releases import BrokerRelease, releases, table
from kafka_specgen.load import load_path
from kafka_specgen.release_names import Release
from tests.support import genpkg

ROOT = Path(__file__).resolve().parents[2]
KVERSION = ROOT / "tools" / "release_sources" / "kversion.json"
Ranges = dict[int, tuple[int, int]]


def kafka_python_name(key: tuple[int, ...]) -> str:
    return ".".join(map(str, key))


def diff(ours: Ranges, theirs: Ranges) -> dict[int, tuple[object, object]]:
    return {
        k: (ours.get(k), theirs.get(k))
        for k in set(ours) | set(theirs)
        if ours.get(k) != theirs.get(k)
    }


# --- kafka-python 3 -----------------------------------------------------------------------

#: What our rows hold beyond kafka-python's synthesized rows for brokers without ApiVersions:
#: the inter-broker APIs Kafka's KafkaApis.scala handles (kafka-python lists what clients send).
INTER_BROKER = {
    "0.8.0": {4: (0, 0), 5: (0, 0), 6: (0, 0), 7: (0, 0)},
    "0.8.1": {4: (0, 0), 5: (0, 0), 6: (0, 0), 7: (0, 0)},
    "0.8.2": {4: (0, 0), 5: (0, 0), 6: (0, 0), 7: (0, 0)},
    "0.9": {4: (0, 0), 5: (0, 0), 6: (0, 1), 7: (0, 1)},
}


def test_every_release_kafka_python_captured_has_its_ranges() -> None:
    """For every release in kafka-python's table, our row (ZooKeeper before 4.0) advertises
    exactly its ranges; before 0.10 (no ApiVersions) we accept its ranges plus the
    inter-broker APIs."""
    assert len(BROKER_API_VERSIONS) == 33
    for key, theirs in BROKER_API_VERSIONS.items():
        name = kafka_python_name(key)
        row = table().release(name)
        assert row.kind == ("kraft" if key[0] >= 4 else "zookeeper"), name
        if name in INTER_BROKER:
            assert row.api_versions in ("closes", "no answer") and not row.advertised(), name
            assert diff(row.accepted, dict(theirs)) == {
                k: (r, None) for k, r in INTER_BROKER[name].items()
            }, name
        else:
            assert row.api_versions == "answered"
            assert row.advertised() == dict(theirs), name
    # The 4.0 line: kafka-python captured 4.0.0 (JoinGroup from v2); 4.0.1 restored v0-1.
    assert table().release("4.0.0").advertised()[11] == BROKER_API_VERSIONS[(4, 0)][11] == (2, 9)
    assert table().release("4.0.1").advertised()[11] == (0, 9)


def test_kafka_python_names_every_row_it_knows_from_our_ranges() -> None:
    """kafka-python's infer_broker_version_from_api_versions, given each row's advertised
    ranges, names that row's release (its key) for every release it knows."""
    from kafka.protocol.broker_version_data import infer_broker_version_from_api_versions

    checked = 0
    for key in BROKER_API_VERSIONS:
        name = kafka_python_name(key)
        row = table().release(name)
        if not row.advertised():
            continue  # no ApiVersions: kafka-python probes instead
        for variant in (row.advertised(), row.advertised(telemetry=True)):
            assert infer_broker_version_from_api_versions(variant) == key, name
        checked += 1
    assert checked == 29


# --- the specs ------------------------------------------------------------------------------


def spec_ranges(folder: Path, listener: str, unstable: bool = False) -> Ranges:
    """What the request files of ``folder`` give a broker on ``listener``: every request
    whose listeners include it (all, before 2.8), at its valid versions, less an unstable
    latest version unless ``unstable``."""
    ranges: Ranges = {}
    for raw in load_path(folder):
        data = raw.data
        if data.get("type") != "request" or data["validVersions"].strip() == "none":
            continue
        listeners = data.get("listeners")
        if listeners is not None and listener not in listeners:
            continue
        lo, _, hi = data["validVersions"].strip().partition("-")
        top = int(hi or lo) - (1 if data.get("latestVersionUnstable") and not unstable else 0)
        if top >= int(lo):
            ranges[data["apiKey"]] = (int(lo), top)
    return ranges


def with_quirks(row: BrokerRelease, ranges: Ranges, advertised: bool = True) -> Ranges:
    """The specs' ranges changed as the row's quirks say real brokers change what they
    advertise (``advertised``) or accept."""
    ranges = dict(ranges)
    quirks = {q.id for q in row.quirks}
    if not advertised:
        quirks.discard("KAFKA-18659")  # advertised, not accepted: the specs' own range
    if "raft-apis-disabled" in quirks:
        for key in (52, 53, 54, 55):
            del ranges[key]
    if "envelope" in quirks:
        ranges[58] = (0, 0)
    if "KAFKA-18659" in quirks:
        ranges[0] = (0, ranges[0][1])
    return ranges


def corpus_of(row: BrokerRelease) -> Path | None:
    """The spec set of the row's line at or above it (4.0.1's is 4.0.2)."""
    sets = sorted(
        (Release.parse(p.name), p)
        for p in genpkg.corpus_folders()
        if p.name[0].isdigit() and p.name.count(".") == 2
    )
    for release, folder in sets:
        if release.line == row.release.line and release >= row.release:
            return folder
    return None


def test_rows_agree_with_the_specs_of_their_release() -> None:
    """From 2.4, every row's advertised ranges (with telemetry, and with unstable versions)
    are its release's specs for the kind's listener (unstable versions dropped), changed only
    by the quirks the row names."""
    checked = []
    for row in releases():
        folder = corpus_of(row)
        if row.release < Release.parse("2.4") or folder is None:
            continue
        listener = "zkBroker" if row.kind == "zookeeper" else "broker"
        stable = with_quirks(row, spec_ranges(folder, listener))
        assert row.advertised(telemetry=True) == stable, (row.label, folder.name)
        unstable = with_quirks(row, spec_ranges(folder, listener, unstable=True))
        assert row.advertised(telemetry=True, unstable=True) == unstable, row.label
        assert row.accepted == with_quirks(row, spec_ranges(folder, listener), False), row.label
        hidden = set(row.advertised(telemetry=True)) - set(row.advertised())
        assert hidden == ({71, 72} & set(stable) if row.kind == "kraft" else set()), row.label
        checked.append(row.label)
    assert len(checked) == 15 + 11 + 5, checked  # ZooKeeper 2.4-3.9, KRaft 2.8-3.9, 4.x


def test_what_the_quirks_change() -> None:
    """The facts the table adds to the specs, for a reader."""
    four = table().release("4.3")
    assert four.advertised()[0] == (0, 13) and four.accepted[0] == (3, 13)
    assert four.refusal(0, 2) is not None and four.refusal(0, 2).answer == "close"  # type: ignore[union-attr]
    assert 71 not in four.advertised() and four.advertised(telemetry=True)[71] == (0, 0)
    assert four.accepted[71] == (0, 0)  # answered even when not advertised
    assert four.advertised()[22] == (0, 5) and four.advertised(unstable=True)[22] == (0, 6)
    assert table().release("4.0.0").advertised()[11] == (2, 9)
    kraft28 = table().release("2.8", kraft=True)
    assert kraft28.advertised()[58] == (0, 0) and 4 not in kraft28.advertised()
    assert (
        55 not in table().release("2.8").advertised() and 4 in table().release("2.8").advertised()
    )
    assert 52 not in table().release("2.7").advertised()


# --- franz-go's kversion ------------------------------------------------------------------

#: Where kversion and our table differ, and why (Kafka's source decides; the rows' notes
#: cite it). kversion tracks maximum versions, so before 4.0 only keys and maxima count.
KVERSION_DISAGREES: dict[tuple[str, str], tuple[dict[int, tuple[object, object]], str]] = {
    ("zookeeper", "0.8.2.0"): (
        {11: (None, (0, 0)), 12: (None, (0, 0))},
        "0.8.2 parses JoinGroup and Heartbeat but KafkaApis has no handler for them",
    ),
    ("zookeeper", "0.10.2.0"): ({9: ((0, 2), (0, 1))}, "Protocol.java 0.10.2.0: OffsetFetch v0-2"),
    ("kraft", "2.8.0"): ({64: ((0, 0), None)}, "UnregisterBroker: broker listener, forwardable"),
    ("kraft", "3.0.0"): ({55: ((0, 0), None)}, "DescribeQuorum: broker listener, forwardable"),
    ("kraft", "3.1.0"): ({55: ((0, 0), None)}, "DescribeQuorum: broker listener, forwardable"),
    ("kraft", "3.2.0"): ({55: ((0, 0), None)}, "DescribeQuorum: broker listener, forwardable"),
    **{
        ("kraft", release): (
            {71: (None, (0, 0)), 72: (None, (0, 0))},
            "kversion lists the telemetry APIs, which brokers hide by default",
        )
        for release in ("3.7.0", "3.8.0", "3.9.0", "4.0.0")
    },
    **{
        ("kraft", release): (
            {
                71: (None, (0, 0)),
                72: (None, (0, 0)),
                **{key: ((1, hi), (0, hi)) for key, hi in share},
            },
            "telemetry hidden; the share-group APIs start at v1 in their specs",
        )
        for release, share in (
            ("4.1.0", ((76, 1), (77, 1), (78, 1), (79, 1))),
            ("4.2.0", ((76, 1), (77, 1), (78, 2), (79, 2))),
        )
    },
}


def comparable(ranges: Ranges, release: Release) -> dict[int, object]:
    return (
        dict(ranges)
        if release >= Release.parse("4.0")
        else {k: hi for k, (_, hi) in ranges.items()}
    )


def test_kversion_agrees_but_where_listed() -> None:
    kversion = json.loads(KVERSION.read_text(encoding="utf-8"))
    assert "Travis Bischel" in kversion["licence"][0]
    seen = set()
    for kind in ("zookeeper", "kraft"):
        for name, triples in kversion["tables"][kind].items():
            release = Release.parse(name)
            row = table().release(name, kraft=kind == "kraft")
            assert row.kind == kind and row.release == release, name
            ours = row.advertised() or row.accepted
            theirs = {k: (lo, hi) for k, lo, hi in triples}
            found = {
                k: (ours.get(k), theirs.get(k))
                for k in set(ours) | set(theirs)
                if comparable(ours, release).get(k) != comparable(theirs, release).get(k)
            }
            expected = KVERSION_DISAGREES.get((kind, name), ({}, ""))[0]
            assert found == expected, (kind, name)
            seen.add((kind, name))
    assert set(KVERSION_DISAGREES) <= seen
    assert len(seen) == 29 + 14


# --- the tool -------------------------------------------------------------------------------


def test_release_tool_check_is_up_to_date() -> None:
    tool = ROOT / "tools" / "release_table.py"
    result = subprocess.run(
        [sys.executable, str(tool), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "up to date" in result.stdout
