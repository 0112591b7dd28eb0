"""The fake broker against real clients, and KIP-97's test plan for our own connection.

Each release is served with its own bundled spec data, as ``FakeCluster(release=...)``
does without a spec folder. Clients: librdkafka (confluent-kafka), kafka-python and
aiokafka, each producing with every codec, consuming in a group, committing and resuming
from the committed offsets. Our own ``ClientConnection`` runs KIP-97's plan against every
row of the release table.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafka_specgen.broker_releases import BrokerRelease, releases
from kafka_specgen.cli import main
from kafka_specgen.fake_broker import DISCONNECT, Call, FakeBrokerError, FakeCluster
from kafka_specgen.library import SpecSet, generated_package
from kafka_specgen.capture import frames
from kafka_specgen.release_names import Release
from tests.support import fake_clients
from tests.support.genpkg import CORPORA

NEWEST = CORPORA / "4.3.1"
#: Every row of the release table that answers ApiVersions (0.10 on, both kinds).
ANSWERING = [row for row in releases() if row.api_versions == "answered"]


def row_id(row: BrokerRelease) -> str:
    return row.label.replace(" (KRaft)", "-kraft")


def emulating(row: BrokerRelease, **options: Any) -> FakeCluster:
    """A cluster emulating ``row``, served with its release's own bundled data."""
    return FakeCluster(release=row.name, kraft=row.kind == "kraft", **options)


# --- real clients -------------------------------------------------------------------------


@pytest.mark.parametrize("release", ["2.4", "2.8", "3.0", "3.9", "4.0.0", "4.3"])
@pytest.mark.parametrize("client", sorted(fake_clients.CLIENTS))
def test_real_clients_produce_consume_commit_and_resume(client: str, release: str) -> None:
    with FakeCluster(release=release, brokers=2, topics={"t": 3}) as c:
        before, after = fake_clients.CLIENTS[client](c.bootstrap, "t")
        first, more = fake_clients.produced("t")
        assert sorted(before) == sorted(first)  # every codec, across 3 partitions
        assert sorted(after) == sorted(more)  # resumed from the committed offsets
        logs = c.state.topics["t"].partitions
        assert sum(log.end for log in logs) == len(first) + len(more)
        assert c.state.groups["g"].offsets  # the group committed
        assert c.failures == []


@pytest.mark.parametrize("release", ["3.0", "4.3"])
def test_transactions_with_read_committed(release: str) -> None:
    from confluent_kafka import Consumer, Producer

    with FakeCluster(release=release, topics={"t": 2}) as c:
        producer = Producer(
            {"bootstrap.servers": c.bootstrap, "transactional.id": "tx", "log_level": 0}
        )
        producer.init_transactions(10)
        for outcome in ("aborted", "committed"):
            producer.begin_transaction()
            for i in range(5):
                producer.produce("t", value=f"{outcome}-{i}".encode())
            producer.flush(10)
            if outcome == "aborted":
                producer.abort_transaction(10)
            else:
                producer.commit_transaction(10)

        def consume(isolation: str) -> list[bytes]:
            consumer = Consumer(
                {
                    "bootstrap.servers": c.bootstrap,
                    "group.id": isolation,
                    "auto.offset.reset": "earliest",
                    "log_level": 0,
                    "isolation.level": isolation,
                }
            )
            consumer.subscribe(["t"])
            got: list[bytes] = []
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and len(got) < 10:
                message = consumer.poll(0.2)
                if message is not None and message.error() is None:
                    got.append(message.value())
                elif len(got) == 5 and isolation == "read_committed":
                    break
            consumer.close()
            return sorted(got)

        assert consume("read_committed") == [f"committed-{i}".encode() for i in range(5)]
        assert len(consume("read_uncommitted")) == 10
        # the markers: one COMMIT and one ABORT batch per partition written to
        logs = c.state.topics["t"].partitions
        controls = [b for log in logs for b in log.batches if b.control]
        assert controls and all(b.transactional for b in controls)
        assert sum(len(log.aborted) for log in logs) >= 1
        assert c.failures == []


