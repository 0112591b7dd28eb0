"""The tools of ``fake_broker_hostile``'s scenarios: what its hostile peers send (message
sets and compression bombs crafted by hand, Fetches of everything), how it watches raw
sockets (answers counted, the broker's close awaited), and what an ordinary client does
meanwhile (Metadata round trips timed, a partition filled)."""

from __future__ import annotations

import os
import selectors
import socket
import statistics
import struct
import time
import zlib
from typing import Any

from bench.brokers import client
from kafka_specgen.library import GeneratedPackage

# --- through our client -------------------------------------------------------------------


def metadata_latencies(
    package: GeneratedPackage, port: int, count: int, timeout: float
) -> dict[str, Any]:
    """``count`` Metadata round trips from a fresh client: latency percentiles (ms), and how
    many timed out (the first time-out ends the run)."""
    metadata = package.module("metadata")
    times: list[float] = []
    timed_out = 0
    try:
        with client(package, port, timeout) as c:
            for _ in range(count):
                started = time.perf_counter()
                c.request(metadata.MetadataRequest(topics=None))
                times.append(time.perf_counter() - started)
    except Exception as exc:  # noqa: BLE001 - a time-out is a figure here
        timed_out = 1
        error = f"{type(exc).__name__}: {exc}"[:120]
    else:
        error = None
    out: dict[str, Any] = {"round_trips": len(times), "timed_out": timed_out}
    if times:
        ordered = sorted(times)
        out["p50_ms"] = round(statistics.median(ordered) * 1000, 2)
        out["p99_ms"] = round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 2)
        out["max_ms"] = round(ordered[-1] * 1000, 2)
    if error:
        out["error"] = error
    return out


def fill(
    package: GeneratedPackage, port: int, topic: str, batches: int, records: int, size: int
) -> None:
    """``batches`` batches of ``records`` records of ``size`` bytes into partition 0 of
    ``topic`` (created by Metadata)."""
    records_module, produce = package.module("records"), package.module("produce")
    value = os.urandom(size)
    with client(package, port, 30) as c:
        c.request(package.module("metadata").MetadataRequest(topics=None))
        for _ in range(batches):
            batch = records_module.build_batch(
                [records_module.Record(i, 1_700_000_000_000, None, value) for i in range(records)]
            )
            data = produce.ProduceRequestPartitionProduceData(index=0, records=batch)
            topic_data = produce.ProduceRequestTopicProduceData(name=topic, partition_data=[data])
            c.request(
                produce.ProduceRequest(acks=1, timeout_ms=5000, topic_data=[topic_data]), version=12
            )


def fetch_request(package: GeneratedPackage, topic: str, **limits: int) -> Any:
    fetch = package.module("fetch")
    partition = fetch.FetchRequestFetchPartition(
        partition=0, fetch_offset=0, partition_max_bytes=limits.pop("partition_max_bytes")
    )
    return fetch.FetchRequest(
        topics=[fetch.FetchRequestFetchTopic(topic=topic, partitions=[partition])], **limits
    )


def produce_legacy(pkg: GeneratedPackage, port: int, records: bytes, version: int) -> Any:
    produce = pkg.module("produce")
    data = produce.ProduceRequestPartitionProduceData(index=0, records=records)
    topic = produce.ProduceRequestTopicProduceData(name="t", partition_data=[data])
    request = produce.ProduceRequest(acks=1, timeout_ms=5000, topic_data=[topic])
    with client(pkg, port, 300) as c:
        c.request(pkg.module("metadata").MetadataRequest(topics=None))
        answer = c.request(request, version=version)
    return answer.responses[0].partition_responses[0].error_code


# --- raw sockets --------------------------------------------------------------------------


def recv_closed(sock: socket.socket, deadline: float) -> bool:
    """Read until the peer closes (True) or the deadline passes (False)."""
    while time.monotonic() < deadline:
        sock.settimeout(max(deadline - time.monotonic(), 0.01))
        try:
            if not sock.recv(1 << 16):
                return True
        except TimeoutError:
            return False
        except OSError:
            return True
    return False


def read_answers(socks: list[socket.socket], deadline: float) -> int:
    """How many of ``socks`` get a whole response frame before ``deadline``."""
    selector = selectors.DefaultSelector()
    buffers: dict[socket.socket, bytes] = {}
    for sock in socks:
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ)
        buffers[sock] = b""
    answered = 0
    while buffers and time.monotonic() < deadline:
        for key, _ in selector.select(0.2):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            try:
                data = sock.recv(1 << 16)
            except OSError:
                data = b""
            buffers[sock] += data
            got = buffers[sock]
            whole = len(got) >= 4 and len(got) >= 4 + struct.unpack(">i", got[:4])[0]
            if whole or not data:
                answered += whole
                selector.unregister(sock)
                del buffers[sock]
    selector.close()
    return answered


# --- crafted message sets -----------------------------------------------------------------


def legacy_message(magic: int, attributes: int, value: bytes | None, offset: int = 0) -> bytes:
    body = bytes((magic, attributes))
    if magic == 1:
        body += (1_700_000_000_000).to_bytes(8, "big")
    body += b"\xff\xff\xff\xff"  # null key
    body += b"\xff\xff\xff\xff" if value is None else len(value).to_bytes(4, "big") + value
    return struct.pack(">qiI", offset, len(body) + 4, zlib.crc32(body)) + body


def gzip(data: bytes) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    return compressor.compress(data) + compressor.flush()


def gzip_bomb(inner_mib: int = 127) -> bytes:
    """A magic-0 gzip wrapper of ``inner_mib`` MiB of null messages (26 bytes each)."""
    one = legacy_message(0, 0, None)
    inner = one * ((inner_mib << 20) // len(one))
    return legacy_message(0, 1, gzip(inner))
