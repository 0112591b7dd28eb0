"""Golden bytes: frames captured between real clients and a real broker (tests/golden/).

Every frame of every capture file must decode and re-encode to the identical bytes (header
and body) with a package generated from the newest spec corpus that covers its version:
kafka-python 3.0.12's set first, Apache Kafka trunk 2024-10 for versions it lacks (both
from the tool's bundle of spec sets). Packages are generated once per session into a
temporary folder.

- ``test_golden_frame``: one test per (api, direction, version, client, sample), e.g.
  ``api_versions_response_v3_librdkafka_000`` (at most ``SAMPLES`` per group);
- ``test_every_golden_frame_round_trips``: all frames, none left out;
- ``test_agrees_with_kafka_python``: our decoded values equal kafka-python 3.0.12's
  decoding of the same body wherever kafka-python can decode it;
- field assertions per API: what the workloads in tools/record_golden.py did is what the
  frames say (the first workloads' files, ``ORIGINAL_WORKLOADS``, per API; the
  record-batch files per file: codecs, magic 0/1 message sets, aborted transactions).
"""

from __future__ import annotations

import dataclasses
import gzip
import re
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any, Collection, Iterator

import pytest

from bench.golden import (
    BROKER_VIOLATIONS,
    GOLDEN,
    Frame,
    golden_frames,
    read_capture,
    trailing_bytes,
)
from kafka_specgen.load import load_paths
from tests.support import genpkg

SAMPLES = 3  # per (api, direction, version, client)


# --- corpora ---------------------------------------------------------------------------------


def corpus_paths() -> list[tuple[str, Path]]:
    """Spec folders, newest first: (package name, folder)."""
    return [
        ("golden_kp3012", genpkg.CORPORA / genpkg.KAFKA_PYTHON_SET / "message"),
        ("golden_trunk", genpkg.CORPORA / "trunk-2024-10" / "message"),
    ]


@lru_cache(maxsize=None)
def spec_facts() -> list[tuple[str, dict[int, tuple[str, int, int]]]]:
    """Per corpus: api key -> (request name, min version, max version), from the raw specs."""
    facts = []
    for name, path in corpus_paths():
        apis: dict[int, tuple[str, int, int]] = {}
        for raw in load_paths([path]):
            data = raw.data
            if data.get("type") != "request" or "apiKey" not in data:
                continue
            lo, _, hi = str(data["validVersions"]).partition("-")
            apis[int(data["apiKey"])] = (str(data["name"]), int(lo), int(hi or lo))
        facts.append((name, apis))
    return facts


def corpus_for(api_key: int, version: int) -> str | None:
    for name, apis in spec_facts():
        entry = apis.get(api_key)
        if entry is not None and entry[1] <= version <= entry[2]:
            return name
    return None


def api_snake(api_key: int) -> str:
    for _, apis in spec_facts():
        if api_key in apis:
            name = apis[api_key][0].removesuffix("Request")
            return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
    return f"api{api_key}"


_PACKAGES: dict[str, ModuleType] = {}


def package(name: str, tmp_root: Path) -> ModuleType:
    """The package generated from corpus ``name`` (generated once per session)."""
    if name not in _PACKAGES:
        path = dict(corpus_paths())[name]
        pkg = genpkg.generate_package([path], tmp_root, name)
        for module in ("framing", "registry", "headers", "errors", "api_versions"):
            genpkg.import_module(name, module)
        _PACKAGES[name] = pkg
    return _PACKAGES[name]


@pytest.fixture(scope="session")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("golden_pkgs")
    return lambda name: package(name, root)


# --- golden frames ---------------------------------------------------------------------------


def covered(frame: Frame) -> bool:
    return corpus_for(frame.api_key, frame.api_version) is not None


