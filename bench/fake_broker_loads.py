"""The loads of ``fake_broker_bench``, each run the same way against any broker on loopback
(``bench/brokers.py``): the fake broker (``kafka-specgen fake-broker`` in its own process) or
Tansu (what users would start instead).

- ``round_trips``: Metadata requests from our blocking client, one at a time;
- ``librdkafka_round_trips``: librdkafka producing one record and flushing, each time;
- ``pipelined``: several client processes, each with ``depth`` Metadata requests in flight
  (pre-encoded frames: the broker, not the clients, is the limit);
- ``batched_produce``: librdkafka producing small records in batches;
- ``consume``: records/s of our client, kafka-python and aiokafka reading one partition;
- ``parked_latency``: other clients' Metadata latency while 20 Fetches wait for data and one
  peer sends Fetches without ever reading the answers.
"""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from bench.brokers import HOST, Target, client, frame
from kafka_specgen.library import GeneratedPackage

VALUE = bytes(range(256)) * 4  # 1 KiB
PER_BATCH = 500
#: Versions both brokers have, for the pre-encoded frames and the fill (Produce v9 names
#: topics, which Tansu and every fake release read)
METADATA_VERSION, FETCH_VERSION, PRODUCE_VERSION = 9, 12, 9


# --- a broker that does nothing but answer ------------------------------------------------


#: A server that answers every request with canned bytes (its correlation id put in) and
#: does nothing else: the most any Python server could do for a client one request at a time.
CANNED_SERVER = """
import socket, struct, sys
answers = {int(k): bytes.fromhex(v) for k, v in (a.split("=") for a in sys.argv[1:])}
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen()
print(server.getsockname()[1], flush=True)
while True:
    peer, _ = server.accept()
    peer.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buffer = b""
    while True:
        data = peer.recv(65536)
        if not data:
            break
        buffer += data
        while len(buffer) >= 4:
            size = struct.unpack_from(">i", buffer)[0] + 4
            if len(buffer) < size:
                break
            api_key, _, cid = struct.unpack_from(">hhi", buffer, 4)
            buffer = buffer[size:]
            answer = answers[api_key]
            peer.sendall(struct.pack(">ii", len(answer), cid) + answer[4:])
    peer.close()
"""


