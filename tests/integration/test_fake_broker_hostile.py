"""The fake broker against hostile peers: each case bounded in time, its sockets and
processes closed. What each attack costs (time, memory, the others' latency) is measured by
``bench/fake_broker_hostile.py``, not asserted here; here: the broker keeps its limits and
keeps serving the other clients.
"""

from __future__ import annotations

import os
import re
import resource
import select
import signal
import socket
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafka_specgen.fake_broker import ApiKey, Call, FakeCluster, Wait
from kafka_specgen.library import generated_package
from tests.support.genpkg import CORPORA

NEWEST = CORPORA / "4.3.1"
LEGACY = CORPORA / "3.5.0"  # still has Produce v0-v2 (message sets)
pytestmark = pytest.mark.skipif(
    not (NEWEST.is_dir() and LEGACY.is_dir()), reason="no ../shared/kafka-specs"
)
INVALID_RECORD, MESSAGE_TOO_LARGE, POLICY_VIOLATION = 87, 10, 44


# --- helpers ------------------------------------------------------------------------------


def client(c: FakeCluster, timeout: float = 5.0) -> Any:
    connection = c.package.module("connection").ClientConnection(request_timeout=timeout)
    host, port = c.bootstrap.rsplit(":", 1)
    return c.package.module("client").Client.connect(host, int(port), connection)


def frame(c: FakeCluster, request: Any, version: int, cid: int) -> bytes:
    headers, framing = c.package.module("headers"), c.package.module("framing")
    header = headers.RequestHeader(
        request_api_key=request.API_KEY,
        request_api_version=version,
        correlation_id=cid,
        client_id="hostile",
    )
    return bytes(framing.add_size_prefix(framing.encode_request(header, request)))


def round_trips(c: FakeCluster, count: int) -> int:
    """``count`` Metadata round trips from a new client (each within 5 s): how many."""
    metadata = c.package.module("metadata")
    with client(c) as ordinary:
        for n in range(count):
            ordinary.request(metadata.MetadataRequest(topics=None))
    return count


def fill(c: FakeCluster, topic: str, batches: int, size: int) -> None:
    """``batches`` batches of one record of ``size`` bytes into partition 0."""
    records = c.package.module("records")
    value = os.urandom(size)
    data = bytes(records.build_batch([records.Record(0, 1_700_000_000_000, None, value)]))

    def append() -> None:
        log = c.state.topics[topic].partitions[0]
        for _ in range(batches):
            log.append(data, 1, max_timestamp=0, producer_id=-1, transactional=False, control=False)

    c.call(append)


def fetch_request(c: FakeCluster, topic: str, max_wait_ms: int, min_bytes: int, size: int) -> Any:
    fetch = c.package.module("fetch")
    partition = fetch.FetchRequestFetchPartition(
        partition=0, fetch_offset=0, partition_max_bytes=size
    )
    return fetch.FetchRequest(
        max_wait_ms=max_wait_ms,
        min_bytes=min_bytes,
        max_bytes=size,
        topics=[fetch.FetchRequestFetchTopic(topic=topic, partitions=[partition])],
    )


