"""The fake broker as each release's brokers behave, row by row of the release table.

Every row starts from its own bundled data (no spec folder) and answers ApiVersions as the
table says: exactly its ranges from 0.10 on, the connection closed by 0.8, no answer from
0.9 (whose fixed-version requests still work on the same connection). 4.x closes the
connection on the Produce versions it advertises but refuses. Real clients' KIP-35
fallbacks are run against the brokers before 0.10: kafka-python 3 and librdkafka.
"""

from __future__ import annotations

import logging
import socket
import struct
import time
from typing import Any

import pytest

from kafka_specgen.broker_releases import BrokerRelease, release, releases
from kafka_specgen.fake_broker import FakeCluster
from kafka_specgen.library import GeneratedPackage, SpecSet, generated_package

#: Codecs of every version before 4.0 (2.4.0's specs still have them all).
OLD = SpecSet.of_release("2.4")
NEW = SpecSet.of_release("4.3")


def row_id(row: BrokerRelease) -> str:
    return row.label.replace(" (KRaft)", "-kraft")


class Raw:
    """One connection speaking frames built with a generated package, nothing else: no
    ApiVersions first, any version, and a bounded wait for each answer."""

    CLOSED = "closed"

    def __init__(self, address: str, package: GeneratedPackage) -> None:
        host, port = address.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=5)
        self.framing, self.headers = package.module("framing"), package.module("headers")
        self.registry = package.module("registry")
        self.correlation_id = 0

    def send(self, api_key: int, version: int, **fields: Any) -> int:
        self.correlation_id += 1
        body = self.registry.API_KEYS[api_key].request(**fields)
        header = self.headers.RequestHeader(api_key, version, self.correlation_id, "raw")
        frame = self.framing.encode_request(header, body)
        self.sock.sendall(self.framing.add_size_prefix(frame))
        return self.correlation_id

    def receive(self, wait: float = 5.0) -> bytes | str | None:
        """A response frame, ``CLOSED`` when the broker closed, None when nothing came."""
        self.sock.settimeout(wait)
        data = b""
        try:
            while len(data) < 4 or len(data) < 4 + struct.unpack(">i", data[:4])[0]:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return self.CLOSED if not data else data
                data += chunk
        except TimeoutError:
            return None
        return data[4:]

    def ask(self, api_key: int, version: int, wait: float = 5.0, **fields: Any) -> Any:
        """Send, and decode the answer; ``CLOSED`` or None as ``receive``."""
        self.send(api_key, version, **fields)
        frame = self.receive(wait)
        if not isinstance(frame, bytes):
            return frame
        return self.framing.decode_response(frame, api_key, version)[1]

    def close(self) -> None:
        self.sock.close()


def emulating(row: BrokerRelease, **options: Any) -> FakeCluster:
    return FakeCluster(release=row.name, kraft=row.kind == "kraft", **options)


@pytest.mark.parametrize("row", releases(), ids=row_id)
def test_every_row_answers_api_versions_as_its_brokers_did(row: BrokerRelease) -> None:
    with emulating(row, topics={"t": 1}) as c:
        old = generated_package(OLD)
        raw = Raw(c.bootstrap, old)
        try:
            answer = raw.ask(18, 0, wait=1.0)
            if row.api_versions == "answered":
                assert answer.error_code == 0
                ranges = {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}
                assert ranges == row.advertised()
            elif row.api_versions == "closes":  # 0.8
                assert answer == Raw.CLOSED
                raw.close()
                raw = Raw(c.bootstrap, old)
            else:  # 0.9: nothing comes, the connection stays open
                assert answer is None and len(c.connections()) == 1
            topic = old.module("metadata").MetadataRequestTopic(name="t")
            metadata = raw.ask(3, 0, topics=[topic])  # every release answers Metadata v0
            assert [t.name for t in metadata.topics] == ["t"]
            assert metadata.brokers[0].port == c.state.brokers[0].port
        finally:
            raw.close()
        assert c.failures == []


