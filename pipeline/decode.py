"""Decoding one captured frame with a generated package, in plain Python (no Spark).

``Decoder(package).decode(row)`` decodes a row of the ``kafka-capture`` data source
(``pipeline.frames.COLUMNS``) with the generated package ``package`` (importable by name:
one generated from the specs it is given), re-encodes it and compares
the bytes. The Spark job runs exactly this per frame (``decode_batches``), so a plain loop
over the same rows gives the same values (tests and ``bench/pipeline_bench.py`` use it).
"""

from __future__ import annotations

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
)
#: The decoded rows' columns: the data source's (``error`` left out) plus ``OUT_COLUMNS``.
DECODED_COLUMNS = tuple(c for c in COLUMNS if c != "error") + OUT_COLUMNS
DECODED_DDL = (
    "conn string, ts double, src string, dst string, direction string, api_key int, "
    "api_version int, correlation_id int, client_id string, frame binary, api_name string, "
    "message string, status string, reason string, reencoded_equal boolean, first_diff int, "
    "body string, software_name string, software_version string"
)


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


class Decoder:
    """Decodes frames with one generated package."""

    def __init__(self, package: str = "kafka_messages") -> None:
        self.package = package
        self.framing = importlib.import_module(f"{package}.framing")
        self.registry = importlib.import_module(f"{package}.registry")
        self.errors = importlib.import_module(f"{package}.errors")

    def api_name(self, api_key: int | None) -> str | None:
        if api_key is None:
            return None
        return str(self.registry.api_name(api_key))

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
            return Decoded(name, None, "error", error, None, None, None, None, None)
        try:
            if direction == "request":
                header, body = self.framing.decode_request(frame)
                again = self.framing.encode_request(header, body)
            elif api_key is None or api_version is None:
                return Decoded(
                    name,
                    None,
                    "error",
                    "a response whose request is not in the capture (no api key "
                    "and version to decode it with)",
                    None,
                    None,
                    None,
                    None,
                    None,
                )
            else:
                header, body = self.framing.decode_response(frame, api_key, api_version)
                again = self.framing.encode_response(header, body, api_key, api_version)
        except self.errors.DecodeError as exc:
            return Decoded(name, None, "error", f"DecodeError: {exc}", None, None, None, None, None)
        except Exception as exc:  # a codec bug must not lose the frame either
            return Decoded(
                name,
                None,
                "error",
                f"{type(exc).__name__} while decoding: {exc}",
                None,
                None,
                None,
                None,
                None,
            )
        try:
            text = json.dumps(body.to_dict(), separators=(",", ":"))
        except Exception as exc:
            return Decoded(
                name,
                type(body).__name__,
                "error",
                f"{type(exc).__name__} in to_dict: {exc}",
                None,
                None,
                None,
                None,
                None,
            )
        equal = again == frame
        diff = None if equal else first_difference(bytes(again), frame)
        software = version = None
        if direction == "request" and api_key == 18:
            software = getattr(body, "client_software_name", None) or None
            version = getattr(body, "client_software_version", None) or None
        return Decoded(
            name, type(body).__name__, "decoded", None, equal, diff, text, software, version
        )


def first_difference(a: bytes, b: bytes) -> int:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def decode_rows(
    rows: Iterable[tuple[Any, ...]], package: str = "kafka_messages"
) -> Iterator[tuple[Any, ...]]:
    """Decoded rows (``DECODED_COLUMNS``) of data-source rows (``frames.COLUMNS``): the plain
    loop. ``frame`` is kept only where it is needed: errors and re-encoding mismatches."""
    decoder = Decoder(package)
    for row in rows:
        out = decoder.decode(row[4], row[5], row[6], row[9], row[10])
        keep = out.status == "error" or out.reencoded_equal is False
        yield (*row[:9], row[9] if keep else None, *out)


def decode_batches(batches: Iterable[Any], package: str) -> Iterator[Any]:
    """``mapInArrow`` body: Arrow batches of data-source rows -> batches of decoded rows."""
    import pyarrow as pa

    schema = arrow_schema()
    decoder = Decoder(package)
    for batch in batches:
        columns = [batch.column(name).to_pylist() for name in COLUMNS]
        out: list[list[Any]] = [[] for _ in DECODED_COLUMNS]
        for row in zip(*columns):
            decoded = decoder.decode(row[4], row[5], row[6], row[9], row[10])
            keep = decoded.status == "error" or decoded.reencoded_equal is False
            values = (*row[:9], row[9] if keep else None, *decoded)
            for column, value in zip(out, values):
                column.append(value)
        yield pa.RecordBatch.from_arrays(
            [pa.array(column, type=field.type) for column, field in zip(out, schema)],
            schema=schema,
        )


def arrow_schema() -> Any:
    import pyarrow as pa

    types = {
        "string": pa.string(),
        "double": pa.float64(),
        "int": pa.int32(),
        "binary": pa.binary(),
        "boolean": pa.bool_(),
    }
    fields = []
    for part in DECODED_DDL.split(", "):
        name, kind = part.split(" ")
        fields.append(pa.field(name, types[kind]))
    return pa.schema(fields)
