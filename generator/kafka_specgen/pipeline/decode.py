"""Decoding one captured frame with a generated package, in plain Python (no Spark).

``Decoder(package).decode_row(row)`` decodes a row of the ``kafka-capture`` data source
(``capture.frames.Row``) with the generated package ``package`` (importable by name:
one generated from the specs it is given), re-encodes it and compares
the bytes. The Spark job runs exactly this per frame (``decode_frames``), so a plain loop
over the same rows gives the same values (tests and ``bench/pipeline_bench.py`` use it).

With ``records=True`` the record data of Produce requests and Fetch responses is read
too (the package's ``records`` module, ``pipeline.recordbatches``): one ``BatchFacts`` per
record batch or legacy message, or one with ``error`` set where the data cannot be read.
An ApiVersions answer also gives the ranges the broker advertised (``advertised``): what
readiness infers a client's own newest versions from.
"""

from __future__ import annotations

import importlib
import json
from typing import Annotated, Any, Iterable, Iterator, NamedTuple, Optional

from ..api_keys import ApiKey
from ..capture.columns import (
    ArrayOf,
    rows_of,
    OptBool,
    OptBytes,
    OptDouble,
    OptInt,
    OptStr,
    OptStrs,
    Str,
    ddl,
    arrow_schema,
)
from ..capture.frames import REQUEST_LOG, Row
from .recordbatches import BatchFacts, batch_error, uuid_text, read_batches


class ApiRange(NamedTuple):
    """One API's versions in a broker's ApiVersions answer."""

    api_key: OptInt
    min_version: OptInt
    max_version: OptInt


class Decoded(NamedTuple):
    """What decoding adds to a frame."""

    api_name: OptStr
    message: OptStr  # the body's class name, e.g. "MetadataRequest"
    status: Str  # "decoded" or "error"
    reason: OptStr  # why it is an error
    reencoded_equal: OptBool  # decode -> encode gave the frame's bytes
    first_diff: OptInt  # first offset where the re-encoded bytes differ
    body: OptStr  # JSON of body.to_dict()
    software_name: OptStr  # ApiVersionsRequest v3+: the client software
    software_version: OptStr
    advertised: Annotated[Optional[list[ApiRange]], ArrayOf(ApiRange)] = None
    batches: Annotated[Optional[list[BatchFacts]], ArrayOf(BatchFacts)] = None
    named_brokers: OptStrs = None  # a Metadata answer's brokers, "host:port"


class DecodedRow(NamedTuple):
    """A decoded frame: where it was seen (``frames.Row`` but ``error``) and what it held.
    ``frame`` is kept only where it is needed: errors and re-encoding mismatches."""

    conn: Str
    ts: OptDouble
    src: OptStr
    dst: OptStr
    direction: OptStr
    api_key: OptInt
    api_version: OptInt
    correlation_id: OptInt
    client_id: OptStr
    frame: OptBytes
    source: Str  # frames.CAPTURE, PCAP or REQUEST_LOG
    api_name: OptStr
    message: OptStr
    status: Str
    reason: OptStr
    reencoded_equal: OptBool
    first_diff: OptInt
    body: OptStr
    software_name: OptStr
    software_version: OptStr
    advertised: Annotated[Optional[list[ApiRange]], ArrayOf(ApiRange)]
    batches: Annotated[Optional[list[BatchFacts]], ArrayOf(BatchFacts)]
    named_brokers: OptStrs


#: A decoded row starts with its frame's row: every column before ``frame``, then ``frame``
#: (kept only where needed) and ``source``; ``error`` becomes its ``reason``.
_SEEN = Row._fields.index("frame")
assert DecodedRow._fields[: _SEEN + 2] == (*Row._fields[:_SEEN], "frame", "source")

#: ``DecodedRow.status`` of a request log entry: no bytes, nothing to decode.
LOGGED = "logged"

DECODED_COLUMNS = DecodedRow._fields
DECODED_DDL = ddl(DecodedRow)


def _error(name: str | None, reason: str, message: str | None = None) -> Decoded:
    return Decoded(name, message, "error", reason, None, None, None, None, None)


def logged(name: str | None, facts_json: bytes) -> Decoded:
    """What a request log entry says (``requestlog.entry_facts``): the client's software,
    an ApiVersions answer's ranges, a Metadata answer's brokers. Nothing is decoded."""
    try:
        facts = json.loads(facts_json)
        software = facts.get("software") or (None, None)
        advertised = [ApiRange(*map(int, r)) for r in facts.get("advertised") or ()] or None
        brokers = [str(b) for b in facts.get("brokers") or ()] or None
        return Decoded(
            name,
            None,
            LOGGED,
            None,
            None,
            None,
            None,
            software_name=software[0],
            software_version=software[1],
            advertised=advertised,
            named_brokers=brokers,
        )
    except (ValueError, TypeError, AttributeError, IndexError) as exc:
        return _error(name, f"request log facts cannot be read ({type(exc).__name__}: {exc})")


#: Where record data sits: (api key, direction) -> (topics attribute, topic name
#: attributes, topic id attribute, partitions attribute, partition index attribute).
#: These are Kafka's field names (TopicData/PartitionData/Index/Records in Produce,
#: Responses/Partitions/PartitionIndex/Records in Fetch), stable across versions.
RECORD_PATHS: dict[tuple[int, str], tuple[str, tuple[str, ...], str, str, str]] = {
    (ApiKey.PRODUCE, "request"): ("topic_data", ("name",), "topic_id", "partition_data", "index"),
    (ApiKey.FETCH, "response"): (
        "responses",
        ("topic",),
        "topic_id",
        "partitions",
        "partition_index",
    ),
}