@pytest.mark.parametrize("name", ["0.8.0", "0.9"])
def test_brokers_before_kip35_serve_their_fixed_versions(name: str) -> None:
    """Produce v0 with a message set, Fetch v0 and ListOffsets v0 work; an API the release
    does not have is refused as the release refuses it (0.8 closes, 0.9 stays silent)."""
    row = release(name)
    old = generated_package(OLD)
    records, produce, fetch = (old.module(m) for m in ("records", "produce", "fetch"))
    message_set = records.build_legacy([records.Record(0, 0, None, b"old")], magic=0)
    partition = produce.ProduceRequestPartitionProduceData(0, message_set)
    wanted = fetch.FetchRequestFetchPartition(partition_index=0, fetch_offset=0, max_bytes=1 << 20)
    with emulating(row, topics={"t": 1}) as c:
        assert c.versions == {} and c.accepted == row.accepted
        raw = Raw(c.bootstrap, old)
        try:
            topics = [produce.ProduceRequestTopicProduceData("t", [partition])]
            produced = raw.ask(0, 0, acks=1, timeout_ms=1000, topics=topics)
            assert produced.responses[0].partitions[0].error_code == 0
            fetched = raw.ask(
                1,
                0,
                replica_id=-1,
                max_wait=0,
                min_bytes=0,
                topics=[fetch.FetchRequestFetchableTopic("t", [wanted])],
            )
            data = fetched.topics[0].partitions[0].records
            [batch] = records.iter_batches(data)
            assert [r.value for r in batch.records()] == [b"old"]
            handshake = raw.ask(17, 0, wait=0.5, mechanism="PLAIN")  # SaslHandshake came in 0.10
            assert handshake == (Raw.CLOSED if name == "0.8.0" else None)
        finally:
            raw.close()
        assert c.failures == []


@pytest.mark.parametrize("name", ["4.0.0", "4.3"])
def test_4x_closes_the_connection_on_the_produce_versions_it_refuses(name: str) -> None:
    """KAFKA-18659: 4.x advertises Produce from v0 and closes the connection on v0-v2;
    3.9 still answers them."""
    old = generated_package(OLD)
    produce = old.module("produce")
    for release_name, refused in ((name, True), ("3.9", False)):
        with FakeCluster(release=release_name, topics={"t": 1}) as c:
            assert c.versions[0][0] == 0 and c.accepted[0][0] == (3 if refused else 0)
            for version in (0, 1, 2):
                raw = Raw(c.bootstrap, old)
                try:
                    answer = raw.ask(
                        0,
                        version,
                        acks=1,
                        timeout_ms=1000,
                        topics=[produce.ProduceRequestTopicProduceData("t", [])],
                    )
                finally:
                    raw.close()
                assert (answer == Raw.CLOSED) is refused, (release_name, version)
            assert c.failures == []


def test_patch_releases_pick_their_row_and_data() -> None:
    """4.0.0 advertised JoinGroup from v2; 4.0.1 put v0-v1 back; 4.0.2 is the 4.0.1 row,
    served with its own 4.0.2 data; 3.9.1 is the 3.9.0 row with 3.9.0's data."""
    with FakeCluster(release="4.0.0") as first, FakeCluster(release="4.0.2") as later:
        assert (first.release, first.versions[11]) == ("4.0.0", (2, 9))
        assert (later.release, later.versions[11]) == ("4.0.1", (0, 9))
        assert later.description == (
            "Kafka 4.0.2 (KRaft broker, the release table's 4.0.1 row, its own spec data)"
        )
    with FakeCluster(release="3.9.1", kraft=True) as patched:
        assert patched.description == (
            "Kafka 3.9.1 (KRaft broker, the release table's 3.9.0 row, spec data of 3.9.0)"
        )