@pytest.mark.parametrize("release", ["3.0", "4.3"])
def test_kafka_python_transactions_with_read_committed(release: str) -> None:
    """kafka-python's transactional producer aborts one transaction and commits another;
    its read_committed consumer gets exactly the committed values."""
    from kafka import KafkaConsumer, KafkaProducer

    with FakeCluster(release=release, topics={"t": 2}) as c:
        producer = KafkaProducer(
            bootstrap_servers=c.bootstrap,
            transactional_id="tx",
            max_block_ms=5000,
            request_timeout_ms=5000,
        )
        raised: list[BaseException] = []

        def transact() -> None:
            try:
                producer.init_transactions()
                for outcome in ("aborted", "committed"):
                    producer.begin_transaction()
                    for i in range(5):
                        producer.send("t", value=f"{outcome}-{i}".encode())
                    producer.flush(timeout=5)
                    if outcome == "aborted":
                        producer.abort_transaction()
                    else:
                        producer.commit_transaction()
            except BaseException as error:
                raised.append(error)

        # commit_transaction and abort_transaction take no timeout: a thread bounds them
        worker = threading.Thread(target=transact, daemon=True)
        worker.start()
        worker.join(20)
        producer.close(timeout=1)
        assert not worker.is_alive() and raised == []

        consumer = KafkaConsumer(
            "t",
            bootstrap_servers=c.bootstrap,
            group_id="committed",
            auto_offset_reset="earliest",
            isolation_level="read_committed",
            consumer_timeout_ms=1000,
        )
        got: list[bytes] = []
        try:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and len(got) < 5:
                got += [message.value for message in consumer]
            got += [message.value for message in consumer]  # and nothing after them
        finally:
            consumer.close()
        assert sorted(got) == [f"committed-{i}".encode() for i in range(5)]
        logs = c.state.topics["t"].partitions
        assert sum(log.end for log in logs) > 10  # the aborted records and the markers
        assert sum(len(log.aborted) for log in logs) >= 1
        assert c.failures == []


@pytest.mark.parametrize("release", ["3.0", "4.3"])
def test_aiokafka_transactions_with_read_committed(release: str) -> None:
    """aiokafka's transactional producer aborts one transaction and commits another;
    its read_committed consumer gets exactly the committed values."""
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    async def transact(bootstrap: str) -> None:
        producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap, transactional_id="tx", request_timeout_ms=5000
        )
        try:
            await asyncio.wait_for(producer.start(), 10)  # start() initialises the id
            for outcome in ("aborted", "committed"):
                await asyncio.wait_for(producer.begin_transaction(), 5)
                for i in range(5):
                    await asyncio.wait_for(
                        producer.send_and_wait("t", f"{outcome}-{i}".encode()), 5
                    )
                if outcome == "aborted":
                    await asyncio.wait_for(producer.abort_transaction(), 5)
                else:
                    await asyncio.wait_for(producer.commit_transaction(), 5)
        finally:
            await asyncio.wait_for(producer.stop(), 5)

    async def consume(bootstrap: str) -> list[bytes]:
        consumer = AIOKafkaConsumer(
            "t",
            bootstrap_servers=bootstrap,
            group_id="committed",
            auto_offset_reset="earliest",
            isolation_level="read_committed",
        )
        got: list[bytes] = []
        try:
            await asyncio.wait_for(consumer.start(), 10)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and len(got) < 5:
                batches = await asyncio.wait_for(consumer.getmany(timeout_ms=200), 5)
                got += [m.value for messages in batches.values() for m in messages]
            batches = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 5)
            got += [m.value for messages in batches.values() for m in messages]  # no more
        finally:
            await asyncio.wait_for(consumer.stop(), 5)
        return got

    with FakeCluster(release=release, topics={"t": 2}) as c:
        asyncio.run(transact(c.bootstrap))
        got = asyncio.run(consume(c.bootstrap))
        assert sorted(got) == [f"committed-{i}".encode() for i in range(5)]
        logs = c.state.topics["t"].partitions
        assert sum(log.end for log in logs) > 10  # the aborted records and the markers
        assert sum(len(log.aborted) for log in logs) >= 1
        assert c.failures == []


# --- KIP-97 for our own connection --------------------------------------------------------


