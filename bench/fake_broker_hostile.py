"""The fake broker against hostile peers: what each costs it, and what the other clients see.

Each scenario starts its own ``kafka-specgen fake-broker`` process (bounded: an address-space
limit, a deadline per step), attacks it over loopback, and reports the time the attack took
to be dealt with, the broker's peak memory (VmHWM) and, where there are some, the latency of
an ordinary client's Metadata round trips meanwhile. Figures, not assertions: the hostile
tests (tests/integration/test_fake_broker_hostile.py) assert the behaviour.

    python bench/fake_broker_hostile.py [--only NAME ...] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import selectors
import socket
import statistics
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from kafka_specgen.library import GeneratedPackage, generated_package  # noqa: E402
from tests.support.genpkg import CORPORA  # noqa: E402

NEWEST = CORPORA / "4.3.1"
LEGACY = CORPORA / "3.5.0"  # still has Produce v0-v2 (message sets)
ADDRESS_SPACE = 6 << 30
GIB = 1 << 30


# --- the broker process -------------------------------------------------------------------


class Broker:
    def __init__(self, process: subprocess.Popen[str], port: int) -> None:
        self.process, self.port = process, port

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def peak_mib(self) -> float:
        """The broker's peak resident memory so far, MiB."""
        try:
            status = Path(f"/proc/{self.process.pid}/status").read_text()
        except OSError:
            return float("nan")
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")


@contextmanager
def broker(specs: Path, *args: str, files: int | None = None) -> Iterator[Broker]:
    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
        if files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))

    command = [sys.executable, "-m", "kafka_specgen.cli", "fake-broker"]
    command += ["--listen", "127.0.0.1:0", "--specs", str(specs), *args]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        preexec_fn=limits,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()
        port = int(banner.split("127.0.0.1:")[1].split()[0])
        yield Broker(process, port)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# --- clients ------------------------------------------------------------------------------


def client(package: GeneratedPackage, port: int, timeout: float = 10.0) -> Any:
    connection = package.module("connection").ClientConnection(request_timeout=timeout)
    return package.module("client").Client.connect("127.0.0.1", port, connection)


def frame(package: GeneratedPackage, request: Any, version: int, cid: int) -> bytes:
    headers, framing = package.module("headers"), package.module("framing")
    header = headers.RequestHeader(
        request_api_key=request.API_KEY,
        request_api_version=version,
        correlation_id=cid,
        client_id="hostile",
    )
    return framing.add_size_prefix(framing.encode_request(header, request))


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


# --- scenarios ----------------------------------------------------------------------------


def scenario_round_trips(pkg: GeneratedPackage) -> dict[str, Any]:
    with broker(NEWEST) as b:
        started = time.perf_counter()
        latencies = metadata_latencies(pkg, b.port, 2000, 10)
        elapsed = time.perf_counter() - started
        return {**latencies, "per_s": round(2000 / elapsed), "peak_mib": b.peak_mib()}


def scenario_connections(pkg: GeneratedPackage) -> dict[str, Any]:
    """1,000 connections opened one after the other, then an ApiVersions v0 on each."""
    api_versions = pkg.module("api_versions").ApiVersionsRequest()
    with broker(NEWEST) as b:
        started = time.perf_counter()
        socks = [socket.create_connection(("127.0.0.1", b.port), timeout=30) for _ in range(1000)]
        connected = time.perf_counter() - started
        for n, sock in enumerate(socks):
            sock.sendall(frame(pkg, api_versions, 0, n))
        answered = read_answers(socks, time.monotonic() + 60)
        elapsed = time.perf_counter() - started
        for sock in socks:
            sock.close()
        return {
            "connect_s": round(connected, 2),
            "answered": answered,
            "all_answered_s": round(elapsed, 2),
            "peak_mib": b.peak_mib(),
        }


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


def scenario_emfile(pkg: GeneratedPackage) -> dict[str, Any]:
    """2,000 connection attempts against a broker limited to 1,024 open files, then one
    ordinary client after they are closed."""
    api_versions = pkg.module("api_versions").ApiVersionsRequest()
    with broker(NEWEST, files=1024) as b:
        started = time.perf_counter()
        socks: list[socket.socket] = []
        refused = 0
        for _ in range(2000):
            try:
                socks.append(socket.create_connection(("127.0.0.1", b.port), timeout=1))
            except OSError:
                refused += 1
        for n, sock in enumerate(socks):
            try:
                sock.sendall(frame(pkg, api_versions, 0, n))
            except OSError:
                pass
        answered = read_answers(socks, time.monotonic() + 10)
        burst = time.perf_counter() - started
        for sock in socks:
            sock.close()
        time.sleep(2)
        started = time.perf_counter()
        after = metadata_latencies(pkg, b.port, 10, 10)
        return {
            "connected": len(socks),
            "refused": refused,
            "answered": answered,
            "burst_s": round(burst, 2),
            "served_after": after["round_trips"] == 10,
            "after_s": round(time.perf_counter() - started, 2),
            "broker_alive": b.alive,
            "peak_mib": b.peak_mib(),
        }


