"""Decoding one captured frame with a generated package, in plain Python (no Spark).

``Decoder(package).decode(row)`` decodes a row of the ``kafka-capture`` data source
(``pipeline.frames.COLUMNS``) with the generated package ``package`` (importable by name:
one generated from the specs it is given), re-encodes it and compares
the bytes. The Spark job runs exactly this per frame (``decode_batches``), so a plain loop
over the same rows gives the same values (tests and ``bench/pipeline_bench.py`` use it).

With ``records=True`` the record data of Produce requests and Fetch responses is read
too (the package's ``records`` module): one ``BatchFacts`` per record batch (magic 2) or
top-level legacy message (magic 0/1), or one with ``error`` set where the data cannot be
read (the rest of that partition's data). Magic 2 counts come from the batch header, not
from decompressing; legacy compressed messages are decompressed to count what they hold.
"""

from __future__ import annotations

import base64
import importlib
import json
from typing import Any, Iterable, Iterator, NamedTuple

from .frames import COLUMNS

#: What ``Decoder.decode`` adds to a row.
OUT_COLUMNS = (
    "api_name",
    "message",
    "status",
    "reason",
    "reencoded_equal",
    "first_diff",
    "body",
    "software_name",
    "software_version",
    "batches",
)
#: The decoded rows' columns: the data source's (``error`` left out) plus ``OUT_COLUMNS``.
DECODED_COLUMNS = tuple(c for c in COLUMNS if c != "error") + OUT_COLUMNS

#: One record batch (or legacy top-level message) of a frame, or the data of a partition
#: that could not be read (``error`` set: the reason; ``data``: the bytes from there on).
BATCH_FIELDS = (
    ("topic", "string"),
    ("topic_id", "string"),
    ("partition", "int"),
    ("batch_index", "int"),
    ("base_offset", "long"),
    ("magic", "int"),
    ("compression", "string"),
    ("record_count", "int"),
    ("size_bytes", "int"),
    ("uncompressed_bytes", "long"),
    ("producer_id", "long"),
    ("producer_epoch", "int"),
    ("is_transactional", "boolean"),
    ("is_control", "boolean"),
    ("crc_ok", "boolean"),
    ("error", "string"),
    ("data", "binary"),
)
BATCH_DDL = "struct<" + ", ".join(f"{n}: {t}" for n, t in BATCH_FIELDS) + ">"
DECODED_DDL = (
    "conn string, ts double, src string, dst string, direction string, api_key int, "
    "api_version int, correlation_id int, client_id string, frame binary, api_name string, "
    "message string, status string, reason string, reencoded_equal boolean, first_diff int, "
    f"body string, software_name string, software_version string, batches array<{BATCH_DDL}>"
)


class BatchFacts(NamedTuple):
    topic: str | None
    topic_id: str | None  # Kafka's text form (base64) where the message names topics by id
    partition: int | None
    batch_index: int  # its place in the partition's record data, from 0
    base_offset: int | None
    magic: int | None
    compression: str | None  # none, gzip, snappy, lz4, zstd
    record_count: int | None  # magic 2: from the header; legacy: messages (decompressed)
    size_bytes: int | None  # on the wire
    uncompressed_bytes: int | None  # where known without decompressing magic 2 data
    producer_id: int | None  # magic 2 only
    producer_epoch: int | None
    is_transactional: bool | None
    is_control: bool | None
    crc_ok: bool | None
    error: str | None
    data: bytes | None  # error rows only: the unreadable bytes


class Decoded(NamedTuple):
    api_name: str | None
    message: str | None  # the body's class name, e.g. "MetadataRequest"
    status: str  # "decoded" or "error"
    reason: str | None  # why it is an error
    reencoded_equal: bool | None  # decode -> encode gave the frame's bytes
    first_diff: int | None  # first offset where the re-encoded bytes differ
    body: str | None  # JSON of body.to_dict()
    software_name: str | None  # ApiVersionsRequest v3+: the client software
    software_version: str | None
    batches: list[BatchFacts] | None = None  # Produce requests and Fetch responses


def _error(name: str | None, reason: str, message: str | None = None) -> Decoded:
    return Decoded(name, message, "error", reason, None, None, None, None, None)


#: Where record data sits: (api key, direction) -> (topics attribute, topic name
#: attributes, topic id attribute, partitions attribute, partition index attribute).
#: These are Kafka's field names (TopicData/PartitionData/Index/Records in Produce,
#: Responses/Partitions/PartitionIndex/Records in Fetch), stable across versions.
RECORD_PATHS = {
    (0, "request"): ("topic_data", ("name",), "topic_id", "partition_data", "index"),
    (1, "response"): ("responses", ("topic",), "topic_id", "partitions", "partition_index"),
}