@pytest.mark.parametrize("row", ANSWERING, ids=row_id)
def test_kip97_plan_for_our_client(row: BrokerRelease) -> None:
    """Against each release: the newest common version of every API, the obsolete-broker
    error locally for what the release lacks, the KIP-511 downgrade of ApiVersions, and the
    release guessed exactly."""
    ours = generated_package(SpecSet.of_release("4.3"))
    client_module, connection = ours.module("client"), ours.module("connection")
    registry = ours.module("registry")
    wanted = row.advertised()
    with emulating(row) as c:
        assert c.versions == wanted
        host, port = c.bootstrap.rsplit(":", 1)
        conn = connection.ClientConnection(client_id="kip97", policy={})
        with client_module.Client.connect(host, int(port), conn) as client:
            ready = client.ready
            assert str(ready.release_guess) == row.label
            assert ready.versions == wanted
            ours_max = registry.API_KEYS[18].max_version
            if wanted[18][1] < ours_max:
                # KIP-511: from 2.4 the refusal names the broker's newest ApiVersions; before,
                # it lists nothing and the client falls back to v0
                assert ready.api_versions_refused == (ours_max,)
                kip511 = row.release >= Release.parse("2.4")
                assert ready.api_versions_version == (wanted[18][1] if kip511 else 0)
            for key, entry in registry.API_KEYS.items():
                theirs = wanted.get(key)
                if theirs is not None and entry.min_version <= theirs[1]:
                    expected = min(entry.max_version, theirs[1])
                    assert client.connection.version_for(key) == expected, key
                else:
                    with pytest.raises(connection.UnsupportedVersionError):
                        client.connection.version_for(key)
            lacking = [k for k in registry.API_KEYS if k not in wanted]
            if lacking:
                request = registry.API_KEYS[lacking[0]].request()
                with pytest.raises(connection.UnsupportedVersionError, match="obsolete|no"):
                    client.send(request)
                assert client.connection.data_to_send() == b""
        assert c.failures == []


@pytest.mark.parametrize(
    "row", [row for row in releases() if row.api_versions != "answered"], ids=row_id
)
def test_kip97_plan_before_kip35(row: BrokerRelease) -> None:
    """Brokers before 0.10 have no ApiVersions: our client's handshake fails, at once
    against 0.8 (the connection is closed), after its request timeout against 0.9."""
    ours = generated_package(SpecSet.of_release("4.3"))
    connection = ours.module("connection")
    with emulating(row) as c:
        host, port = c.bootstrap.rsplit(":", 1)
        conn = connection.ClientConnection(client_id="kip97", policy={}, request_timeout=0.5)
        with pytest.raises(connection.ConnectionFailedError) as failed:
            ours.module("client").Client.connect(host, int(port), conn)
        cause = failed.value.event.cause
        closes = row.api_versions == "closes"
        assert (
            cause
            is connection.FailureCause["CLOSED_DURING_API_VERSIONS" if closes else "TIMED_OUT"]
        )
        assert c.failures == []


@pytest.mark.parametrize("row", ANSWERING, ids=row_id)
def test_broker_versions_names_the_fake_release(
    row: BrokerRelease, capsys: pytest.CaptureFixture[str]
) -> None:
    with emulating(row) as c:
        code = main(["broker-versions", "--bootstrap-server", c.bootstrap, "--timeout", "5"])
    out = capsys.readouterr().out
    assert code == 0
    assert f"release guess: {row.label}\n" in out
    listed = {
        int(m["key"]): (int(m["lo"]), int(m["hi"] or m["lo"]))
        for m in re.finditer(r"\((?P<key>\d+)\): (?P<lo>\d+)(?: to (?P<hi>\d+))?", out)
    }
    assert listed == row.advertised()


# --- behaviour --------------------------------------------------------------------------------


@pytest.fixture
def cluster() -> Iterator[FakeCluster]:
    with FakeCluster(NEWEST, topics={"t": 1}) as c:
        yield c


def connect(c: FakeCluster) -> Any:
    host, port = c.bootstrap.rsplit(":", 1)
    return c.package.module("client").Client.connect(host, int(port))