def scenario_non_reader(pkg: GeneratedPackage) -> dict[str, Any]:
    """A peer pipelines 100 Fetch requests of 8 MiB and never reads; meanwhile another client
    makes 100 Metadata round trips."""
    with broker(NEWEST, "--topics", "big:1") as b:
        fill(pkg, b.port, "big", 16, 8, 64 << 10)
        hostile = socket.socket()
        hostile.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        hostile.connect(("127.0.0.1", b.port))
        request = fetch_request(
            pkg, "big", max_wait_ms=0, min_bytes=1, max_bytes=8 << 20, partition_max_bytes=8 << 20
        )
        hostile.settimeout(5)
        sent = 0
        try:
            for n in range(100):
                hostile.sendall(frame(pkg, request, 12, n))
                sent += 1
        except OSError:
            pass
        time.sleep(0.5)
        started = time.perf_counter()
        others = metadata_latencies(pkg, b.port, 100, 5)
        elapsed = time.perf_counter() - started
        hostile.close()
        return {
            "hostile_sent": sent,
            **others,
            "others_s": round(elapsed, 2),
            "peak_mib": b.peak_mib(),
        }


def scenario_parked_fetches(pkg: GeneratedPackage) -> dict[str, Any]:
    """20 Fetches parked (min_bytes above what the partition holds, max_wait 20 s) on a
    partition of 20,000 small batches, while another client makes 200 Metadata round trips."""
    with broker(NEWEST, "--topics", "data:1") as b:
        fill(pkg, b.port, "data", 20_000, 1, 100)
        request = fetch_request(
            pkg,
            "data",
            max_wait_ms=20_000,
            min_bytes=64 << 20,
            max_bytes=64 << 20,
            partition_max_bytes=64 << 20,
        )
        parked = []
        for n in range(20):
            sock = socket.create_connection(("127.0.0.1", b.port))
            sock.sendall(frame(pkg, request, 12, n))
            parked.append(sock)
        time.sleep(0.5)
        started = time.perf_counter()
        others = metadata_latencies(pkg, b.port, 200, 15)
        elapsed = time.perf_counter() - started
        for sock in parked:
            sock.close()
        return {**others, "others_s": round(elapsed, 2), "peak_mib": b.peak_mib()}


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


def produce_legacy(pkg: GeneratedPackage, port: int, records: bytes, version: int) -> Any:
    produce = pkg.module("produce")
    data = produce.ProduceRequestPartitionProduceData(index=0, records=records)
    topic = produce.ProduceRequestTopicProduceData(name="t", partition_data=[data])
    request = produce.ProduceRequest(acks=1, timeout_ms=5000, topic_data=[topic])
    with client(pkg, port, 300) as c:
        c.request(pkg.module("metadata").MetadataRequest(topics=None))
        answer = c.request(request, version=version)
    return answer.responses[0].partition_responses[0].error_code


def bomb(pkg: GeneratedPackage, records: bytes, version: int, specs: Path) -> dict[str, Any]:
    with broker(specs, "--topics", "t:1") as b:
        started = time.perf_counter()
        try:
            code: Any = produce_legacy(pkg, b.port, records, version)
        except Exception as exc:  # noqa: BLE001 - a failure is a figure here
            code = f"{type(exc).__name__}: {exc}"[:120]
        elapsed = time.perf_counter() - started
        after = metadata_latencies(pkg, b.port, 5, 10) if b.alive else {"round_trips": 0}
        return {
            "request_bytes": len(records),
            "error_code": code,
            "answer_s": round(elapsed, 2),
            "peak_mib": b.peak_mib(),
            "served_after": after["round_trips"] == 5,
        }


def scenario_gzip_bomb(legacy: GeneratedPackage) -> dict[str, Any]:
    return bomb(legacy, gzip_bomb(), 2, LEGACY)