def test_telemetry_and_unstable_versions_are_options() -> None:
    kraft = release("3.9", kraft=True)
    with emulating(kraft) as plain, emulating(kraft, telemetry=True) as told:
        assert 71 not in plain.versions and plain.accepted[71] == (0, 0)
        assert told.versions == kraft.advertised(telemetry=True) and told.versions[71] == (0, 0)
        raw = Raw(plain.bootstrap, generated_package(SpecSet.of_release("3.9")))
        try:  # answered though not advertised (the fake broker does not implement it)
            assert raw.ask(71, 0).error_code == 35
        finally:
            raw.close()
    newest = release("4.3")
    with emulating(newest, unstable=True) as unstable:
        assert unstable.versions == newest.advertised(unstable=True)
        assert unstable.versions[22] == (0, 6) and newest.advertised()[22] == (0, 5)


@pytest.mark.parametrize(("name", "listed"), [("2.3", []), ("2.4", [(18, 0, 3)])])
def test_a_newer_api_versions_gets_kip511s_answer_from_2_4_only(
    name: str, listed: list[tuple[int, int, int]]
) -> None:
    """A broker gets ApiVersions v4 it does not know: a v0 answer with UNSUPPORTED_VERSION,
    which lists ApiVersions' own range from 2.4 (KIP-511) and nothing before."""
    new = generated_package(NEW)
    with FakeCluster(release=name) as c:
        raw = Raw(c.bootstrap, new)
        try:
            raw.send(18, 4, client_software_name="raw", client_software_version="1")
            frame = raw.receive()
        finally:
            raw.close()
        assert isinstance(frame, bytes)
        _, answer = new.module("framing").decode_response(frame, 18, 0)
        assert answer.error_code == 35
        assert [(k.api_key, k.min_version, k.max_version) for k in answer.api_keys] == listed


# --- real clients' KIP-35 fallbacks -----------------------------------------------------------


def kafka_python_sends(cluster: FakeCluster, api_version: Any) -> str:
    """What becomes of one record sent with kafka-python (``api_version=None``: KIP-35's
    probe): ``sent``, or the name of the error it raised."""
    from kafka import KafkaProducer

    try:
        producer = KafkaProducer(
            bootstrap_servers=cluster.bootstrap,
            api_version=api_version,
            bootstrap_timeout_ms=3000,
            request_timeout_ms=1000,
            max_block_ms=3000,
        )
    except Exception as error:  # noqa: BLE001 - the outcome is what the test compares
        return type(error).__name__
    try:
        producer.send("t", b"v").get(timeout=5)
        return "sent"
    except Exception as error:  # noqa: BLE001
        return type(error).__name__
    finally:
        producer.close(timeout=1)


@pytest.mark.parametrize(
    ("name", "pinned"), [("0.8.2", (0, 8, 2)), ("0.9", (0, 9)), ("0.10.0", (0, 10, 0))]
)
def test_kafka_python_probes_and_pinned_versions(name: str, pinned: tuple[int, ...]) -> None:
    """kafka-python 3 probes with ApiVersions only: against 0.8 (connection closed) and 0.9
    (no answer) it cannot bootstrap, as against those brokers; pinned to the release it
    skips ApiVersions and works; against 0.10 the probe names the release."""
    from kafka import KafkaConsumer, TopicPartition

    with FakeCluster(release=name, topics={"t": 1}) as c:
        probed = kafka_python_sends(c, None)
        assert probed == ("sent" if name == "0.10.0" else "KafkaTimeoutError")
        assert kafka_python_sends(c, pinned) == "sent"
        consumer = KafkaConsumer(
            bootstrap_servers=c.bootstrap, api_version=pinned, consumer_timeout_ms=3000
        )
        try:
            consumer.assign([TopicPartition("t", 0)])
            consumer.seek_to_beginning()
            assert [m.value for m in consumer] == [b"v"] * (2 if name == "0.10.0" else 1)
        finally:
            consumer.close()
        assert c.failures == []


