"""The benchmark's cases: logical messages built in our generated classes, and sets of
captured frame bodies.

A ``Case`` names the package that holds it ("repo": the committed ``generated/kafka_messages``;
"kp": a package generated from the kafka-python 3.0.12 spec corpus, for the APIs the repo's
own ``specs/`` do not have), the message, the version and a builder. The peers' instances are
derived from ours by the adapters in ``bench/peers.py``, so all three describe the same values.

A ``FrameSet`` is many messages of many classes: the bodies of the frames captured between
real clients and a broker (``tests/golden/``), read with a package generated from the newest
spec corpus ("newest", which reads every captured version). One operation is decoding (or
encoding) the whole set; ``bench/run.py`` works out which bodies each peer decodes to the
same values (and re-encodes to the same bytes) and compares like with like.
"""

from __future__ import annotations

import dataclasses
import importlib
import random
import sys
import uuid
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable

from bench.golden import golden_frames, trailing_bytes


@dataclass(frozen=True)
class Case:
    id: str
    package: str  # "repo" or "kp"
    message: str  # the spec's message name
    version: int
    build: Callable[[type], Any]  # message class -> instance
    shape: str


def _records(seed: int) -> bytes:
    """1 KiB of opaque record-batch bytes (the codecs treat ``records`` as a blob)."""
    return random.Random(seed).randbytes(1024)


def api_versions_response(cls: type) -> Any:
    api = sys.modules[cls.__module__]  # the struct classes live beside the message
    # 70 api keys plus a finalized-features epoch tag: 508 bytes at v3.
    keys = [
        api.ApiVersionsResponseApiVersion(api_key=k, min_version=0, max_version=(k % 13) + 1)
        for k in range(70)
    ]
    return cls(error_code=0, api_keys=keys, throttle_time_ms=0, finalized_features_epoch=42)


def api_versions_request(cls: type) -> Any:
    return cls(client_software_name="kafka-specgen-bench", client_software_version="1.0.0")


def metadata_request(cls: type) -> Any:
    api = sys.modules[cls.__module__]  # the struct classes live beside the message
    topics = [api.MetadataRequestTopic(name=f"bench-topic-{t:03d}") for t in range(20)]
    return cls(topics=topics, allow_auto_topic_creation=True)


def metadata_response(cls: type) -> Any:
    api = sys.modules[cls.__module__]  # the struct classes live beside the message
    brokers = [
        api.MetadataResponseBroker(
            node_id=b, host=f"broker-{b}.kafka.internal", port=9092, rack=f"rack-{b}"
        )
        for b in range(3)
    ]
    topics = []
    for t in range(50):
        partitions = [
            api.MetadataResponsePartition(
                error_code=0,
                partition_index=p,
                leader_id=p % 3,
                leader_epoch=7,
                replica_nodes=[p % 3, (p + 1) % 3, (p + 2) % 3],
                isr_nodes=[p % 3, (p + 1) % 3, (p + 2) % 3],
                offline_replicas=[],
            )
            for p in range(20)
        ]
        topics.append(
            api.MetadataResponseTopic(
                error_code=0,
                name=f"topic-{t:04d}",
                topic_id=uuid.UUID(int=(t + 1) * 0x1234567890ABCDEF),
                is_internal=False,
                partitions=partitions,
                topic_authorized_operations=-2147483648,
            )
        )
    return cls(
        throttle_time_ms=0,
        brokers=brokers,
        cluster_id="kafka-specgen-bench",
        controller_id=1,
        topics=topics,
    )


def produce_request(cls: type) -> Any:
    api = sys.modules[cls.__module__]  # the struct classes live beside the message
    topics = [
        api.ProduceRequestTopicProduceData(
            name=f"bench-topic-{t}",
            partition_data=[
                api.ProduceRequestPartitionProduceData(index=p, records=_records(t * 4 + p))
                for p in range(4)
            ],
        )
        for t in range(5)
    ]
    return cls(transactional_id=None, acks=-1, timeout_ms=30000, topic_data=topics)


def fetch_response(cls: type) -> Any:
    return _fetch_response(cls, lambda t: {"topic": f"bench-topic-{t}"})


def fetch_response_topic_ids(cls: type) -> Any:
    """The same response at v13+, where a topic id replaces the topic name (KIP-516)."""
    return _fetch_response(cls, lambda t: {"topic_id": uuid.UUID(int=(t + 1) * 0x0123456789ABCDEF)})