def scenario_gzip_under_cap(legacy: GeneratedPackage) -> dict[str, Any]:
    """The worst a message set can cost within the default cap: 3.9 MiB of null messages."""
    one = legacy_message(0, 0, None)
    inner = one * ((4 << 20) // len(one) - 1000)
    return bomb(legacy, legacy_message(0, 1, gzip(inner)), 2, LEGACY)


def scenario_gzip_bomb_x3(legacy: GeneratedPackage) -> dict[str, Any]:
    return bomb(legacy, gzip_bomb() * 3, 2, LEGACY)


def scenario_nested_wrappers(legacy: GeneratedPackage) -> dict[str, Any]:
    """A gzip wrapper whose only inner message is the gzip bomb, wrapped once more."""
    nested = gzip_bomb()
    for _ in range(2):
        nested = legacy_message(0, 1, gzip(nested))
    return bomb(legacy, nested, 2, LEGACY)


def scenario_lz4_bomb(legacy: GeneratedPackage) -> dict[str, Any]:
    compression = legacy.module("_compression")
    one = legacy_message(1, 0, None)
    inner = one * ((127 << 20) // len(one))
    wrapper = legacy_message(1, compression.LZ4, compression.compress(compression.LZ4, inner))
    return bomb(legacy, wrapper, 2, LEGACY)


def scenario_zstd_bomb(pkg: GeneratedPackage) -> dict[str, Any]:
    """A magic-2 zstd batch of one 127 MiB record of zeros."""
    records = pkg.module("records")
    batch = records.build_batch(
        [records.Record(0, 1_700_000_000_000, None, bytes(127 << 20))],
        compression=records.Compression.ZSTD,
    )
    return bomb(pkg, batch, 9, NEWEST)


def scenario_oversized_frame(pkg: GeneratedPackage) -> dict[str, Any]:
    with broker(NEWEST) as b:
        sock = socket.create_connection(("127.0.0.1", b.port))
        started = time.perf_counter()
        sock.sendall(struct.pack(">i", 0x7FFFFFFF) + bytes(1 << 16))
        closed = recv_closed(sock, time.monotonic() + 10)
        elapsed = time.perf_counter() - started
        sock.close()
        return {"closed": closed, "closed_s": round(elapsed, 3), "peak_mib": b.peak_mib()}


def scenario_create_topics(pkg: GeneratedPackage) -> dict[str, Any]:
    create = pkg.module("create_topics")
    topic = create.CreateTopicsRequestCreatableTopic(
        name="absurd", num_partitions=2**31 - 1, replication_factor=1
    )
    with broker(NEWEST) as b:
        started = time.perf_counter()
        try:
            with client(pkg, b.port, 60) as c:
                answer = c.request(create.CreateTopicsRequest(topics=[topic], timeout_ms=1000))
            outcome: Any = answer.topics[0].error_code
        except Exception as exc:  # noqa: BLE001 - a failure is a figure here
            outcome = f"{type(exc).__name__}: {exc}"[:120]
        return {
            "error_code": outcome,
            "answer_s": round(time.perf_counter() - started, 2),
            "broker_alive": b.alive,
            "peak_mib": b.peak_mib(),
        }


SCENARIOS: dict[str, tuple[str, Callable[[GeneratedPackage], dict[str, Any]]]] = {
    "round_trips": ("newest", scenario_round_trips),
    "connections": ("newest", scenario_connections),
    "emfile": ("newest", scenario_emfile),
    "non_reader": ("newest", scenario_non_reader),
    "parked_fetches": ("newest", scenario_parked_fetches),
    "oversized_frame": ("newest", scenario_oversized_frame),
    "create_topics": ("newest", scenario_create_topics),
    "gzip_bomb": ("legacy", scenario_gzip_bomb),
    "gzip_bomb_x3": ("legacy", scenario_gzip_bomb_x3),
    "gzip_under_cap": ("legacy", scenario_gzip_under_cap),
    "nested_wrappers": ("legacy", scenario_nested_wrappers),
    "lz4_bomb": ("legacy", scenario_lz4_bomb),
    "zstd_bomb": ("newest", scenario_zstd_bomb),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=sorted(SCENARIOS), help="scenarios to run")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args(argv)
    packages = {"newest": generated_package([NEWEST]), "legacy": generated_package([LEGACY])}
    results: dict[str, Any] = {}
    for name in args.only or SCENARIOS:
        which, run = SCENARIOS[name]
        started = time.perf_counter()
        results[name] = run(packages[which])
        results[name]["scenario_s"] = round(time.perf_counter() - started, 1)
        print(f"{name}: {json.dumps(results[name])}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
