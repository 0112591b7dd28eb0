"""KafkaJS (npm) and kcat (Debian) against the fake broker of Kafka 2.8 and 4.1, each served
from its own specs, with 1 and 3 brokers; and both over SASL_SSL.

KafkaJS runs ``tests/support/kafkajs/steps.js``: admin calls (create topics, cluster,
metadata, offsets, groups, delete), produce, consume in a group with commits, and
transactions read committed. kcat produces, consumes, consumes in a group and lists
metadata (``-L``). ``make test`` installs both (KafkaJS into ``.venv/kafkajs``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from kafka_specgen.fake_broker import FakeCluster
from tests.support import kafkajs
from tests.support.genpkg import CORPORA

# `make test` installs them: a missing client is a failure to see, not a reason to skip.
kafkajs.modules()
if shutil.which("kcat") is None:
    raise RuntimeError("kcat is missing: `make test` installs it (Debian package kcat)")

RELEASES = {"2.8": CORPORA / "2.8.0", "4.1": CORPORA / "4.1.2"}
USERS = {"alice": "alice-secret"}
KAFKAJS_STEPS = [
    "admin connect",
    "create topics",
    "describe cluster",
    "topic metadata",
    "produce",
    "topic offsets",
    "consume in a group and commit",
    "committed offsets",
    "list groups",
    "describe groups",
    "transactions",
    "read committed",
    "delete topics",
    "admin disconnect",
]


@pytest.fixture(params=[(r, n) for r in RELEASES for n in (1, 3)], ids=lambda p: f"{p[0]}-{p[1]}b")
def cluster(request: pytest.FixtureRequest) -> Iterator[FakeCluster]:
    release, brokers = request.param
    with FakeCluster(RELEASES[release], release=release, brokers=brokers) as c:
        yield c
        assert c.failures == []


def kafkajs_steps(c: FakeCluster, **config: Any) -> dict[str, Any]:
    """Run the steps; step name -> its report."""
    settings = {"brokers": [c.bootstrap], "topic": "js", "group": "js-group", **config}
    done = kafkajs.node("steps.js", json.dumps(settings))
    reports = {}
    for line in done.stdout.splitlines():
        report = json.loads(line)
        reports[report["step"]] = report
    failed = {name: r["detail"] for name, r in reports.items() if not r["ok"]}
    assert done.returncode == 0 and not failed, (failed, done.stderr[-2000:])
    return reports


def test_kafkajs(cluster: FakeCluster) -> None:
    reports = kafkajs_steps(cluster)
    assert list(reports) == KAFKAJS_STEPS
    assert reports["describe cluster"]["detail"] == len(cluster.state.brokers)
    expected = sorted(["gzip", *(f"v{i}" for i in range(10))])
    assert reports["consume in a group and commit"]["detail"] == expected
    assert reports["list groups"]["detail"].count("js-group") == 1  # once, from its coordinator
    assert reports["read committed"]["detail"] == {"values": ["committed"], "offset": "1"}
    group = cluster.state.groups["js-group"]
    assert sum(o.offset for o in group.offsets.values()) == 11
    assert "js-txn" not in cluster.state.topics  # deleted


def kcat(c: FakeCluster, *args: str, stdin: str | None = None, **config: str) -> str:
    options = [f"-X{k}={v}" for k, v in config.items()]
    done = subprocess.run(
        ["kcat", "-b", c.bootstrap, *options, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def kcat_round(c: FakeCluster, **config: str) -> None:
    """Produce keyed records, list the metadata, consume them, consume them in a group."""
    c.create_topic("k", 3)
    records = [f"key{i}:value{i}" for i in range(9)]
    kcat(c, "-P", "-t", "k", "-K:", stdin="\n".join(records) + "\n", **config)
    metadata = json.loads(kcat(c, "-L", "-J", **config))
    assert sorted(b["id"] for b in metadata["brokers"]) == [b.node_id for b in c.state.brokers]
    (topic,) = [t for t in metadata["topics"] if t["topic"] == "k"]
    assert [p["leader"] for p in topic["partitions"]] == [
        log.leader for log in c.state.topics["k"].partitions
    ]
    consumed = kcat(c, "-C", "-t", "k", "-o", "beginning", "-e", "-J", **config)
    messages = [json.loads(line) for line in consumed.splitlines()]
    assert sorted(f"{m['key']}:{m['payload']}" for m in messages) == sorted(records)
    grouped = kcat(c, "-G", "kcat-group", "k", "-o", "beginning", "-e", "-J", **config)
    assert len(grouped.splitlines()) == len(records)
    offsets = c.call(lambda: dict(c.state.groups["kcat-group"].offsets))
    assert sum(o.offset for o in offsets.values()) == len(records)  # committed at the end


def test_kcat(cluster: FakeCluster) -> None:
    kcat_round(cluster)


# --- over SASL_SSL --------------------------------------------------------------------------------


@pytest.fixture(params=list(RELEASES))
def secured(request: pytest.FixtureRequest) -> Iterator[FakeCluster]:
    release = request.param
    with FakeCluster(RELEASES[release], release=release, brokers=3, users=USERS, tls=True) as c:
        yield c
        assert c.failures == []


def test_kafkajs_over_sasl_ssl(secured: FakeCluster) -> None:
    reports = kafkajs_steps(
        secured,
        ssl={"ca": str(secured.ca_file)},
        sasl={"mechanism": "scram-sha-256", "username": "alice", "password": USERS["alice"]},
    )
    assert list(reports) == KAFKAJS_STEPS


def sasl_ssl(c: FakeCluster, mechanism: str) -> dict[str, str]:
    return {
        "security.protocol": "SASL_SSL",
        "ssl.ca.location": str(c.ca_file),
        "sasl.mechanisms": mechanism,
        "sasl.username": "alice",
        "sasl.password": USERS["alice"],
    }


def test_kcat_over_sasl_ssl(secured: FakeCluster) -> None:
    kcat_round(secured, **sasl_ssl(secured, "PLAIN"))


def test_kcats_scram_works_until_kafka_4(secured: FakeCluster) -> None:
    """kcat's librdkafka 2.0 sends SCRAM's client nonce twice in its final message (fixed in
    librdkafka 2.6.1): Kafka 2.8 does not check the nonce, Kafka 4.x refuses it."""
    options = [f"-X{k}={v}" for k, v in sasl_ssl(secured, "SCRAM-SHA-256").items()]
    done = subprocess.run(
        ["kcat", "-b", secured.bootstrap, *options, "-L", "-m", "5"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if secured.release is not None and secured.release.startswith("4."):
        assert done.returncode != 0
        assert "Authentication failed during authentication" in done.stderr
    else:
        assert done.returncode == 0, done.stderr[-2000:]
