"""The connection and both adapters over real loopback sockets.

Against Tansu: the handshake, CreateTopics, Metadata, Produce with every codec (batches
built with ``records``), an acks=0 Produce, and Fetch of all of it back. Tansu does SCRAM
only with ``--authentication``, and then cannot create a user (its user command needs an
authenticated connection and the store is in memory), so a live SCRAM login there reaches
the server's final message and its refusal (``unknown-user``); successful logins, PLAIN
and the pre-KIP-152 raw tokens run against the scripted broker of ``test_connection`` on a
socket.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Generator, Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from tests.runtime.test_connection import Broker, everything, mechanism, sasl_servers
from tests.support import genpkg
from bench.tansu import HOST, TansuHandle, free_port, tansu_binary
from tests.support.tansu import tansu  # noqa: F401

PACKAGE = "conn_live"
CODECS = ["NONE", "GZIP", "SNAPPY", "LZ4", "ZSTD"]


@pytest.fixture(scope="module")
def k(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    out = tmp_path_factory.mktemp("live")
    pkg = genpkg.generate_package([genpkg.full_version_corpus()], out, PACKAGE)

    def mod(name: str) -> Any:
        return genpkg.import_module(pkg.__name__, name)

    return SimpleNamespace(
        C=mod("connection"),
        client=mod("client"),
        aio=mod("aio"),
        sasl=mod("sasl"),
        records=mod("records"),
        ct=mod("create_topics"),
        md=mod("metadata"),
        produce=mod("produce"),
        fetch=mod("fetch"),
        registry=mod("registry"),
        hs=mod("sasl_handshake"),
        auth=mod("sasl_authenticate"),
    )


# --- one scenario, run by either adapter -----------------------------------------------------

Scenario = Generator[Any, Any, Any]


def produce_request(k: SimpleNamespace, topic: str, data: bytes, acks: int) -> Any:
    P = k.produce
    partition = P.ProduceRequestPartitionProduceData(index=0, records=data)
    topic_data = P.ProduceRequestTopicProduceData(name=topic, partition_data=[partition])
    return P.ProduceRequest(acks=acks, timeout_ms=5000, topic_data=[topic_data])


def fetch_request(k: SimpleNamespace, topic: str, topic_id: Any, offset: int) -> Any:
    F = k.fetch
    partition = F.FetchRequestFetchPartition(
        partition=0, fetch_offset=offset, partition_max_bytes=1 << 20
    )
    wanted = F.FetchRequestFetchTopic(topic=topic, topic_id=topic_id, partitions=[partition])
    return F.FetchRequest(
        replica_id=-1, max_wait_ms=100, min_bytes=1, max_bytes=1 << 20, topics=[wanted]
    )


def batches_for(k: SimpleNamespace) -> list[tuple[str, list[Any]]]:
    """Three records per codec, with keys, values and headers that tell them apart."""
    out = []
    for codec in CODECS:
        records = [
            k.records.Record(i, 1_700_000_000_000 + i, f"{codec}-k{i}".encode(),
                             f"{codec}-value-{i}".encode() * 20, (("h", codec.encode()),))
            for i in range(3)
        ]  # fmt: skip
        out.append((codec, records))
    return out


def scenario(k: SimpleNamespace, topic: str) -> Scenario:
    """CreateTopics, Metadata, Produce per codec, then Fetch everything back. Yields
    requests and gets their responses; returns what was fetched and the batches' codecs."""
    created = yield k.ct.CreateTopicsRequest(
        topics=[k.ct.CreateTopicsRequestCreatableTopic(topic, 1, 1)], timeout_ms=5000
    )
    assert [(t.name, t.error_code) for t in created.topics] == [(topic, 0)]
    metadata = yield k.md.MetadataRequest(topics=[k.md.MetadataRequestTopic(name=topic)])
    [found] = metadata.topics
    assert (found.name, found.error_code, [p.partition_index for p in found.partitions]) == (
        topic,
        0,
        [0],
    )
    assert found.partitions[0].leader_id in {b.node_id for b in metadata.brokers}
    expected_offset = 0
    for codec, records in batches_for(k):
        compression = k.records.Compression[codec]
        data = k.records.build_batch(records, compression=compression)
        answer = yield produce_request(k, topic, data, acks=-1)
        [[partition]] = [t.partition_responses for t in answer.responses]
        assert (partition.error_code, partition.base_offset) == (0, expected_offset), codec
        expected_offset += len(records)
    fetched: list[tuple[int, bytes | None, bytes | None, tuple[Any, ...]]] = []
    codecs: list[str] = []
    for _ in range(20):  # bounded: Tansu may hand out the batches a few at a time
        if len(fetched) >= expected_offset:
            break
        answer = yield fetch_request(k, topic, found.topic_id, len(fetched))
        assert answer.error_code == 0
        [[part]] = [t.partitions for t in answer.responses]
        assert part.error_code == 0
        for batch in k.records.iter_batches(part.records):
            batch.validate()
            codecs.append(batch.compression.name)
            fetched += [(r.offset, r.key, r.value, r.headers) for r in batch.records()]
    return fetched, codecs