class Decoder:
    """Decodes frames with one generated package; ``records``: read record batches too."""

    def __init__(self, package: str = "kafka_messages", *, records: bool = True) -> None:
        self.package = package
        self.framing = importlib.import_module(f"{package}.framing")
        self.registry = importlib.import_module(f"{package}.registry")
        self.errors = importlib.import_module(f"{package}.errors")
        self.read_records = records
        self.records: Any = None
        self.no_records: str | None = None  # why record batches cannot be read
        if records:
            try:
                self.records = importlib.import_module(f"{package}.records")
            except ImportError:
                self.no_records = (
                    f"the package {package} has no records module (generated before record "
                    "batches were supported): regenerate it"
                )

    def api_name(self, api_key: int | None) -> str | None:
        if api_key is None:
            return None
        try:
            return str(self.registry.api_name(api_key))
        except Exception:  # an api key the package does not know
            return None

    def decode(
        self,
        direction: str | None,
        api_key: int | None,
        api_version: int | None,
        frame: bytes,
        error: str | None = None,
    ) -> Decoded:
        name = self.api_name(api_key)
        if error is not None:
            return _error(name, error)
        try:
            if direction == "request":
                header, body = self.framing.decode_request(frame)
                again = self.framing.encode_request(header, body)
            elif api_key is None or api_version is None:
                return _error(
                    name,
                    "a response whose request is not in the capture (no api key "
                    "and version to decode it with)",
                )
            else:
                header, body = self.framing.decode_response(frame, api_key, api_version)
                again = self.framing.encode_response(header, body, api_key, api_version)
        except self.errors.DecodeError as exc:
            return _error(name, f"DecodeError: {exc}")
        except Exception as exc:  # a codec bug must not lose the frame either
            return _error(name, f"{type(exc).__name__} while decoding: {exc}")
        try:
            text = json.dumps(body.to_dict(), separators=(",", ":"))
        except Exception as exc:
            return _error(name, f"{type(exc).__name__} in to_dict: {exc}", type(body).__name__)
        equal = again == frame
        diff = None if equal else first_difference(bytes(again), frame)
        software = version = None
        if direction == "request" and api_key == 18:
            software = getattr(body, "client_software_name", None) or None
            version = getattr(body, "client_software_version", None) or None
        batches = None
        if self.read_records and api_key is not None and direction is not None:
            path = RECORD_PATHS.get((api_key, direction))
            if path is not None:
                batches = self.batches(body, path, complete=direction == "request")
        return Decoded(
            name,
            type(body).__name__,
            "decoded",
            None,
            equal,
            diff,
            text,
            software,
            version,
            batches,
        )

    def batches(
        self,
        body: Any,
        path: tuple[str, tuple[str, ...], str, str, str],
        complete: bool = False,
    ) -> list[BatchFacts]:
        """The record batches of a decoded Produce request or Fetch response (``complete``:
        a request, whose record data must end with a whole batch)."""
        topics_attr, name_attrs, id_attr, partitions_attr, index_attr = path
        out: list[BatchFacts] = []
        for topic in getattr(body, topics_attr, None) or ():
            name = next((getattr(topic, a) for a in name_attrs if getattr(topic, a, None)), None)
            raw_id = getattr(topic, id_attr, None)
            topic_id = _uuid_text(raw_id) if raw_id is not None and raw_id.int else None
            for part in getattr(topic, partitions_attr, None) or ():
                data = getattr(part, "records", None)
                index = getattr(part, index_attr, None)
                if data and self.no_records is not None:
                    out.append(_batch_error(name, topic_id, index, 0, self.no_records, data))
                elif data:
                    out += read_batches(
                        self.records,
                        data,
                        name,
                        topic_id,
                        index,
                        complete=complete,
                    )
        return out


def read_batches(
    records: Any,
    data: bytes,
    topic: str | None,
    topic_id: str | None,
    partition: int | None,
    *,
    complete: bool = False,
) -> list[BatchFacts]:
    """``BatchFacts`` of one partition's record data (``records``: the package's module).

    Data that cannot be read as batches (a bad length or magic, an impossible header) ends
    the list with an error entry holding the bytes from there on: where a next batch would
    start is unknown. A legacy compressed message whose inner messages cannot be read
    (a codec missing, corrupt data) is an error entry of its own, and reading goes on
    after it. ``complete``: the data must end with a whole batch (Produce requests; a Fetch
    response may end with part of one), else the rest is an error entry too.
    """
    out: list[BatchFacts] = []
    batches = records.iter_batches(data)
    try:
        for batch in batches:
            out.append(batch_facts(records, batch, topic, topic_id, partition, len(out)))
    except records.CorruptRecordError as exc:
        start = batches.position
        out.append(
            _batch_error(
                topic,
                topic_id,
                partition,
                len(out),
                f"record data cannot be read from byte {start} on ({exc})",
                data[start:],
            )
        )
        return out
    if complete and batches.trailing_bytes:
        start = batches.position
        size = batches.incomplete_size
        out.append(
            _batch_error(
                topic,
                topic_id,
                partition,
                len(out),
                f"record data ends {batches.trailing_bytes} bytes into "
                + (f"a batch of {size} bytes" if size else "a batch header"),
                data[start:],
            )
        )
    return out