@contextmanager
def canned_server(answers: dict[int, bytes]) -> Iterator[Target]:
    """``CANNED_SERVER`` with ``answers`` (api key -> a response frame without its size)."""
    args = [f"{key}={frame.hex()}" for key, frame in answers.items()]
    process = subprocess.Popen(
        [sys.executable, "-c", CANNED_SERVER, *args], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        yield Target("canned answers", int(process.stdout.readline()), process.kill)
    finally:
        process.kill()
        process.wait()


def canned_answers(package: GeneratedPackage, port: int) -> dict[int, bytes]:
    """The broker's answers to what ``round_trips`` sends: ApiVersions and Metadata, at
    the versions our client uses, as frames without their size."""
    api_versions = package.module("api_versions").ApiVersionsRequest(
        client_software_name="bench", client_software_version="1"
    )
    with client(package, port) as c:
        versions = {3: c.connection.version_for(3), 18: c.ready.api_versions_version}
    requests = {3: metadata_request(package, "rt"), 18: api_versions}
    answers = {}
    for key, request in requests.items():
        with socket.create_connection((HOST, port)) as sock:
            sock.sendall(frame(package, request, versions[key], 1))
            data = b""
            while len(data) < 4 or len(data) < struct.unpack_from(">i", data)[0] + 4:
                data += sock.recv(1 << 16)
            answers[key] = data[4:]
    return answers


# --- our client ---------------------------------------------------------------------------


def create_topics(package: GeneratedPackage, port: int, topics: dict[str, int]) -> None:
    module = package.module("create_topics")
    wanted = [
        module.CreateTopicsRequestCreatableTopic(
            name=name, num_partitions=count, replication_factor=1
        )
        for name, count in topics.items()
    ]
    with client(package, port) as c:
        answer = c.request(module.CreateTopicsRequest(topics=wanted, timeout_ms=10000))
    failed = [(t.name, t.error_code) for t in answer.topics if t.error_code not in (0, 36)]
    if failed:
        raise RuntimeError(f"CreateTopics failed: {failed}")


def metadata_request(package: GeneratedPackage, topic: str) -> Any:
    metadata = package.module("metadata")
    return metadata.MetadataRequest(
        topics=[metadata.MetadataRequestTopic(name=topic)], allow_auto_topic_creation=False
    )


def fill(package: GeneratedPackage, port: int, topic: str, count: int, codec: str = "none") -> None:
    """``count`` records of 1 KiB into partition 0, in batches of ``PER_BATCH``."""
    records, produce = package.module("records"), package.module("produce")
    with client(package, port) as c:
        for start in range(0, count, PER_BATCH):
            batch = records.build_batch(
                [
                    records.Record(i, 1_700_000_000_000, None, VALUE)
                    for i in range(start, min(count, start + PER_BATCH))
                ],
                compression=records.Compression[codec.upper()],
            )
            data = produce.ProduceRequestPartitionProduceData(index=0, records=batch)
            topic_data = produce.ProduceRequestTopicProduceData(name=topic, partition_data=[data])
            answer = c.request(
                produce.ProduceRequest(acks=1, timeout_ms=5000, topic_data=[topic_data]),
                version=PRODUCE_VERSION,
            )
            code = answer.responses[0].partition_responses[0].error_code
            if code:
                raise RuntimeError(f"Produce to {topic} answered error {code}")


# --- the loads ----------------------------------------------------------------------------


def round_trips(package: GeneratedPackage, port: int, count: int) -> float:
    """Metadata round trips per second, one at a time."""
    request = metadata_request(package, "rt")
    with client(package, port) as c:
        for _ in range(min(count, 200)):  # warm-up
            c.request(request)
        started = time.perf_counter()
        for _ in range(count):
            c.request(request)
        return count / (time.perf_counter() - started)


def librdkafka_round_trips(port: int, count: int) -> float:
    """Produce requests per second from librdkafka, one record and a flush each."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": f"{HOST}:{port}", "linger.ms": 0, "acks": 1})
    producer.produce("rt", value=b"warm-up")
    producer.flush(10)
    started = time.perf_counter()
    for _ in range(count):
        producer.produce("rt", value=b"x")
        producer.flush(10)
    return count / (time.perf_counter() - started)


#: One pipelining client (its own process, nothing imported): ``depth`` requests in flight
#: from ``start`` (a time.time()) for ``seconds``; answers counted by their size prefixes
PIPELINE_CLIENT = """
import socket, struct, sys, time
port, frame, depth, start, seconds = sys.argv[1:]
request, depth = bytes.fromhex(frame), int(depth)
sock = socket.create_connection(("127.0.0.1", int(port)))
sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
time.sleep(max(float(start) - time.time(), 0))
sock.sendall(request * depth)
buffer, answered = bytearray(), 0
deadline = time.time() + float(seconds)
while time.time() < deadline:
    data = sock.recv(1 << 20)
    if not data:
        break
    buffer += data
    done = 0
    while len(buffer) >= 4:
        size = struct.unpack_from(">i", buffer)[0] + 4
        if len(buffer) < size:
            break
        del buffer[:size]
        done += 1
    answered += done
    if done:
        sock.sendall(request * done)
print(answered)
"""


def pipelined(
    package: GeneratedPackage, port: int, clients: int, depth: int, seconds: float
) -> float:
    """Requests per second answered to ``clients`` processes, ``depth`` in flight each."""
    request = frame(package, metadata_request(package, "rt"), METADATA_VERSION, 1)
    start = time.time() + 1.0  # every client connected and ready by then
    args = [str(port), request.hex(), str(depth), str(start), str(seconds)]
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", PIPELINE_CLIENT, *args], stdout=subprocess.PIPE, text=True
        )
        for _ in range(clients)
    ]
    total = 0
    for worker in workers:
        out, _ = worker.communicate(timeout=seconds + 60)
        total += int(out.strip() or 0)
    return total / seconds


def batched_produce(port: int, count: int, size: int) -> float:
    """Records per second librdkafka delivers in batches (``size``-byte values)."""
    from confluent_kafka import Producer

    producer = Producer(
        {"bootstrap.servers": f"{HOST}:{port}", "linger.ms": 5, "batch.num.messages": 10000}
    )
    producer.produce("batched", value=b"warm-up")
    producer.flush(10)
    value = os.urandom(size)
    started = time.perf_counter()
    for n in range(count):
        while True:
            try:
                producer.produce("batched", value=value)
                break
            except BufferError:
                producer.poll(0.01)
        if n % 1000 == 0:
            producer.poll(0)
    if producer.flush(120) != 0:
        raise RuntimeError("librdkafka did not deliver every record")
    return count / (time.perf_counter() - started)


def consume_ours(package: GeneratedPackage, port: int, topic: str, count: int) -> int:
    fetch, records = package.module("fetch"), package.module("records")
    offset = got = 0
    with client(package, port) as c:
        while got < count:
            request = fetch.FetchRequest(
                max_wait_ms=500,
                min_bytes=1,
                max_bytes=8 << 20,
                topics=[
                    fetch.FetchRequestFetchTopic(
                        topic=topic,
                        partitions=[
                            fetch.FetchRequestFetchPartition(
                                partition=0, fetch_offset=offset, partition_max_bytes=8 << 20
                            )
                        ],
                    )
                ],
            )
            data = c.request(request, version=FETCH_VERSION).responses[0].partitions[0].records
            for batch in records.iter_batches(data or b""):
                for record in batch.records():
                    if record.offset >= offset:
                        got += 1
                        offset = record.offset + 1
    return got


def consume_kafka_python(port: int, topic: str, count: int) -> int:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=f"{HOST}:{port}",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        consumer_timeout_ms=30000,
        fetch_max_bytes=8 << 20,
        max_partition_fetch_bytes=8 << 20,
    )
    consumer.assign([TopicPartition(topic, 0)])
    got = 0
    for _ in consumer:
        got += 1
        if got == count:
            break
    consumer.close()
    return got


def consume_aiokafka(port: int, topic: str, count: int) -> int:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    async def run() -> int:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=f"{HOST}:{port}",
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            fetch_max_bytes=8 << 20,
            max_partition_fetch_bytes=8 << 20,
        )
        await consumer.start()
        consumer.assign([TopicPartition(topic, 0)])
        got = 0
        deadline = time.monotonic() + 60
        try:
            while got < count and time.monotonic() < deadline:
                batches = await consumer.getmany(timeout_ms=1000, max_records=10000)
                got += sum(len(messages) for messages in batches.values())
        finally:
            await consumer.stop()
        return got

    return asyncio.run(run())


CONSUMERS: dict[str, Callable[[GeneratedPackage, int, str, int], int]] = {
    "ours (Client + records)": consume_ours,
    "kafka-python": lambda package, port, topic, count: consume_kafka_python(port, topic, count),
    "aiokafka": lambda package, port, topic, count: consume_aiokafka(port, topic, count),
}


def consume(package: GeneratedPackage, port: int, topic: str, count: int) -> dict[str, float]:
    """Records per second of each consumer reading ``count`` records of ``topic``."""
    rates = {}
    for name, reader in CONSUMERS.items():
        started = time.perf_counter()
        got = reader(package, port, topic, count)
        if got < count:
            raise RuntimeError(f"{name} read {got} of {count} records")
        rates[name] = count / (time.perf_counter() - started)
    return rates


def parked_latency(
    package: GeneratedPackage, port: int, parked: int, count: int
) -> dict[str, float]:
    """Metadata round-trip latency (ms) of another client while ``parked`` Fetches wait for
    data that does not come and one peer pipelines Fetches of 1 MiB and never reads."""
    fetch = package.module("fetch")

    def fetch_frame(topic: str, wait_ms: int, min_bytes: int, cid: int) -> bytes:
        partition = fetch.FetchRequestFetchPartition(
            partition=0, fetch_offset=0, partition_max_bytes=1 << 20
        )
        request = fetch.FetchRequest(
            max_wait_ms=wait_ms,
            min_bytes=min_bytes,
            max_bytes=1 << 20,
            topics=[fetch.FetchRequestFetchTopic(topic=topic, partitions=[partition])],
        )
        return frame(package, request, FETCH_VERSION, cid)

    waiting = []
    for n in range(parked):
        sock = socket.create_connection((HOST, port))
        sock.sendall(fetch_frame("parked", 30_000, 1 << 20, n))
        waiting.append(sock)
    reader = socket.socket()
    reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    reader.connect((HOST, port))
    reader.setblocking(False)
    request = fetch_frame("full", 0, 1, 1)
    for _ in range(200):
        try:
            reader.send(request)
        except (BlockingIOError, OSError):
            break
    time.sleep(0.5)
    times = []
    try:
        with client(package, port) as c:
            query = metadata_request(package, "rt")
            for _ in range(count):
                started = time.perf_counter()
                c.request(query)
                times.append(time.perf_counter() - started)
    finally:
        for sock in [*waiting, reader]:
            sock.close()
    ordered = sorted(times)
    return {
        "p50_ms": statistics.median(ordered) * 1000,
        "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000,
        "max_ms": ordered[-1] * 1000,
    }