def expected_records(k: SimpleNamespace) -> list[tuple[int, bytes | None, bytes | None, Any]]:
    flat = [r for _, records in batches_for(k) for r in records]
    return [(i, r.key, r.value, r.headers) for i, r in enumerate(flat)]


def run_blocking(client: Any, steps: Scenario) -> Any:
    try:
        request = next(steps)
        while True:
            request = steps.send(client.request(request))
    except StopIteration as stop:
        return stop.value


async def run_async(client: Any, steps: Scenario) -> Any:
    try:
        request = next(steps)
        while True:
            request = steps.send(await client.request(request))
    except StopIteration as stop:
        return stop.value


def check_ready(k: SimpleNamespace, ready: Any) -> None:
    assert {0, 1, 3, 18, 19} <= set(ready.versions)
    assert ready.api_versions_version == min(ready.versions[18][1], 4)
    assert ready.release_guess is not None  # Tansu's mix of ranges: some form of guess
    assert ready.release_guess.kind in {
        "exact",
        "one of",
        "at least",
        "between",
        "not exact, between",
        "older than",
        "unknown",
    }


def client_connection(k: SimpleNamespace, **options: Any) -> Any:
    return k.C.ClientConnection(client_id="live", client_software=("specgen-live", "1"), **options)


def test_blocking_client_against_tansu(k: SimpleNamespace, tansu: TansuHandle) -> None:
    topic = f"blocking-{uuid.uuid4().hex[:8]}"
    with k.client.Client.connect(HOST, tansu.port, client_connection(k)) as client:
        check_ready(k, client.ready)
        fetched, codecs = run_blocking(client, scenario(k, topic))
        assert fetched == expected_records(k)
        assert codecs == CODECS
        conn = client.connection
        assert conn.in_flight == 0 and conn.queued == 0 and conn.state.value == "ready"


def test_asyncio_client_against_tansu(k: SimpleNamespace, tansu: TansuHandle) -> None:
    topic = f"asyncio-{uuid.uuid4().hex[:8]}"

    async def main() -> tuple[Any, list[Any]]:
        client = await k.aio.AsyncClient.connect(HOST, tansu.port, client_connection(k))
        try:
            check_ready(k, client.ready)
            result = await run_async(client, scenario(k, topic))
            # requests from several tasks at once: pipelined, more than max_in_flight
            many = await asyncio.gather(
                *(client.request(k.md.MetadataRequest(topics=None)) for _ in range(12))
            )
            return result, many
        finally:
            await client.close()

    (fetched, codecs), many = asyncio.run(asyncio.wait_for(main(), 60))
    assert fetched == expected_records(k)
    assert codecs == CODECS
    assert len(many) == 12 and all(m.brokers for m in many)


def test_acks0_produce_against_tansu(k: SimpleNamespace, tansu: TansuHandle) -> None:
    topic = f"acks0-{uuid.uuid4().hex[:8]}"
    with k.client.Client.connect(HOST, tansu.port, client_connection(k)) as client:
        client.request(
            k.ct.CreateTopicsRequest(
                topics=[k.ct.CreateTopicsRequestCreatableTopic(topic, 1, 1)], timeout_ms=5000
            )
        )
        record = k.records.Record(0, 1_700_000_000_000, b"k", b"fire and forget")
        request = produce_request(k, topic, k.records.build_batch([record]), acks=0)
        with pytest.raises(ValueError, match="acks=0"):
            client.request(request)
        cid = client.send(request)
        assert not client.connection.awaiting(cid)
        metadata = client.request(
            k.md.MetadataRequest(topics=[k.md.MetadataRequestTopic(name=topic)])
        )
        topic_id = metadata.topics[0].topic_id
        values: list[bytes | None] = []
        for _ in range(50):  # bounded poll: the write may land a moment later
            answer = client.request(fetch_request(k, topic, topic_id, 0))
            data = answer.responses[0].partitions[0].records
            values = [r.value for b in k.records.iter_batches(data) for r in b.records()]
            if values:
                break
            time.sleep(0.05)
        assert values == [b"fire and forget"]


def test_request_timeout_live(k: SimpleNamespace) -> None:
    # A listener that accepts and never answers: the handshake times out.
    with socket.create_server((HOST, 0)) as silent:
        port = silent.getsockname()[1]
        started = time.monotonic()
        with pytest.raises(k.C.ConnectionFailedError) as raised:
            k.client.Client.connect(HOST, port, client_connection(k, request_timeout=0.3))
        assert raised.value.event.cause is k.C.FailureCause.TIMED_OUT
        assert time.monotonic() - started < 5