def _fetch_response(cls: type, topic: Callable[[int], dict[str, Any]]) -> Any:
    api = sys.modules[cls.__module__]  # the struct classes live beside the message
    topics = [
        api.FetchResponseFetchableTopicResponse(
            **topic(t),
            partitions=[
                api.FetchResponsePartitionData(
                    partition_index=p,
                    error_code=0,
                    high_watermark=100_000 + p,
                    last_stable_offset=100_000 + p,
                    log_start_offset=0,
                    aborted_transactions=None,
                    preferred_read_replica=-1,
                    records=_records(100 + t * 4 + p),
                )
                for p in range(4)
            ],
        )
        for t in range(5)
    ]
    return cls(throttle_time_ms=0, error_code=0, session_id=12345, responses=topics)


# --- frame sets ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Body:
    """One frame's body: the message class that reads it, the version, the bytes (what
    follows the header), and where it was captured (``file:line``)."""

    cls: Any  # a generated message class
    version: int
    data: bytes
    where: str


@dataclass
class Frames:
    """What a frame set's loader read with one package: the bodies it decodes and
    re-encodes byte for byte, out of ``total`` frames; ``left_out``: why the others were not
    (reason -> how many)."""

    bodies: list[Body]
    total: int
    left_out: Counter[str] = dataclasses.field(default_factory=Counter)


@dataclass(frozen=True)
class FrameSet:
    id: str
    package: str  # "newest": generated from the newest spec corpus
    load: Callable[[str], Frames]  # package name -> the bodies
    shape: str


def golden_bodies(package: str) -> Frames:
    """Every frame of ``tests/golden/*.jsonl`` that ``package`` reads, split into header
    and body with the package's own header classes; only the body is kept. The captures'
    quirks are those the golden tests know (``bench/golden.py``): a request a client padded
    with trailing bytes is read without them, and a frame that breaks the protocol (a
    broker's null in a non-nullable array) or has a version no spec knows is left out,
    counted."""
    for module in ("framing", "registry", "headers", "errors"):
        importlib.import_module(f"{package}.{module}")
    pkg = sys.modules[package]
    registry, headers = pkg.registry, pkg.headers
    frames = golden_frames()
    out = Frames([], len(frames))
    for frame in frames:
        entry = registry.API_KEYS.get(frame.api_key)
        if entry is None:
            out.left_out[f"api key {frame.api_key}: not in the spec corpus"] += 1
            continue
        request = frame.dir == "request"
        cls = entry.request if request else entry.response
        name = f"{cls.__name__} v{frame.api_version}"
        try:
            if request:
                header = headers.RequestHeader
                header_version = registry.request_header_version(frame.api_key, frame.api_version)
            else:
                header = headers.ResponseHeader
                header_version = registry.response_header_version(frame.api_key, frame.api_version)
            _, start = header.decode_from(frame.data, 0, header_version)
            end = len(frame.data) - trailing_bytes(frame, pkg)
            body = frame.data[start:end]
            obj = cls.decode(body, frame.api_version)
        except Exception as exc:  # noqa: BLE001  counted with its reason
            out.left_out[f"{name}: {str(exc).split(' (at byte')[0]}"] += 1
            continue
        if obj.encode(frame.api_version) != body:  # the golden test says it cannot happen
            out.left_out[f"{name}: re-encodes to other bytes"] += 1
            continue
        out.bodies.append(Body(cls, frame.api_version, body, f"{frame.file}:{frame.line}"))
    return out


_ALL: list[Case | FrameSet] = [
    Case(
        "api_versions_response_v3",
        "repo",
        "ApiVersionsResponse",
        3,
        api_versions_response,
        "70 api keys + features epoch tag",
    ),
    Case(
        "metadata_response_v12",
        "repo",
        "MetadataResponse",
        12,
        metadata_response,
        "3 brokers, 50 topics x 20 partitions",
    ),
    Case("metadata_request_v4", "repo", "MetadataRequest", 4, metadata_request, "20 topics"),
    Case(
        "produce_request_v9",
        "kp",
        "ProduceRequest",
        9,
        produce_request,
        "5 topics x 4 partitions, 1 KiB records",
    ),
    Case(
        "fetch_response_v12",
        "kp",
        "FetchResponse",
        12,
        fetch_response,
        "5 topics x 4 partitions, 1 KiB records",
    ),
    Case(
        "fetch_response_v16",
        "kp",
        "FetchResponse",
        16,
        fetch_response_topic_ids,
        "5 topics (by id) x 4 partitions, 1 KiB records",
    ),
    Case(
        "api_versions_request_v3",
        "repo",
        "ApiVersionsRequest",
        3,
        api_versions_request,
        "client software name and version",
    ),
    FrameSet(
        "golden_frames",
        "newest",
        golden_bodies,
        "every golden frame body (tests/golden): ~30 APIs, both directions",
    ),
]
CASES: dict[str, Case | FrameSet] = {c.id: c for c in _ALL}