def _batch_error(
    topic: str | None,
    topic_id: str | None,
    partition: int | None,
    index: int,
    reason: str,
    data: bytes,
) -> BatchFacts:
    return BatchFacts(
        topic,
        topic_id,
        partition,
        index,
        None,
        None,
        None,
        None,
        len(data),
        None,
        None,
        None,
        None,
        None,
        None,
        reason,
        bytes(data),
    )


#: Bytes of a legacy message besides its key and value (offset, size, CRC, magic,
#: attributes, key and value lengths; magic 1 adds a timestamp).
_LEGACY_OVERHEAD = {0: 26, 1: 34}


def batch_facts(
    records: Any,
    batch: Any,
    topic: str | None,
    topic_id: str | None,
    partition: int | None,
    index: int,
) -> BatchFacts:
    """One batch's facts. Magic 2: everything from the header (nothing decompressed).
    Legacy: a compressed wrapper is decompressed to count the messages it holds; an
    error doing so makes the entry an error entry."""
    magic = int(batch.magic)
    compression = batch.compression.name.lower()
    v2 = magic >= 2
    uncompressed: int | None
    count = batch.record_count
    if v2:
        uncompressed = batch.size if batch.compression == 0 else None
    elif batch.compression == 0:
        uncompressed = batch.size
    else:
        try:
            inner = list(batch.records())
        except records.CorruptRecordError as exc:
            return _batch_error(
                topic,
                topic_id,
                partition,
                index,
                f"legacy {compression} message (magic {magic}) at byte "
                f"{batch.offset_in_data} cannot be decompressed ({exc})",
                batch.raw,
            )
        count = len(inner)
        uncompressed = sum(
            _LEGACY_OVERHEAD[magic] + len(r.key or b"") + len(r.value or b"") for r in inner
        )
    return BatchFacts(
        topic,
        topic_id,
        partition,
        index,
        batch.base_offset,
        magic,
        compression,
        count,
        batch.size,
        uncompressed,
        batch.producer_id if v2 else None,
        batch.producer_epoch if v2 else None,
        bool(batch.is_transactional) if v2 else None,
        bool(batch.is_control) if v2 else None,
        bool(batch.crc_ok()),
        None,
        None,
    )


def _uuid_text(value: Any) -> str:
    """Kafka's text form of a UUID: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode("ascii")


def first_difference(a: bytes, b: bytes) -> int:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def _output(row: tuple[Any, ...], decoded: Decoded) -> tuple[Any, ...]:
    """A decoded row: ``frame`` is kept only where it is needed (errors and re-encoding
    mismatches); batches as tuples."""
    keep = decoded.status == "error" or decoded.reencoded_equal is False
    batches = decoded.batches
    return (
        *row[:9],
        row[9] if keep else None,
        *decoded[:-1],
        None if batches is None else [tuple(b) for b in batches],
    )


def decode_rows(
    rows: Iterable[tuple[Any, ...]], package: str = "kafka_messages", *, records: bool = True
) -> Iterator[tuple[Any, ...]]:
    """Decoded rows (``DECODED_COLUMNS``) of data-source rows (``frames.COLUMNS``): the plain
    loop."""
    decoder = Decoder(package, records=records)
    for row in rows:
        yield _output(row, decoder.decode(row[4], row[5], row[6], row[9], row[10]))


def decode_batches(batches: Iterable[Any], package: str, records: bool = True) -> Iterator[Any]:
    """``mapInArrow`` body: Arrow batches of data-source rows -> batches of decoded rows."""
    import pyarrow as pa  # type: ignore[import-untyped]  # no stubs or py.typed

    schema = arrow_schema()
    decoder = Decoder(package, records=records)
    for batch in batches:
        columns = [batch.column(name).to_pylist() for name in COLUMNS]
        out: list[list[Any]] = [[] for _ in DECODED_COLUMNS]
        for row in zip(*columns):
            values = _output(row, decoder.decode(row[4], row[5], row[6], row[9], row[10]))
            for column, value in zip(out, values):
                column.append(value)
        yield pa.RecordBatch.from_arrays(
            [pa.array(column, type=field.type) for column, field in zip(out, schema)],
            schema=schema,
        )


def arrow_schema() -> Any:
    """The Arrow schema of decoded rows (``DECODED_DDL``, exact types)."""
    import pyarrow as pa

    types = {
        "string": pa.string(),
        "double": pa.float64(),
        "int": pa.int32(),
        "long": pa.int64(),
        "binary": pa.binary(),
        "boolean": pa.bool_(),
    }
    batch = pa.struct([pa.field(n, types[t]) for n, t in BATCH_FIELDS])
    fields = []
    for part in DECODED_DDL.split(", "):
        name, kind = part.split(" ", 1)
        if name == "batches":
            fields.append(pa.field(name, pa.list_(batch)))
            break
        fields.append(pa.field(name, types[kind]))
    assert tuple(f.name for f in fields) == DECODED_COLUMNS
    return pa.schema(fields)