def closed_by_peer(sock: socket.socket, within: float) -> bool:
    """Whether the peer closes ``sock`` within ``within`` seconds (what it sent is read)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        ready, _, _ = select.select([sock], [], [], max(deadline - time.monotonic(), 0))
        if ready:
            try:
                if not sock.recv(1 << 16):
                    return True
            except OSError:
                return True
    return False


def read_frame(sock: socket.socket, within: float) -> bytes | None:
    """One whole response frame from ``sock`` within ``within`` seconds, else None."""
    sock.settimeout(within)
    data = b""
    try:
        while len(data) < 4 or len(data) < 4 + struct.unpack(">i", data[:4])[0]:
            chunk = sock.recv(1 << 16)
            if not chunk:
                return None
            data += chunk
    except (TimeoutError, OSError):
        return None
    return data[4:]


@pytest.fixture
def cluster() -> Iterator[FakeCluster]:
    with FakeCluster(NEWEST, topics={"t": 1}) as c:
        yield c


# --- a peer that never reads ----------------------------------------------------------------


def test_a_peer_that_never_reads_is_muted_alone(cluster: FakeCluster) -> None:
    fill(cluster, "t", 16, 512 << 10)  # 8 MiB
    hostile = socket.socket()
    hostile.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    host, port = cluster.bootstrap.rsplit(":", 1)
    hostile.connect((host, int(port)))
    try:
        request = fetch_request(cluster, "t", 0, 1, 8 << 20)
        hostile.setblocking(False)
        pipelined = b"".join(frame(cluster, request, 12, n) for n in range(40))
        try:
            hostile.send(pipelined)
        except BlockingIOError:
            pass
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            mine = [i for i in cluster.connections() if i.unsent]
            if mine and mine[0].muted:
                break
            time.sleep(0.05)
        [muted] = [i for i in cluster.connections() if i.unsent]
        assert muted.muted
        # at most one answer over the cap is held for it: 8 MiB responses, 1 MiB cap
        assert muted.unsent <= (1 << 20) + (9 << 20)
        assert round_trips(cluster, 50) == 50  # the others are answered meanwhile
        still = [(i.client, i.muted) for i in cluster.connections() if i.unsent]
        assert still == [(muted.client, True)]
    finally:
        hostile.close()
    assert cluster.failures == []


# --- connections ----------------------------------------------------------------------------


def test_a_thousand_connections_are_all_answered(cluster: FakeCluster) -> None:
    api_versions = cluster.package.module("api_versions").ApiVersionsRequest()
    host, port = cluster.bootstrap.rsplit(":", 1)
    socks = [socket.create_connection((host, int(port)), timeout=10) for _ in range(1000)]
    try:
        for n, sock in enumerate(socks):
            sock.sendall(frame(cluster, api_versions, 0, n))
        answered = sum(read_frame(sock, 10) is not None for sock in socks)
        assert answered == 1000
    finally:
        for sock in socks:
            sock.close()


def test_idle_connections_are_closed() -> None:
    with FakeCluster(NEWEST, connections_max_idle_ms=300) as c:
        host, port = c.bootstrap.rsplit(":", 1)
        idle = socket.create_connection((host, int(port)))
        try:
            assert round_trips(c, 1) == 1
            assert closed_by_peer(idle, within=5)
        finally:
            idle.close()
        # a connection that keeps talking stays open past the idle time
        with client(c) as talking:
            metadata = c.package.module("metadata")
            for _ in range(8):
                time.sleep(0.1)
                talking.request(metadata.MetadataRequest(topics=None))


def test_2000_connection_attempts_under_ulimit_1024(tmp_path: Path) -> None:
    """The broker process may open 1,024 files: it accepts what it can, records EMFILE,
    pauses, and serves again once the burst is gone."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2100:
        pytest.skip("this process cannot open 2,000 sockets")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 2100), hard))

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))

    command = [sys.executable, "-m", "kafka_specgen.cli", "fake-broker", "--listen"]
    command += ["127.0.0.1:0", "--specs", str(NEWEST)]
    broker = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=limited,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    socks: list[socket.socket] = []
    try:
        assert broker.stdout is not None
        banner = broker.stdout.readline()
        port = int(re.search(r"127\.0\.0\.1:(\d+)", banner)[1])  # type: ignore[index]
        for _ in range(2000):
            sock = socket.socket()
            sock.setblocking(False)
            sock.connect_ex(("127.0.0.1", port))
            socks.append(sock)
        time.sleep(2)  # the broker accepts what it can, then runs out of files
        for sock in socks:
            sock.close()
        socks.clear()
        package = generated_package([NEWEST])
        connection = package.module("connection").ClientConnection(request_timeout=10)
        deadline = time.monotonic() + 20
        while True:  # the listener may still be paused for its back-off
            try:
                with package.module("client").Client.connect("127.0.0.1", port, connection) as c:
                    metadata = package.module("metadata")
                    assert c.request(metadata.MetadataRequest(topics=None)).brokers
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                connection = package.module("connection").ClientConnection(request_timeout=10)
                time.sleep(0.5)
        assert broker.poll() is None
    finally:
        for sock in socks:
            sock.close()
        broker.send_signal(signal.SIGTERM)
        out, err = broker.communicate(timeout=30)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert broker.returncode == 0, err
    assert "EMFILE" in err and "could not accept" in err, err
    assert out.strip() == "stopped"


# --- frames and requests out of bounds ------------------------------------------------------


def test_an_oversized_frame_closes_its_connection_only() -> None:
    with FakeCluster(NEWEST, socket_request_max_bytes=1 << 16) as c:
        host, port = c.bootstrap.rsplit(":", 1)
        huge = socket.create_connection((host, int(port)))
        big = socket.create_connection((host, int(port)))
        try:
            huge.sendall(struct.pack(">i", 0x7FFFFFFF) + bytes(1 << 10))
            assert closed_by_peer(huge, within=5)
            big.sendall(struct.pack(">i", (1 << 16) + 1))
            assert closed_by_peer(big, within=5)
            assert round_trips(c, 5) == 5
        finally:
            huge.close()
            big.close()
        assert c.failures == []