def produce_request(c: FakeCluster, values: list[bytes], **batch: Any) -> Any:
    records = c.package.module("records")
    produce = c.package.module("produce")
    data = records.build_batch(
        [records.Record(i, 1_700_000_000_000 + i, None, v) for i, v in enumerate(values)],
        **batch,
    )
    partition = produce.ProduceRequestPartitionProduceData(index=0, records=data)
    topic_id = c.state.topics["t"].topic_id
    topic = produce.ProduceRequestTopicProduceData(
        name="t", topic_id=topic_id, partition_data=[partition]
    )
    return produce.ProduceRequest(acks=-1, timeout_ms=1000, topic_data=[topic])


def partition_result(response: Any) -> Any:
    return response.responses[0].partition_responses[0]


def test_fetch_waits_for_data_until_max_wait(cluster: FakeCluster) -> None:
    fetch = cluster.package.module("fetch")
    topic_id = cluster.state.topics["t"].topic_id
    request = fetch.FetchRequest(
        max_wait_ms=300,
        min_bytes=1,
        max_bytes=1 << 20,
        topics=[
            fetch.FetchRequestFetchTopic(
                topic="t",
                topic_id=topic_id,
                partitions=[
                    fetch.FetchRequestFetchPartition(
                        partition=0, fetch_offset=0, partition_max_bytes=1 << 20
                    )
                ],
            )
        ],
    )
    with connect(cluster) as client:
        started = time.monotonic()
        empty = client.request(request)
        assert time.monotonic() - started >= 0.29  # nothing came: it waited max_wait
        assert empty.responses[0].partitions[0].records == b""
        # data arriving while a fetch waits answers it at once, with the data
        producer = connect(cluster)
        timer = threading.Timer(0.1, producer.request, [produce_request(cluster, [b"x"])])
        timer.start()
        try:
            waited = client.request(request)
        finally:
            timer.join()
            producer.close()
    records = cluster.package.module("records")
    [batch] = records.iter_batches(waited.responses[0].partitions[0].records)
    assert [r.value for r in batch.records()] == [b"x"]


def test_idempotent_producer_sequences(cluster: FakeCluster) -> None:
    with connect(cluster) as client:
        init = client.request(
            cluster.package.module("init_producer_id").InitProducerIdRequest(
                transactional_id=None, transaction_timeout_ms=1000
            )
        )
        pid = init.producer_id
        first = produce_request(
            cluster, [b"a", b"b"], producer_id=pid, producer_epoch=0, base_sequence=0
        )
        assert partition_result(client.request(first)).base_offset == 0
        # a retry of the same batch is acknowledged with its offset, not written twice
        assert partition_result(client.request(first)).base_offset == 0
        gap = produce_request(cluster, [b"c"], producer_id=pid, producer_epoch=0, base_sequence=5)
        assert partition_result(client.request(gap)).error_code == 45  # OUT_OF_ORDER_SEQUENCE
        follow = produce_request(
            cluster, [b"c"], producer_id=pid, producer_epoch=0, base_sequence=2
        )
        assert partition_result(client.request(follow)).base_offset == 2
    assert cluster.state.topics["t"].partitions[0].end == 3


def test_idempotence_window_of_five_batches(cluster: FakeCluster) -> None:
    """Kafka keeps the last 5 batches of a producer per partition: a retry of any of them
    is acknowledged with the offset it got; an older one is out of order; a new epoch
    starts at sequence 0 and fences the old one."""
    with connect(cluster) as client:
        init = client.request(
            cluster.package.module("init_producer_id").InitProducerIdRequest(
                transactional_id=None, transaction_timeout_ms=1000
            )
        )
        pid = init.producer_id

        def batch(sequence: int, epoch: int = 0) -> Any:
            return produce_request(
                cluster, [b"x"], producer_id=pid, producer_epoch=epoch, base_sequence=sequence
            )

        for sequence in range(7):  # offsets 0-6
            assert partition_result(client.request(batch(sequence))).base_offset == sequence
        for sequence in (2, 4, 6):  # within the last five: duplicates, written once
            answer = partition_result(client.request(batch(sequence)))
            assert (answer.error_code, answer.base_offset) == (0, sequence)
        assert partition_result(client.request(batch(1))).error_code == 45  # out of order
        assert partition_result(client.request(batch(5, epoch=1))).error_code == 45
        assert partition_result(client.request(batch(0, epoch=1))).base_offset == 7
        assert partition_result(client.request(batch(7))).error_code == 47  # fenced epoch
    assert cluster.state.topics["t"].partitions[0].end == 8
    with FakeCluster(NEWEST, topics={"t": 1}, idempotence_window=1) as narrow:
        with connect(narrow) as client:
            for sequence in range(2):
                request = produce_request(
                    narrow, [b"x"], producer_id=5, producer_epoch=0, base_sequence=sequence
                )
                client.request(request)
            old = produce_request(narrow, [b"x"], producer_id=5, producer_epoch=0, base_sequence=0)
            assert partition_result(client.request(old)).error_code == 45