# --- SASL -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tansu_auth() -> Iterator[int]:
    """A second Tansu, with --authentication (SCRAM through rsasl); yields its port."""
    port = free_port()
    process = subprocess.Popen(
        [
            str(tansu_binary()),
            "broker",
            "--authentication",
            "--listener-url",
            f"tcp://{HOST}:{port}",
            "--advertised-listener-url",
            f"tcp://{HOST}:{port}",
            "--storage-engine",
            "memory://tansu/",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 15
        while True:
            assert process.poll() is None, "tansu --authentication exited at start"
            try:
                socket.create_connection((HOST, port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "tansu --authentication did not listen"
                time.sleep(0.05)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


@pytest.mark.parametrize("name", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_exchange_with_tansu_reaches_its_verdict(
    k: SimpleNamespace, tansu_auth: int, name: str
) -> None:
    sasl = mechanism(k, name)
    with pytest.raises(k.C.ConnectionFailedError) as raised:
        k.client.Client.connect(HOST, tansu_auth, client_connection(k, sasl=sasl))
    event = raised.value.event
    assert event.cause is k.C.FailureCause.AUTHENTICATION_FAILED
    # Tansu parsed our client-first and client-final messages and refused the user in its
    # server-final message (e=...), which the client read.
    assert "the server refused: unknown-user" in event.reason


class SocketBroker:
    """``test_connection.Broker`` behind a loopback listener, one connection at a time, in a
    thread (stopped at the end)."""

    def __init__(self, make: Callable[[], Broker]) -> None:
        self.make = make
        self.listener = socket.create_server((HOST, 0))
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.stopping = False
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while not self.stopping:
            try:
                sock, _ = self.listener.accept()
            except TimeoutError:
                continue
            with sock:
                sock.settimeout(5)
                broker = self.make()
                while not broker.closed and not self.stopping:
                    try:
                        data = sock.recv(65536)
                    except OSError:
                        break
                    if not data:
                        break
                    answer = broker.feed(data)
                    if answer:
                        sock.sendall(answer)

    def stop(self) -> None:
        self.stopping = True
        self.thread.join(timeout=5)
        self.listener.close()


@pytest.fixture(scope="module")
def sasl_brokers(k: SimpleNamespace) -> Iterator[dict[int, SocketBroker]]:
    """Scripted SASL brokers on loopback: key = their SaslHandshake maximum (0: raw tokens)."""
    servers = {
        handshake: SocketBroker(
            lambda h=handshake: Broker(k, everything(k) | {17: (0, h)}, sasl_servers(k))
        )
        for handshake in (0, 1)
    }
    try:
        yield servers
    finally:
        for server in servers.values():
            server.stop()


@pytest.mark.parametrize("handshake", [0, 1])
@pytest.mark.parametrize("name", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_sasl_logins_over_sockets_with_both_adapters(
    k: SimpleNamespace, sasl_brokers: dict[int, SocketBroker], name: str, handshake: int
) -> None:
    port = sasl_brokers[handshake].port
    sasl = mechanism(k, name)
    with k.client.Client.connect(HOST, port, client_connection(k, sasl=sasl)) as client:
        assert client.ready.sasl_mechanism == name
        assert client.request(k.md.MetadataRequest(topics=None)).cluster_id == "scripted"

    async def main() -> str:
        client = await k.aio.AsyncClient.connect(HOST, port, client_connection(k, sasl=sasl))
        try:
            return str((await client.request(k.md.MetadataRequest(topics=None))).cluster_id)
        finally:
            await client.close()

    assert asyncio.run(asyncio.wait_for(main(), 30)) == "scripted"

    wrong = mechanism(k, name, password="wrong")
    with pytest.raises(k.C.ConnectionFailedError) as raised:
        k.client.Client.connect(HOST, port, client_connection(k, sasl=wrong))
    assert raised.value.event.cause is k.C.FailureCause.AUTHENTICATION_FAILED


def test_request_timeouts_with_both_adapters(k: SimpleNamespace) -> None:
    # A broker that never answers Metadata: the request times out and the connection ends.
    server = SocketBroker(lambda: Broker(k, everything(k), ignore=(3,)))
    try:
        options = {"request_timeout": 0.3}
        with k.client.Client.connect(HOST, server.port, client_connection(k, **options)) as c:
            started = time.monotonic()
            with pytest.raises(k.C.RequestTimedOutError):
                c.request(k.md.MetadataRequest(topics=None))
            assert 0.3 <= time.monotonic() - started < 5
            assert c.connection.state.value == "closed"

        async def main() -> None:
            client = await k.aio.AsyncClient.connect(
                HOST, server.port, client_connection(k, **options)
            )
            try:
                first = asyncio.ensure_future(client.request(k.md.MetadataRequest(topics=None)))
                await asyncio.sleep(0.1)  # a later deadline for the second one
                second = client.request(k.md.MetadataRequest(topics=None))
                results = await asyncio.gather(first, second, return_exceptions=True)
                # the first to expire times out; the other dies with the connection
                assert [type(r).__name__ for r in results] == [
                    "RequestTimedOutError",
                    "ConnectionFailedError",
                ]
                assert results[1].event.cause is k.C.FailureCause.TIMED_OUT
            finally:
                await client.close()

        asyncio.run(asyncio.wait_for(main(), 30))
    finally:
        server.stop()