def create_topics(c: FakeCluster, counts: list[int]) -> list[tuple[int, str | None]]:
    create = c.package.module("create_topics")
    topics = [
        create.CreateTopicsRequestCreatableTopic(
            name=f"absurd{n}", num_partitions=count, replication_factor=1
        )
        for n, count in enumerate(counts)
    ]
    with client(c) as admin:
        answer = admin.request(create.CreateTopicsRequest(topics=topics, timeout_ms=1000))
    return [(t.error_code, t.error_message) for t in answer.topics]


def test_absurd_create_topics_are_refused_whole(cluster: FakeCluster) -> None:
    refused = (POLICY_VIOLATION, "Excessively large number of partitions per request.")
    assert create_topics(cluster, [2**31 - 1]) == [refused]
    # the cap counts the whole request: 5,001 + 5,000 fails both topics
    assert create_topics(cluster, [5_001, 5_000]) == [refused, refused]
    assert not [t for t in cluster.state.topics if t.startswith("absurd")]
    assert create_topics(cluster, [5_000, 5_000]) == [(0, None), (0, None)]
    assert len(cluster.state.topics["absurd1"].partitions) == 5_000


def test_the_partition_cap_is_configurable() -> None:
    with FakeCluster(NEWEST, max_partitions_per_request=100) as c:
        assert create_topics(c, [101])[0][0] == POLICY_VIOLATION
        assert create_topics(c, [100]) == [(0, None)]


# --- records out of bounds ------------------------------------------------------------------


def legacy_message(magic: int, attributes: int, value: bytes | None) -> bytes:
    """A magic 0/1 message with a null key (a compressed wrapper when ``attributes`` has a
    codec)."""
    body = bytes((magic, attributes))
    if magic == 1:
        body += (1_700_000_000_000).to_bytes(8, "big")
    body += b"\xff\xff\xff\xff"
    body += b"\xff\xff\xff\xff" if value is None else len(value).to_bytes(4, "big") + value
    return struct.pack(">qiI", 0, len(body) + 4, zlib.crc32(body)) + body


def gzip(data: bytes) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    return compressor.compress(data) + compressor.flush()


def null_messages(mib: float, magic: int = 0) -> bytes:
    one = legacy_message(magic, 0, None)
    return one * int(mib * (1 << 20) / len(one))


GZIP_BOMB = legacy_message(0, 1, gzip(null_messages(127)))  # ~300 KB, 127 MiB inside


def produce(c: FakeCluster, partitions: list[bytes], version: int) -> list[int]:
    """Produce ``partitions`` (one records field each) to topic "t": the error codes."""
    module = c.package.module("produce")
    data = [
        module.ProduceRequestPartitionProduceData(index=n, records=r)
        for n, r in enumerate(partitions)
    ]
    topic = module.ProduceRequestTopicProduceData(name="t", partition_data=data)
    request = module.ProduceRequest(acks=-1, timeout_ms=1000, topic_data=[topic])
    with client(c, timeout=30) as producer:
        answer = producer.request(request, version=version)
    return [p.error_code for p in answer.responses[0].partition_responses]


@pytest.fixture
def legacy() -> Iterator[FakeCluster]:
    with FakeCluster(LEGACY, topics={"t": 2}) as c:
        yield c


def test_a_gzip_bomb_is_refused_before_it_expands(legacy: FakeCluster) -> None:
    assert len(GZIP_BOMB) < 400_000
    assert produce(legacy, [GZIP_BOMB], 2) == [INVALID_RECORD]
    assert produce(legacy, [GZIP_BOMB * 3], 2) == [INVALID_RECORD]
    assert legacy.state.topics["t"].partitions[0].end == 0
    assert round_trips(legacy, 5) == 5
    assert legacy.failures == []


def test_nested_wrappers_are_refused(legacy: FakeCluster) -> None:
    inner = legacy_message(0, 1, gzip(null_messages(0.01)))
    nested = legacy_message(0, 1, gzip(inner))
    assert produce(legacy, [nested], 2) == [INVALID_RECORD]
    assert produce(legacy, [legacy_message(0, 1, gzip(nested))], 2) == [INVALID_RECORD]
    assert legacy.failures == []


def test_an_lz4_bomb_is_refused(legacy: FakeCluster) -> None:
    compression = legacy.package.module("_compression")
    inner = compression.compress(compression.LZ4, null_messages(127, magic=1), None, 1)
    assert produce(legacy, [legacy_message(1, compression.LZ4, inner)], 2) == [INVALID_RECORD]
    assert legacy.failures == []