def test_corrupt_batches_are_refused(cluster: FakeCluster) -> None:
    request = produce_request(cluster, [b"a"])
    partition = request.topic_data[0].partition_data[0]
    partition.records = partition.records[:-1] + bytes([partition.records[-1] ^ 1])
    with connect(cluster) as client:
        assert partition_result(client.request(request)).error_code == 2  # CORRUPT_MESSAGE
    assert cluster.state.topics["t"].partitions[0].end == 0


def test_hooks_control_inject_throttle_disconnect(cluster: FakeCluster) -> None:
    connection = cluster.package.module("connection")
    metadata = cluster.package.module("metadata")

    def renamed(call: Call) -> Any:
        return call.reply(cluster_id="controlled", brokers=[], topics=[])

    cluster.control(3, renamed)
    with connect(cluster) as client:
        assert client.request(metadata.MetadataRequest(topics=None)).cluster_id == "controlled"
    cluster.control(3, None)
    cluster.inject(0, 6)  # NOT_LEADER_OR_FOLLOWER, once
    cluster.throttle_ms = 50
    with connect(cluster) as client:
        assert partition_result(client.request(produce_request(cluster, [b"a"]))).error_code == 6
        answer = client.request(produce_request(cluster, [b"a"]))
        assert partition_result(answer).error_code == 0 and answer.throttle_time_ms == 50
        assert client.connection.throttled_until is not None
    cluster.control(3, lambda call: DISCONNECT)
    with connect(cluster) as client:
        with pytest.raises(connection.ConnectionFailedError):
            client.request(metadata.MetadataRequest(topics=None))
    # an answer that fails closes that connection only, and is reported
    cluster.control(3, lambda call: 1 // 0)
    with connect(cluster) as client:
        with pytest.raises(connection.ConnectionFailedError):
            client.request(metadata.MetadataRequest(topics=None))
    assert cluster.failures == ["ZeroDivisionError: integer division or modulo by zero"]
    cluster.control(3, None)
    with connect(cluster) as client:  # the broker is still there
        assert client.request(metadata.MetadataRequest(topics=None)).topics


def test_requests_outside_the_release_close_the_connection() -> None:
    newer = generated_package(SpecSet.of_release("4.3"))
    metadata, connection = newer.module("metadata"), newer.module("connection")
    with FakeCluster(release="2.4") as c:
        assert c.versions[3] == (0, 9)
        host, port = c.bootstrap.rsplit(":", 1)
        with newer.module("client").Client.connect(host, int(port)) as client:
            assert client.request(metadata.MetadataRequest(topics=None), version=9).brokers
            # the client itself refuses a version the broker lacks, sending nothing
            with pytest.raises(newer.module("negotiation").NoCommonVersionError):
                client.request(metadata.MetadataRequest(topics=None), version=10)
        # told the broker had it (configured versions), the client sends; the broker closes
        lying = connection.ClientConnection(broker_versions={3: (0, 12), 18: (0, 3)})
        with newer.module("client").Client.connect(host, int(port), lying) as client:
            with pytest.raises(connection.ConnectionFailedError):
                client.request(metadata.MetadataRequest(topics=None), version=10)


def test_a_recorded_session_is_a_capture_file(tmp_path: Path) -> None:
    out = tmp_path / "session.jsonl"
    with FakeCluster(NEWEST, topics={"t": 1}, record=out) as c:
        with connect(c) as client:
            client.request(produce_request(c, [b"recorded"]))
        framing = c.package.module("framing")
    rows = [
        frames.capture_line_row(line, out.name, n)
        for n, line in enumerate(out.read_bytes().splitlines(), 1)
    ]
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == len(lines) >= 4
    assert [line["dir"] for line in lines].count("request") * 2 == len(lines)
    produced = [line for line in lines if line["api_key"] == 0]
    assert [p["dir"] for p in produced] == ["request", "response"]
    # both ends' addresses: the client's is the source of a request, the broker's of a response
    assert produced[0]["dst"] == produced[1]["src"] == c.bootstrap
    assert produced[0]["src"] == produced[1]["dst"] != c.bootstrap
    assert all(row.src and row.dst for row in rows)
    _, request = framing.decode_request(bytes.fromhex(produced[0]["frame"]))
    assert b"recorded" in request.topic_data[0].partition_data[0].records
    _, response = framing.decode_response(
        bytes.fromhex(produced[1]["frame"]), 0, produced[1]["api_version"]
    )
    assert partition_result(response).error_code == 0


def test_a_spec_set_without_the_data_apis_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FakeBrokerError, match="lacks Produce and Fetch: a fake broker needs"):
        FakeCluster(Path(__file__).resolve().parents[2] / "specs")
    with pytest.raises(FakeBrokerError, match="no Kafka 9.9 in the release table"):
        FakeCluster(NEWEST, release="9.9")
    with pytest.raises(FakeBrokerError, match="Kafka 2.4 has no KRaft brokers"):
        FakeCluster(release="2.4", kraft=True)
    with pytest.raises(FakeBrokerError, match="need a release"):
        FakeCluster(NEWEST, telemetry=True)
    with pytest.raises(FakeBrokerError, match="no limit 'fetch_max_byte'"):
        FakeCluster(NEWEST, fetch_max_byte=1)
    with pytest.raises(FakeBrokerError, match="message_max_bytes must be"):
        FakeCluster(NEWEST, message_max_bytes=0)


