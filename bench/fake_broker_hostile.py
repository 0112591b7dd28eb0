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
import socket
import struct
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from bench.brokers import FakeBroker, client, fake_broker, frame  # noqa: E402
from bench.common import CORPORA  # noqa: E402
from bench.hostile_peers import (  # noqa: E402
    fetch_request,
    fill,
    gzip,
    gzip_bomb,
    legacy_message,
    metadata_latencies,
    produce_legacy,
    read_answers,
    recv_closed,
)
from kafka_specgen.library import GeneratedPackage, generated_package  # noqa: E402

NEWEST = CORPORA / "4.3.1"
LEGACY = CORPORA / "3.5.0"  # still has Produce v0-v2 (message sets)
#: The broker's address space: a bomb that got through fails the broker, not the machine.
ADDRESS_SPACE = 6 << 30


def broker(specs: Path, *args: str, files: int | None = None) -> AbstractContextManager[FakeBroker]:
    """The fake broker at its defaults (``args`` added), its address space capped."""
    return fake_broker(specs, *args, address_space=ADDRESS_SPACE, files=files)


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