class Decoder:
    """Decodes frames with one generated package; ``records``: read record batches too."""

    def __init__(self, package: str = "kafka_messages", *, records: bool = True) -> None:
        self.package = package
        self.framing = importlib.import_module(f"{package}.framing")
        self.registry = importlib.import_module(f"{package}.registry")
        self.errors = importlib.import_module(f"{package}.errors")
        self.read_records = records
        self.names: dict[int, str | None] = {}  # api key -> name, looked up once
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
        if api_key not in self.names:
            try:
                self.names[api_key] = str(self.registry.api_name(api_key))
            except Exception:  # an api key the package does not know
                self.names[api_key] = None
        return self.names[api_key]

    def decode_row(self, row: Row) -> Decoded:
        if row.source == REQUEST_LOG and row.error is None:
            return logged(self.api_name(row.api_key), row.frame)
        return self.decode(row.direction, row.api_key, row.api_version, row.frame, row.error)

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
            text = _JSON.encode(body.to_dict())
        except Exception as exc:
            return _error(name, f"{type(exc).__name__} in to_dict: {exc}", type(body).__name__)
        equal = again == frame
        diff = None if equal else first_difference(bytes(again), frame)
        software = version = None
        if direction == "request" and api_key == ApiKey.API_VERSIONS:
            software = getattr(body, "client_software_name", None) or None
            version = getattr(body, "client_software_version", None) or None
        advertised = None
        if (
            direction == "response"
            and api_key == ApiKey.API_VERSIONS
            and not getattr(body, "error_code", 1)
        ):
            advertised = [
                ApiRange(k.api_key, k.min_version, k.max_version)
                for k in getattr(body, "api_keys", ())
            ]
        brokers = None
        if direction == "response" and api_key == ApiKey.METADATA:
            brokers = [f"{b.host}:{b.port}" for b in getattr(body, "brokers", None) or ()]
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
            advertised=advertised,
            batches=batches,
            named_brokers=brokers,
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
            topic_id = uuid_text(raw_id) if raw_id is not None and raw_id.int else None
            for part in getattr(topic, partitions_attr, None) or ():
                data = getattr(part, "records", None)
                index = getattr(part, index_attr, None)
                if data and self.no_records is not None:
                    out.append(batch_error(name, topic_id, index, 0, self.no_records, data))
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


#: ``json.dumps(..., separators=(",", ":"))`` without making an encoder per frame.
_JSON = json.JSONEncoder(separators=(",", ":"))


def first_difference(a: bytes, b: bytes) -> int:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def _output(row: Row, decoded: Decoded) -> DecodedRow:
    keep = decoded.status == "error" or decoded.reencoded_equal is False
    return DecodedRow._make((*row[:_SEEN], row.frame if keep else None, row.source, *decoded))


def decode_rows(
    rows: Iterable[Row], package: str = "kafka_messages", *, records: bool = True
) -> Iterator[DecodedRow]:
    """Decoded rows of data-source rows: the plain loop."""
    decoder = Decoder(package, records=records)
    for row in rows:
        yield _output(row, decoder.decode_row(row))


def decode_frames(
    rows: Iterable[Row], package: str, records: bool = True, batch_rows: int = 8192
) -> Iterator[Any]:
    """Data-source rows -> Arrow batches of decoded rows (``DecodedRow``), ``batch_rows``
    at a time: what the Spark job runs in its Python workers."""
    schema = arrow_schema(DecodedRow)
    decoder = Decoder(package, records=records)
    seen: list[Row] = []
    done: list[Decoded] = []
    for row in rows:
        seen.append(row)
        done.append(decoder.decode_row(row))
        if len(seen) == batch_rows:
            yield _batch(seen, done, schema)
            seen, done = [], []
    if seen:
        yield _batch(seen, done, schema)


def _batch(seen: list[Row], done: list[Decoded], schema: Any) -> Any:
    """The Arrow batch of the ``_output`` of each row and what decoding it gave, made
    column by column (no row tuples in between)."""
    import pyarrow as pa  # type: ignore[import-untyped]  # no stubs or py.typed

    where, what = list(zip(*seen)), list(zip(*done))
    kept = [
        row.frame if d.status == "error" or d.reencoded_equal is False else None
        for row, d in zip(seen, done)
    ]
    columns = [*where[:_SEEN], kept, where[Row._fields.index("source")], *what]
    return pa.RecordBatch.from_arrays(
        [pa.array(column, type=field.type) for column, field in zip(columns, schema)],
        schema=schema,
    )


def decode_batches(batches: Iterable[Any], package: str, records: bool = True) -> Iterator[Any]:
    """``mapInArrow`` body: Arrow batches of data-source rows -> batches of decoded rows."""
    return decode_frames(rows_of(batches, Row), package, records)


def count_and_decode(
    rows: Iterable[Row], package: str, counter: Any, batch_counter: Any, records: bool
) -> Iterator[Any]:
    """What the job runs on the frames (a ``datasource.RowFunction``): count the frames
    read (``counter``) and the record batches found (``batch_counter``, Spark
    accumulators), decode. Here, not in the job's module, so that executors import only
    what decoding needs."""
    read = 0

    def counted() -> Iterator[Row]:
        nonlocal read
        for row in rows:
            read += 1
            yield row

    for decoded in decode_frames(counted(), package, records):
        counter.add(read)
        read = 0
        if records:
            lengths = decoded.column("batches").value_lengths()
            batch_counter.add(sum(n for n in lengths.to_pylist() if n is not None))
        yield decoded
    counter.add(read)