def test_the_decompression_budget_spans_the_whole_request(legacy: FakeCluster) -> None:
    """Two partitions of 3 MiB each inside: the first fits the 4 MiB budget, the second not;
    a message set within the budget is converted and fetched back as magic 2."""
    three = legacy_message(0, 1, gzip(null_messages(3)))
    assert produce(legacy, [three, three], 2) == [0, INVALID_RECORD]
    records = legacy.package.module("records")
    log = legacy.state.topics["t"].partitions[0]
    [stored] = log.batches
    [batch] = records.iter_batches(stored.data)
    assert batch.magic == 2 and batch.record_count == log.end > 100_000
    with FakeCluster(LEGACY, topics={"t": 2}, max_decompressed_bytes=8 << 20) as roomy:
        assert produce(roomy, [three, three], 2) == [0, 0]


def test_a_zstd_bomb_is_stored_and_served_compressed(cluster: FakeCluster) -> None:
    """A valid magic-2 batch is not decompressed: stored and served as sent, as Kafka
    serves it (its consumers decompress it, within their own limits)."""
    records = cluster.package.module("records")
    bomb = bytes(
        records.build_batch(
            [records.Record(0, 1_700_000_000_000, None, bytes(127 << 20))],
            compression=records.Compression.ZSTD,
        )
    )
    assert len(bomb) < 1 << 20
    assert produce(cluster, [bomb], 9) == [0]
    with client(cluster) as consumer:
        answer = consumer.request(fetch_request(cluster, "t", 0, 1, 1 << 20), version=12)
    data = answer.responses[0].partitions[0].records
    assert len(data) == len(bomb) and data[16:] == bomb[16:]  # past the rewritten offsets


def test_message_max_bytes(cluster: FakeCluster) -> None:
    records = cluster.package.module("records")

    def batch(size: int) -> bytes:
        record = records.Record(0, 1_700_000_000_000, None, os.urandom(size))
        return bytes(records.build_batch([record]))

    assert produce(cluster, [batch(1 << 20)], 9) == [MESSAGE_TOO_LARGE]
    assert produce(cluster, [batch((1 << 20) - 100)], 9) == [0]
    with FakeCluster(NEWEST, topics={"t": 1}, message_max_bytes=2 << 20) as roomy:
        assert produce(roomy, [batch(1 << 20)], 9) == [0]
    cluster.call(lambda: cluster.state.topics["t"].configs.update({"max.message.bytes": "500"}))
    assert produce(cluster, [batch(600)], 9) == [MESSAGE_TOO_LARGE]


def test_fetch_max_bytes_caps_a_response() -> None:
    with FakeCluster(NEWEST, topics={"t": 1}, fetch_max_bytes=1 << 20) as c:
        fill(c, "t", 8, 300_000)
        with client(c) as consumer:
            answer = consumer.request(fetch_request(c, "t", 0, 1, 64 << 20), version=12)
        data = answer.responses[0].partitions[0].records
        assert 0 < len(data) <= 1 << 20  # 3 of the 8 batches


# --- waiting Fetches ------------------------------------------------------------------------


def test_parked_fetches_are_not_polled_and_wake_on_data(cluster: FakeCluster) -> None:
    """20 Fetches wait for data: the others' round trips go on, the waiting ones are not
    looked at until data comes, and then all are answered at once."""
    polls = [0]
    handler = cluster.routes.handlers[ApiKey.FETCH].answer

    def counting(call: Call) -> Any:
        answer = handler(call)
        if isinstance(answer, Wait):
            inner = answer.poll

            def poll(now: float, expired: bool) -> Any:
                polls[0] += 1
                return inner(now, expired)

            answer = Wait(answer.deadline, poll, answer.on)
        return answer

    cluster.control(ApiKey.FETCH, counting)
    host, port = cluster.bootstrap.rsplit(":", 1)
    request = fetch_request(cluster, "t", 30_000, 1, 1 << 20)
    waiting = [socket.create_connection((host, int(port))) for _ in range(20)]
    try:
        for n, sock in enumerate(waiting):
            sock.sendall(frame(cluster, request, 12, n))
        deadline = time.monotonic() + 10
        while sum(i.waiting for i in cluster.connections()) < 20:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert round_trips(cluster, 200) == 200
        assert polls[0] == 0  # nothing came: nobody looked at them
        fill(cluster, "t", 1, 100)
        answers = [read_frame(sock, 10) for sock in waiting]  # long before max_wait's 30 s
        assert all(answers) and polls[0] == 20
    finally:
        for sock in waiting:
            sock.close()
    assert cluster.failures == []