def sampled() -> list[Any]:
    groups: dict[tuple[str, str, int, str], list[Frame]] = defaultdict(list)
    for frame in golden_frames():
        if covered(frame):
            groups[(api_snake(frame.api_key), frame.dir, frame.api_version, frame.client)].append(
                frame
            )
    params = []
    for (api, direction, version, client), frames in sorted(groups.items()):
        # spread the samples over the capture (first, middle, last, ...)
        step = max(1, len(frames) // SAMPLES)
        for n, frame in enumerate(frames[::step][:SAMPLES]):
            params.append(pytest.param(frame, id=f"{api}_{direction}_v{version}_{client}_{n:03d}"))
    return params


def decode(frame: Frame, pkg: ModuleType) -> tuple[Any, Any, int]:
    """``(header, body, header_length)`` of a golden frame, decoded with ``pkg``."""
    framing, registry = pkg.framing, pkg.registry
    if frame.dir == "request":
        extra = trailing_bytes(frame, pkg)
        header, body = framing.decode_request(frame.data[: len(frame.data) - extra])
        version = registry.request_header_version(frame.api_key, frame.api_version)
    else:
        header, body = framing.decode_response(frame.data, frame.api_key, frame.api_version)
        version = registry.response_header_version(frame.api_key, frame.api_version)
    return header, body, len(header.encode(version))


def encode(frame: Frame, pkg: ModuleType, header: Any, body: Any) -> bytes:
    if frame.dir == "request":
        return bytes(pkg.framing.encode_request(header, body))
    return bytes(pkg.framing.encode_response(header, body, frame.api_key, frame.api_version))


def round_trip_problem(frame: Frame, pkg: ModuleType) -> str | None:
    """None if the frame decodes and re-encodes byte-exact (or is a known broker protocol
    violation that decoding refuses with the expected error), else what went wrong."""
    violation = BROKER_VIOLATIONS.get((frame.api_key, frame.dir, frame.api_version))
    extra = trailing_bytes(frame, pkg)
    if extra:
        frame = dataclasses.replace(frame, data=frame.data[:-extra])
    try:
        header, body, _ = decode(frame, pkg)
    except pkg.errors.DecodeError as exc:
        if violation is not None and str(exc).startswith(violation):
            return None
        return f"{frame.where}: decode failed: {exc!r}"
    except Exception as exc:  # noqa: BLE001 (reported with the frame's name)
        return f"{frame.where}: decode failed: {exc!r}"
    if violation is not None:
        return f"{frame.where}: decoded although the broker broke the protocol: {body!r}"
    try:
        again = encode(frame, pkg, header, body)
    except Exception as exc:  # noqa: BLE001
        return f"{frame.where}: re-encode failed: {exc!r}"
    if again != frame.data:
        at = next(
            (i for i, (a, b) in enumerate(zip(again, frame.data)) if a != b),
            min(len(again), len(frame.data)),
        )
        return (
            f"{frame.where}: re-encoded bytes differ at offset {at} "
            f"(wire {len(frame.data)} bytes, ours {len(again)}): "
            f"wire ...{frame.data[at:at + 16].hex()} ours ...{again[at:at + 16].hex()}"
        )
    return None


#: The capture files of the first workloads (one producer, consumer, admin and transaction
#: workload per client, magic 2 everywhere): the workload tests below were written for
#: them. The record-batch files (``*_records_<codec>``, ``kafka_python_magic<0|1>_*``,
#: ``*_txn_abort``) have their own tests.
ORIGINAL_WORKLOADS = frozenset(
    {
        "aiokafka_consumer.jsonl",
        "aiokafka_producer.jsonl",
        "handmade_requests.jsonl",
        "kafka_python_admin.jsonl",
        "kafka_python_consumer.jsonl",
        "kafka_python_producer.jsonl",
        "librdkafka_admin.jsonl",
        "librdkafka_consumer.jsonl",
        "librdkafka_producer.jsonl",
        "librdkafka_transactions.jsonl",
    }
)


def decoded(
    packages: Any,
    api_key: int,
    direction: str,
    client: str | None = None,
    files: Collection[str] | None = None,
) -> list[tuple[Frame, Any, Any]]:
    out = []
    for frame in golden_frames():
        if (
            frame.api_key == api_key
            and frame.dir == direction
            and covered(frame)
            and (client is None or frame.client == client)
            and (files is None or frame.file in files)
            and (api_key, direction, frame.api_version) not in BROKER_VIOLATIONS
        ):
            header, body, _ = decode(frame, packages(corpus_for(api_key, frame.api_version)))
            out.append((frame, header, body))
    return out


# --- the captures themselves ------------------------------------------------------------------


def test_captures_meet_the_targets() -> None:
    frames = golden_frames()
    assert ORIGINAL_WORKLOADS <= {f.file for f in frames}
    assert len(frames) >= 1000
    assert len({f.api_key for f in frames}) >= 20
    assert {"librdkafka", "kafka_python", "aiokafka"} <= {f.client for f in frames}
    # each (connection, correlation id) request has its response, in order, after it
    for path in GOLDEN.glob("*.jsonl"):
        seen: set[tuple[int, int]] = set()
        for rec in read_capture(path):
            key = (rec["conn"], rec["correlation_id"])
            if rec["dir"] == "request":
                seen.add(key)
            else:
                assert key in seen, f"{path.name}: response {key} before its request"


@pytest.mark.parametrize("frame", sampled())
def test_golden_frame(frame: Frame, packages: Any) -> None:
    pkg = packages(corpus_for(frame.api_key, frame.api_version))
    problem = round_trip_problem(frame, pkg)
    assert problem is None, problem
    if (frame.api_key, frame.dir, frame.api_version) in BROKER_VIOLATIONS:
        return
    header, _, _ = decode(frame, pkg)
    assert header.correlation_id == frame.correlation_id
    if frame.dir == "request":
        assert (header.request_api_key, header.request_api_version) == (
            frame.api_key,
            frame.api_version,
        )
        assert header.client_id == frame.client_id


def test_every_golden_frame_round_trips(packages: Any) -> None:
    problems = []
    checked = 0
    for frame in golden_frames():
        name = corpus_for(frame.api_key, frame.api_version)
        if name is None:
            continue
        checked += 1
        problem = round_trip_problem(frame, packages(name))
        if problem:
            problems.append(problem)
    quirks = sum(
        1
        for f in golden_frames()
        if covered(f) and trailing_bytes(f, packages(corpus_for(f.api_key, f.api_version)))
    )
    assert quirks <= 5, f"{quirks} frames with trailing bytes: a client quirk or our bug?"
    assert checked >= 1000
    assert not problems, f"{len(problems)} of {checked} frames:\n" + "\n".join(problems[:30])


def test_uncovered_frames_are_only_the_odd_api_versions() -> None:
    """The only frames no corpus covers are the hand-made ApiVersions v5 exchange."""
    uncovered = {(f.api_key, f.api_version) for f in golden_frames() if not covered(f)}
    assert uncovered == {(18, 5)}


# --- agreement with kafka-python 3.0.12 ------------------------------------------------------


@lru_cache(maxsize=None)
def models(name: str) -> dict[str, Any]:
    return {m.name: m for m in genpkg.load_messages([dict(corpus_paths())[name]])}


def test_agrees_with_kafka_python(packages: Any) -> None:
    from bench.peers import KafkaPython, Unsupported

    peer = KafkaPython()
    compared: defaultdict[str, int] = defaultdict(int)
    mismatches = []
    for frame in golden_frames():
        name = corpus_for(frame.api_key, frame.api_version)
        if name is None or (frame.api_key, frame.dir, frame.api_version) in BROKER_VIOLATIONS:
            continue
        pkg = packages(name)
        header, body, header_length = decode(frame, pkg)
        message = models(name)[type(body).__name__]
        try:
            end = len(frame.data) - trailing_bytes(frame, pkg)
            kobj = peer.decode(message, frame.api_version, frame.data[header_length:end])
            theirs = peer.from_peer(kobj, type(body), message, frame.api_version)
        except Unsupported:
            continue
        except Exception:  # noqa: BLE001  kafka-python cannot decode this frame
            continue
        compared[type(body).__name__] += 1
        if theirs != body:
            mismatches.append(
                f"{frame.where} {type(body).__name__} v{frame.api_version}:\n"
                f"  ours   {body!r}\n  theirs {theirs!r}"[:2000]
            )
    assert sum(compared.values()) >= 500, dict(compared)
    assert len(compared) >= 20, dict(compared)
    assert not mismatches, f"{len(mismatches)} mismatches:\n" + "\n".join(mismatches[:5])


# --- what the workloads did is what the frames say --------------------------------------------


def test_api_versions(packages: Any) -> None:
    requests = decoded(packages, 18, "request")
    software = {
        (f.client, f.api_version): (b.client_software_name, b.client_software_version)
        for f, _, b in requests
        if f.api_version >= 3
    }
    name, version = software[("librdkafka", 3)]
    assert name == "confluent-kafka-python" and "rdkafka-2.16" in version
    assert software[("kafka_python", 4)] == ("kafka-python", "3.0.12")
    assert software[("handmade", 3)] == ("kafka-specgen-golden", "0.1.0")
    assert {f.api_version for f, _, _ in requests if f.client == "handmade"} >= {0, 1, 2, 3, 4}
    responses = decoded(packages, 18, "response")
    assert responses
    for frame, _, body in responses:
        assert body.error_code == 0, frame.where
        ranges = {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}
        assert ranges[18] == (0, 4) and ranges[3] == (0, 12) and ranges[0][1] == 11
        if frame.api_version >= 3:
            assert len(ranges) == 36


def test_api_versions_above_the_broker_maximum(packages: Any) -> None:
    """Tansu answers an ApiVersions request above its maximum (v5) with error 0 and a
    v3-style body (no KIP-511 downgrade to v0): both sides still round-trip, read at the
    highest version the layouts share (the request's body is v4's)."""
    pkg = packages(corpus_for(18, 4))
    odd = [f for f in golden_frames() if (f.api_key, f.api_version) == (18, 5)]
    assert {f.dir for f in odd} == {"request", "response"}
    for frame in odd:
        if frame.dir == "request":
            header = pkg.headers.RequestHeader.decode_from(frame.data, 0, 2)
            header, pos = header
            assert header.request_api_version == 5
            body = pkg.api_versions.ApiVersionsRequest.decode(frame.data[pos:], 4)
            assert body.client_software_name == "kafka-specgen-golden"
            assert header.encode(2) + body.encode(4) == frame.data
        else:
            header, body = pkg.framing.decode_response(frame.data, 18, 3)
            assert body.error_code == 0
            assert pkg.framing.encode_response(header, body, 18, 3) == frame.data


def _batches(records: bytes) -> Iterator[tuple[int, int, bytes]]:
    """(attributes, record count, payload) of each record batch (magic v2) in ``records``."""
    pos = 0
    while pos + 61 <= len(records):
        length = int.from_bytes(records[pos + 8 : pos + 12], "big")
        end = pos + 12 + length
        assert records[pos + 16] == 2, "magic v2"
        attributes = int.from_bytes(records[pos + 21 : pos + 23], "big")
        count = int.from_bytes(records[pos + 57 : pos + 61], "big")
        yield attributes, count, records[pos + 61 : end]
        pos = end


def test_produce(packages: Any) -> None:
    expected = {
        "librdkafka": ("rd-produce", 3, -1, 10),
        "kafka_python": ("kp-produce", 3, -1, 9),
        "aiokafka": ("aio-produce", 2, 1, 7),
    }
    requests = decoded(packages, 0, "request", files=ORIGINAL_WORKLOADS)
    gzipped = defaultdict(int)
    for frame, header, body in requests:
        if frame.client not in expected or not header.client_id.startswith("golden-"):
            continue
        topic, partitions, acks, version = expected[frame.client]
        if "txn" in header.client_id:
            continue
        assert frame.api_version == version, frame.where
        assert body.acks == acks, frame.where
        for t in body.topic_data:
            assert t.name == topic
            for p in t.partition_data:
                assert 0 <= p.index < partitions
                for attributes, count, payload in _batches(p.records):
                    assert count >= 1
                    if attributes & 7 == 1:
                        gzipped[frame.client] += 1
                        text = gzip.decompress(payload)
                        assert b"value" in text and b"key-" in text
                    else:
                        assert b"value" in payload and b"key-" in payload
                        assert b"source" in payload  # the header each workload set
    assert gzipped["librdkafka"] and gzipped["kafka_python"]
    responses = decoded(packages, 0, "response", files=ORIGINAL_WORKLOADS)
    assert responses
    assert all(
        p.error_code == 0
        for _, _, b in responses
        for t in b.responses
        for p in t.partition_responses
    )


def test_fetch(packages: Any) -> None:
    topics = {"librdkafka": "rd-produce", "kafka_python": "kp-produce", "aiokafka": "aio-produce"}
    responses = decoded(packages, 1, "response", files=ORIGINAL_WORKLOADS)
    clients = set()
    for frame, _, body in responses:
        for t in body.responses:
            if frame.api_version < 13:
                assert t.topic == topics[frame.client]
            for p in t.partitions:
                assert p.error_code == 0
                if p.records:
                    clients.add(frame.client)
    assert clients == set(topics)


def test_metadata(packages: Any) -> None:
    for frame, _, body in decoded(packages, 3, "response"):
        assert [(b.node_id, b.host) for b in body.brokers] == [(111, "127.0.0.1")], frame.where
    handmade = [(f.api_version, b) for f, _, b in decoded(packages, 3, "response", "handmade")]
    assert sorted({v for v, _ in handmade}) == [0, 1, 4, 9, 12]
    for version, body in handmade:
        names = {t.name: t.error_code for t in body.topics}
        assert names["rd-produce"] == 0
        partitions = {t.name: len(t.partitions) for t in body.topics}
        assert partitions["rd-produce"] == 3
        if version >= 2:
            assert body.cluster_id == "tansu_cluster"


def test_create_and_delete_topics(packages: Any) -> None:
    created = {
        t.name: t.num_partitions for _, _, b in decoded(packages, 19, "request") for t in b.topics
    }
    assert created["rd-admin-a"] == 3 and created["kp-admin-a"] == 2
    assert created["rd-produce"] == 3 and created["aio-produce"] == 2
    for frame, _, body in decoded(packages, 19, "response"):
        assert all(t.error_code == 0 for t in body.topics), frame.where
    deleted = {
        n
        for _, _, b in decoded(packages, 20, "request")
        for n in (list(b.topic_names) + [t.name for t in b.topics])
    }
    assert {"rd-admin-a", "rd-admin-b", "kp-admin-a", "kp-admin-b"} <= deleted


def test_consumer_groups(packages: Any) -> None:
    joins = decoded(packages, 11, "request")
    assert {(f.client, b.group_id) for f, _, b in joins} >= {
        ("librdkafka", "golden-rd-group"),
        ("kafka_python", "golden-kp-group"),
    }
    assert all(b.protocol_type == "consumer" for _, _, b in joins)
    join_errors = [b.error_code for _, _, b in decoded(packages, 11, "response")]
    assert 79 in join_errors and 0 in join_errors  # MEMBER_ID_REQUIRED first, then joined
    commits = decoded(packages, 8, "request")
    committed = {
        (b.group_id, t.name, p.partition_index): p.committed_offset
        for _, _, b in commits
        for t in b.topics
        for p in t.partitions
    }
    produced: defaultdict[tuple[str, int], int] = defaultdict(int)
    for _, _, body in decoded(packages, 0, "request", files=ORIGINAL_WORKLOADS):
        for t in body.topic_data:
            for p in t.partition_data:
                produced[(t.name, p.index)] += sum(n for _, n, _ in _batches(p.records))
    # the consumers read everything and committed the end of each partition
    for group, topic in (("golden-rd-group", "rd-produce"), ("golden-kp-group", "kp-produce")):
        assert committed[(group, topic, 0)] == produced[(topic, 0)] > 0
    keys = {
        b.key or next(iter(b.coordinator_keys), None)
        for _, _, b in decoded(packages, 10, "request")
    }
    assert {"golden-rd-group", "golden-kp-group"} <= keys


def test_transactions(packages: Any) -> None:
    init = [b for f, _, b in decoded(packages, 22, "request", "librdkafka")]
    assert "golden-rd-txn-id" in {b.transactional_id for b in init}
    end = [b for _, _, b in decoded(packages, 26, "request", files=ORIGINAL_WORKLOADS)]
    assert [(b.transactional_id, b.committed) for b in end] == [("golden-rd-txn-id", True)]
    offsets = [b for _, _, b in decoded(packages, 28, "request", files=ORIGINAL_WORKLOADS)]
    assert offsets and offsets[0].group_id == "golden-rd-txn-group"


# --- the record-batch workloads (tests/golden/README.md, "Record batches") -------------------

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")  # attributes & 7
#: client -> (file prefix, topic prefix, Produce version, Fetch version)
RECORD_CLIENTS = {
    "librdkafka": ("librdkafka", "rd", 10, 16),
    "kafka_python": ("kafka_python", "kp", 9, 12),
    "aiokafka": ("aiokafka", "aio", 7, 11),
}
TRANSACTIONAL = 0x10
CONTROL = 0x20


@dataclass(frozen=True)
class Entry:
    """One top-level entry of a records field: a record batch (magic 2: ``count`` records)
    or a message (magic 0 and 1; a compressed one is one wrapper, ``count`` is None)."""

    magic: int
    attributes: int
    count: int | None
    payload: bytes  # magic 2: what follows the batch header; magic 0/1: the value

    @property
    def codec(self) -> str:
        return CODECS[self.attributes & 7]


def _entries(records: bytes | None) -> list[Entry]:
    """Every entry of a records field, of any magic, read from the wire layout (message
    format v0/v1: offset, size, crc, magic, attributes, [timestamp,] key, value)."""
    data = records or b""
    out = []
    pos = 0
    while pos < len(data):
        size = int.from_bytes(data[pos + 8 : pos + 12], "big")
        end = pos + 12 + size
        assert end <= len(data), "a whole entry (no fetch-size truncation here)"
        magic = data[pos + 16]
        if magic == 2:
            attributes = int.from_bytes(data[pos + 21 : pos + 23], "big")
            count = int.from_bytes(data[pos + 57 : pos + 61], "big")
            out.append(Entry(2, attributes, count, data[pos + 61 : end]))
        else:
            assert magic in (0, 1), magic
            attributes = data[pos + 17]
            at = pos + 18 + (8 if magic == 1 else 0)  # magic 1 has a timestamp
            key_size = int.from_bytes(data[at : at + 4], "big", signed=True)
            at += 4 + max(key_size, 0)
            value_size = int.from_bytes(data[at : at + 4], "big", signed=True)
            value = data[at + 4 : at + 4 + max(value_size, 0)]
            assert at + 4 + max(value_size, 0) == end
            out.append(Entry(magic, attributes, None, value))
        pos = end
    return out


def _record_files(kind: str) -> list[str]:
    names = sorted(p.name for p in GOLDEN.glob("*.jsonl"))
    if kind == "records":
        return [
            n
            for n in names
            if re.fullmatch(
                r"(librdkafka|kafka_python|aiokafka)_records_"
                r"(none|gzip|snappy|lz4|zstd)\.jsonl",
                n,
            )
        ]
    if kind == "legacy":
        return [n for n in names if re.fullmatch(r"kafka_python_magic[01]_\w+\.jsonl", n)]
    return [n for n in names if n.endswith("_txn_abort.jsonl")]


def _in_file(packages: Any, name: str, api_key: int, direction: str) -> list[tuple[Any, Any]]:
    return [(h, b) for _, h, b in decoded(packages, api_key, direction, files={name})]


def _partitions(body: Any, topics: str, partitions: str) -> list[tuple[Any, Any]]:
    return [(t, p) for t in getattr(body, topics) for p in getattr(t, partitions)]


def test_record_files_are_all_there() -> None:
    assert len(_record_files("records")) == 15  # 3 clients x 5 codecs
    assert len(_record_files("legacy")) == 7  # magic 0: no lz4
    assert _record_files("txn") == ["kafka_python_txn_abort.jsonl", "librdkafka_txn_abort.jsonl"]


@pytest.mark.parametrize("name", _record_files("records"))
def test_record_batches_of_every_codec(packages: Any, name: str) -> None:
    """3 batches of 5 records, magic 2 in the file's codec, produced one batch per request
    at the client's Produce version and read back in one Fetch response."""
    match = re.fullmatch(r"(\w+)_records_(\w+)\.jsonl", name)
    assert match is not None
    client, codec = match.groups()
    _, short, produce_version, fetch_version = RECORD_CLIENTS[client]
    topic = f"{short}-rec-{codec}"
    produced = []
    for header, body in _in_file(packages, name, 0, "request"):
        assert header.client_id == f"golden-{short}-rec-{codec}"
        assert header.request_api_version == produce_version
        assert body.acks == -1 and body.transactional_id is None
        for t, p in _partitions(body, "topic_data", "partition_data"):
            assert (t.name, p.index) == (topic, 0)
            produced += _entries(p.records)
    assert [(e.magic, e.codec, e.count) for e in produced] == [(2, codec, 5)] * 3
    answers = [
        (p.error_code, p.base_offset)
        for _, b in _in_file(packages, name, 0, "response")
        for _, p in _partitions(b, "responses", "partition_responses")
    ]
    assert answers == [(0, 0), (0, 5), (0, 10)]
    fetched = []
    for header, body in _in_file(packages, name, 1, "response"):
        for t, p in _partitions(body, "responses", "partitions"):
            assert p.error_code == 0
            if fetch_version < 13:
                assert t.topic == topic
            if p.records:
                assert p.high_watermark == 15
                fetched += _entries(p.records)
    assert [(e.magic, e.codec, e.count) for e in fetched] == [(2, codec, 5)] * 3
    # the fetched batches are the produced ones, byte for byte
    assert [e.payload for e in fetched] == [e.payload for e in produced]
    versions = {f.api_version for f, _, _ in decoded(packages, 1, "request", files={name})}
    assert versions == {fetch_version}
    if codec == "gzip":
        assert all(b"batch" in gzip.decompress(e.payload) for e in produced)
    elif codec == "none":
        assert all(b"batch" in e.payload for e in produced)


@pytest.mark.parametrize("name", _record_files("legacy"))
def test_legacy_message_formats(packages: Any, name: str) -> None:
    """kafka-python pinned to (0, 9) sends Produce v1 with magic 0 messages, pinned to
    (0, 10, 0) Produce v2 with magic 1: three requests of 5 messages (one compressed
    wrapper when compressed). Tansu answers a compressed one with error 59 and base offset
    -1 and closes the connection on an uncompressed one. Then one magic 2 batch (Produce
    v9), which the pinned consumer reads back unconverted in Fetch v1 (v2)."""
    match = re.fullmatch(r"kafka_python_magic([01])_(\w+)\.jsonl", name)
    assert match is not None
    magic, codec = int(match.group(1)), match.group(2)
    topic = f"kp-magic{magic}-{codec}"
    legacy_version = magic + 1  # Produce and Fetch v1 (magic 0), v2 (magic 1)
    legacy, modern = [], []
    for frame, header, body in decoded(packages, 0, "request", files={name}):
        parts = _partitions(body, "topic_data", "partition_data")
        assert [(t.name, p.index) for t, p in parts] == [(topic, 0)], frame.where
        entries = _entries(parts[0][1].records)
        if header.client_id == f"golden-kp-magic{magic}-{codec}":
            assert frame.api_version == legacy_version, frame.where
            legacy.append(entries)
        else:
            assert header.client_id == f"golden-kp-magic{magic}-{codec}-v2"
            assert frame.api_version == 9, frame.where
            modern.append(entries)
    per_request = [(magic, codec)] * (5 if codec == "none" else 1)
    assert [[(e.magic, e.codec) for e in entries] for entries in legacy] == [per_request] * 3
    if codec == "gzip":  # each wrapper's value is a gzip'd message set of 5 messages
        for entries in legacy:
            inner = _entries(gzip.decompress(entries[0].payload))
            assert [(e.magic, e.codec) for e in inner] == [(magic, "none")] * 5
    elif codec == "none":
        # values: text, text, null (a tombstone), text, empty
        for entries in legacy:
            assert [b"batch" in e.payload for e in entries] == [True, True, False, True, False]
    assert [[(e.magic, e.codec, e.count) for e in entries] for entries in modern] == [
        [(2, codec, 2)]
    ]
    by_version: defaultdict[int, list[tuple[int, int]]] = defaultdict(list)
    for frame, _, b in decoded(packages, 0, "response", files={name}):
        by_version[frame.api_version] += [
            (p.error_code, p.base_offset)
            for _, p in _partitions(b, "responses", "partition_responses")
        ]
    expected_legacy = [] if codec == "none" else [(59, -1)] * 3  # UNKNOWN_PRODUCER_ID
    assert by_version.get(legacy_version, []) == expected_legacy
    assert by_version[9] == [(0, 0)]
    fetched = []
    versions = set()
    for frame, _, body in decoded(packages, 1, "response", files={name}):
        versions.add(frame.api_version)
        for t, p in _partitions(body, "responses", "partitions"):
            assert (t.topic, p.partition_index, p.error_code) == (topic, 0, 0)
            fetched += _entries(p.records)
    assert versions == {legacy_version}
    # Tansu returns the magic 2 batch as stored: no conversion to the fetch version's format
    assert [(e.magic, e.codec, e.count) for e in fetched] == [(2, codec, 2)]
    assert [e.payload for e in fetched] == [modern[0][0].payload]


@pytest.mark.parametrize("name", _record_files("txn"))
def test_aborted_transaction_workloads(packages: Any, name: str) -> None:
    """Commit, abort, commit: three transactional batches of 3 records, three EndTxn, and
    consumers at both isolation levels that get all 3 data batches and the 3 control
    batches, with an empty (not null) aborted-transactions list from Tansu."""
    client = "librdkafka" if name.startswith("librdkafka") else "kafka_python"
    _, short, produce_version, fetch_version = RECORD_CLIENTS[client]
    topic, txn_id = f"{short}-txn-abort", f"golden-{short}-txn-abort-id"
    codec = "lz4" if client == "librdkafka" else "none"
    produced = []
    for frame, header, body in decoded(packages, 0, "request", files={name}):
        assert frame.api_version == produce_version
        assert header.client_id == f"golden-{short}-txn-abort"
        assert body.transactional_id == txn_id
        for t, p in _partitions(body, "topic_data", "partition_data"):
            assert (t.name, p.index) == (topic, 0)
            produced += _entries(p.records)
    assert [
        (e.magic, e.codec, e.count, e.attributes & (TRANSACTIONAL | CONTROL)) for e in produced
    ] == [(2, codec, 3, TRANSACTIONAL)] * 3
    end = [(b.transactional_id, b.committed) for _, b in _in_file(packages, name, 26, "request")]
    assert end == [(txn_id, True), (txn_id, False), (txn_id, True)]
    assert all(b.error_code == 0 for _, b in _in_file(packages, name, 26, "response"))
    isolation = {h.client_id: b.isolation_level for h, b in _in_file(packages, name, 1, "request")}
    assert isolation == {
        f"golden-{short}-txn-committed": 1,  # read_committed
        f"golden-{short}-txn-uncommitted": 0,  # read_uncommitted
    }
    readers = set()
    for frame, _, body in decoded(packages, 1, "response", files={name}):
        assert frame.api_version == fetch_version
        for t, p in _partitions(body, "responses", "partitions"):
            assert p.error_code == 0
            assert p.aborted_transactions == ()  # empty, not null: no entries captured
            assert p.last_stable_offset == p.high_watermark
            if not p.records:
                continue
            readers.add(frame.client_id)
            fetched = _entries(p.records)
            data = [e for e in fetched if not e.attributes & CONTROL]
            markers = [e for e in fetched if e.attributes & CONTROL]
            assert [(e.codec, e.count) for e in data] == [(codec, 3)] * 3
            assert [e.payload for e in data] == [e.payload for e in produced]
            assert [(e.codec, e.count, e.attributes & TRANSACTIONAL) for e in markers] == [
                ("none", 1, TRANSACTIONAL)
            ] * 3
            # a control batch follows each transaction's data batch
            assert [bool(e.attributes & CONTROL) for e in fetched] == [False, True] * 3
    assert readers == set(isolation)


def test_describe_configs(packages: Any) -> None:
    resources = {
        (r.resource_type, r.resource_name)
        for _, _, b in decoded(packages, 32, "request")
        for r in b.resources
    }
    assert {(2, "rd-admin-a"), (4, "111"), (2, "kp-admin-a")} <= resources