# --- the command --------------------------------------------------------------------------


def test_command_serves_until_terminated(capsys: pytest.CaptureFixture[str]) -> None:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kafka_specgen.cli",
            "fake-broker",
            "--listen",
            "127.0.0.1:0",
            "--release",
            "3.8",
            "--brokers",
            "2",
            "--topics",
            "a:2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()
        match = re.match(
            r"fake cluster speaking Kafka 3\.8\.0 \(ZooKeeper broker, its own spec data\): "
            r"127\.0\.0\.1:(\d+) \(id 0\), "
            r"127\.0\.0\.1:\d+ \(id 1\)",
            banner,
        )
        assert match, banner
        code = main(
            [
                "broker-versions",
                "--bootstrap-server",
                f"127.0.0.1:{match[1]}",
                "--specs",
                str(NEWEST),
                "--timeout",
                "5",
            ]
        )
        out = capsys.readouterr().out
        assert code == 0 and out.count("release guess: 3.8.0\n") == 2
    finally:
        process.send_signal(signal.SIGTERM)
        rest, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert rest.strip() == "stopped"


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--topics", "a:0"], 2, "is not NAME:PARTITIONS"),
        (["--specs", "SPECS", "--listen", "nowhere"], 2, "is not HOST:PORT"),
        (["--release", "0.7"], 1, "no Kafka 0.7.0 in the release table (0.8.0 to 4.3)"),
        (["--release", "3.9.x"], 1, "'3.9.x' is not a Kafka release"),
        (["--release", "2.7", "--kraft"], 1, "Kafka 2.7 has no KRaft brokers"),
        (["--specs", "SPECS", "--unstable"], 1, "need a release"),
        (["--fetch-max-bytes", "0"], 2, "--fetch-max-bytes must be at"),
    ],
)
def test_command_errors_are_one_line(
    args: list[str], code: int, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [str(NEWEST) if a == "SPECS" else a for a in args]
    assert main(["fake-broker", *args]) == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_an_old_client_fails_against_4_0_as_against_kafka_4_0() -> None:
    """kafka-python pinned to 0.10 skips ApiVersions and sends Produce v2, which Kafka 4.0
    still advertises but refuses (KIP-896, KAFKA-18659): the broker closes the connection
    and the send fails; the same client succeeds against 3.9, which still has it."""
    from kafka import KafkaProducer
    from kafka.errors import KafkaError

    def send(release: str) -> bool:
        with FakeCluster(release=release, topics={"t": 1}) as c:
            producer = KafkaProducer(
                bootstrap_servers=c.bootstrap,
                api_version=(0, 10),
                max_block_ms=3000,
                request_timeout_ms=3000,
                retries=0,
            )
            try:
                producer.send("t", b"old").get(timeout=10)
                return True
            except KafkaError:
                return False
            finally:
                producer.close(timeout=1)

    assert send("3.9")
    assert not send("4.0")


def test_admin_and_offset_apis_through_our_client() -> None:
    """CreateTopics, DeleteTopics, ListOffsets (earliest, latest, by time), DescribeConfigs,
    DescribeCluster, ListGroups and DescribeGroups, answered at the newest versions."""
    with FakeCluster(NEWEST, brokers=2, topics={"t": 1}) as c:
        m = c.package.module

        with connect(c) as client:
            create = m("create_topics")
            made = client.request(
                create.CreateTopicsRequest(
                    topics=[
                        create.CreateTopicsRequestCreatableTopic(
                            name="new",
                            num_partitions=3,
                            replication_factor=1,
                            configs=[
                                create.CreateTopicsRequestCreatableTopicConfig(
                                    name="retention.ms", value="1000"
                                )
                            ],
                        ),
                        create.CreateTopicsRequestCreatableTopic(
                            name="t", num_partitions=1, replication_factor=1
                        ),
                    ],
                    timeout_ms=1000,
                )
            )
            assert [(r.name, r.error_code) for r in made.topics] == [("new", 0), ("t", 36)]
            assert len(c.state.topics["new"].partitions) == 3

            for stamp in (1_000, 2_000, 3_000):
                batch = produce_request(c, [b"v"])
                records = c.package.module("records")
                data = records.build_batch([records.Record(0, stamp, None, b"v")])
                batch.topic_data[0].partition_data[0].records = data
                client.request(batch)
            offsets = m("list_offsets")

            def offset_at(timestamp: int) -> int:
                request = offsets.ListOffsetsRequest(
                    replica_id=-1,
                    topics=[
                        offsets.ListOffsetsRequestListOffsetsTopic(
                            name="t",
                            partitions=[
                                offsets.ListOffsetsRequestListOffsetsPartition(
                                    partition_index=0, timestamp=timestamp
                                )
                            ],
                        )
                    ],
                )
                answer = client.request(request).topics[0].partitions[0]
                assert answer.error_code == 0
                return int(answer.offset_)

            assert (offset_at(-2), offset_at(-1), offset_at(1_500), offset_at(9_999)) == (
                0,
                3,
                1,
                -1,
            )

            configs = m("describe_configs")
            described = client.request(
                configs.DescribeConfigsRequest(
                    resources=[
                        configs.DescribeConfigsRequestDescribeConfigsResource(
                            resource_type=2, resource_name="new", configuration_keys=None
                        )
                    ]
                )
            )
            [result] = described.results
            values = {entry.name: entry.value for entry in result.configs}
            assert result.error_code == 0 and values["retention.ms"] == "1000"

            cluster = client.request(m("describe_cluster").DescribeClusterRequest())
            assert cluster.cluster_id == c.state.cluster_id
            assert sorted(b.broker_id for b in cluster.brokers) == [0, 1]

            delete = m("delete_topics")
            deleted = client.request(
                delete.DeleteTopicsRequest(
                    topics=[delete.DeleteTopicsRequestDeleteTopicState(name="new")],
                    timeout_ms=1000,
                )
            )
            assert [r.error_code for r in deleted.responses] == [0]
            assert "new" not in c.state.topics

        fake_clients.kafka_python(c.bootstrap, "t")  # a group "g" comes and goes
        with connect(c) as client:
            listed = client.request(m("list_groups").ListGroupsRequest())
            assert [g.group_id for g in listed.groups] == ["g"]
            groups = client.request(m("describe_groups").DescribeGroupsRequest(groups=["g"]))
            assert groups.groups[0].group_id == "g" and groups.groups[0].protocol_type == "consumer"


def test_a_cluster_closed_unstarted_frees_its_ports() -> None:
    import socket

    cluster = FakeCluster(NEWEST, brokers=2)
    ports = [b.port for b in cluster.state.brokers]
    cluster.close()
    for port in ports:
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