def librdkafka_log(cluster: FakeCluster, seconds: float, **config: Any) -> tuple[list[str], int]:
    """librdkafka's protocol log while it tries to deliver one record for ``seconds``, and
    how many records it delivered."""
    from confluent_kafka import Producer

    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    logger = logging.getLogger(f"librdkafka-{id(lines)}")
    logger.addHandler(Keep())
    logger.setLevel(logging.DEBUG)
    settings = {"bootstrap.servers": cluster.bootstrap, "debug": "protocol,broker", **config}
    producer = Producer(settings, logger=logger)
    delivered: list[Any] = []
    producer.produce("t", b"v", on_delivery=lambda error, _: delivered.append(error))
    producer.flush(seconds)
    producer.purge()
    producer.flush(1)
    return lines, sum(error is None for error in delivered)


def test_librdkafka_api_version_request_against_old_brokers() -> None:
    """librdkafka asks ApiVersions first (``api.version.request``): 0.10 refuses its v3 with
    KIP-511's empty list, it retries v0 and produces; 0.9 never answers (the request times
    out, "probably due to broker version < 0.10"); 0.8 closes the connection on it; with
    ``api.version.request=false`` it starts with Metadata v0 instead."""
    with FakeCluster(release="0.10.0", topics={"t": 1}) as c:
        lines, delivered = librdkafka_log(c, 10)
        assert delivered == 1
        sent = [line for line in lines if "Sent ApiVersionRequest" in line]
        assert "(v3," in sent[0] and "(v0," in sent[1]
    with FakeCluster(release="0.9", topics={"t": 1}) as c:
        lines, delivered = librdkafka_log(c, 2.5, **{"api.version.request.timeout.ms": 1000})
        assert delivered == 0
        assert any("probably due to broker version < 0.10" in line for line in lines)
        assert c.state.topics["t"].partitions[0].end == 0
    with FakeCluster(release="0.8.2", topics={"t": 1}) as c:
        lines, delivered = librdkafka_log(c, 1)
        assert delivered == 0
        assert any("Disconnected" in line and "APIVERSION_QUERY" in line for line in lines)
    with FakeCluster(release="0.9", topics={"t": 1}) as c:
        fallback = {"api.version.request": False, "broker.version.fallback": "0.9.0"}
        lines, _ = librdkafka_log(c, 1, **fallback)
        sent = [line for line in lines if " Sent " in line]
        assert sent and "Sent MetadataRequest (v0" in sent[0]
        assert not any("ApiVersionRequest" in line for line in sent)
        assert c.failures == []


def test_broker_versions_says_why_a_broker_before_0_10_gives_no_versions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from kafka_specgen.cli import main

    expected = {
        "0.8.2": "closed the connection during ApiVersions: it may predate Kafka 0.10",
        "0.9": "no reply within 1 s (the handshake was not over in time",
    }
    for name, reason in expected.items():
        with FakeCluster(release=name) as c:
            code = main(["broker-versions", "--bootstrap-server", c.bootstrap, "--timeout", "1"])
        err = capsys.readouterr().err
        assert code == 1 and reason in err and err.count("\n") == 1, err
    assert "a Kafka 0.9 broker never answers it" in err


def test_a_0_9_broker_closes_a_connection_that_piles_up_unanswered_requests() -> None:
    """Each dropped request leaves a record on its connection: past 1,024 the connection is
    closed, as any other peer that abuses the broker."""
    with FakeCluster(release="0.9") as c:
        raw = Raw(c.bootstrap, generated_package(OLD))
        try:
            for _ in range(1024):
                raw.send(18, 0)
            assert raw.receive(0.5) is None and len(c.connections()) == 1
            raw.send(18, 0)
            assert raw.receive() == Raw.CLOSED
        finally:
            raw.close()
        assert c.failures == []
