# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""Writing batches: ``build_batch`` (magic 2) and ``build_legacy`` (magic 0/1), laid out
as Kafka's own writers lay them out."""

from __future__ import annotations

import struct
import zlib

from ._codecs import _compress
from ._format import (
    _CONTROL_BIT,
    _CRC_FROM,
    _DELETE_HORIZON_BIT,
    _HEADER,
    _HEADER_SIZE,
    _INT16_MAX,
    _INT16_MIN,
    _INT32_MAX,
    _INT32_MIN,
    _INT64_MAX,
    _INT64_MIN,
    _LOG_OVERHEAD,
    _OFFSET_AND_LENGTH,
    _TIMESTAMP_TYPE_BIT,
    _TRANSACTIONAL_BIT,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    Compression,
    Record,
    TimestampType,
    _put_headers,
    _put_uvarint,
    crc32c,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable


def _check_range(name: str, value: int, low: int, high: int) -> None:
    if not low <= value <= high:
        raise ValueError(f"{name} {value} is out of range [{low}, {high}]")


def build_batch(
    records: Iterable[Record],
    *,
    compression: Compression | int = Compression.NONE,
    base_offset: int = 0,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = -1,
    base_sequence: int = NO_SEQUENCE,
    is_transactional: bool = False,
    is_control: bool = False,
    timestamp_type: TimestampType | int = TimestampType.CREATE_TIME,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
    base_timestamp: int | None = None,
    max_timestamp: int | None = None,
    last_offset_delta: int | None = None,
    has_delete_horizon: bool = False,
    compression_level: int | None = None,
) -> bytes:
    """The bytes of one magic-2 batch holding ``records``, laid out as Kafka's writer does.

    Each record's offset delta is ``record.offset - base_offset`` and its timestamp delta
    ``record.timestamp - base_timestamp``. By default ``base_timestamp`` is the first
    record's timestamp, ``max_timestamp`` the largest (Kafka's writer; give it for
    LogAppendTime), ``last_offset_delta`` the last record's (give it for a batch whose last
    records compaction removed); an empty batch has base and max timestamp -1 by default.
    The partition leader epoch is -1, as producers send it. The records section is
    compressed with ``compression`` whatever the gain (as Kafka's writer does).

    Rebuilding an uncompressed batch from its own records and header fields gives back the
    same bytes (for a LogAppendTime batch, only if the create-time deltas were all zero:
    its records read back with the max timestamp).
    """
    codec = Compression(compression)
    kind = TimestampType(timestamp_type)
    if kind is TimestampType.NO_TIMESTAMP_TYPE:
        raise ValueError("magic 2 batches need a timestamp type")
    _check_range("base_offset", base_offset, _INT64_MIN, _INT64_MAX)
    _check_range("producer_id", producer_id, _INT64_MIN, _INT64_MAX)
    _check_range("producer_epoch", producer_epoch, _INT16_MIN, _INT16_MAX)
    _check_range("base_sequence", base_sequence, _INT32_MIN, _INT32_MAX)
    _check_range("partition_leader_epoch", partition_leader_epoch, _INT32_MIN, _INT32_MAX)

    body = bytearray()
    count = 0
    first_timestamp = NO_TIMESTAMP if base_timestamp is None else base_timestamp
    largest = NO_TIMESTAMP
    delta = 0
    scratch = bytearray()
    for record in records:
        timestamp = record.timestamp
        if count == 0 and base_timestamp is None:
            first_timestamp = timestamp
        count += 1
        delta = record.offset - base_offset
        td = timestamp - first_timestamp
        if not _INT32_MIN <= delta <= _INT32_MAX or not _INT64_MIN <= td <= _INT64_MAX:
            _check_range("offset delta", delta, _INT32_MIN, _INT32_MAX)
            _check_range("timestamp delta", td, _INT64_MIN, _INT64_MAX)
        if timestamp > largest:
            largest = timestamp
        # the record body goes to ``scratch`` first: its length comes before it
        rec = scratch
        del rec[:]
        rec.append(0)  # attributes
        z = (td << 1) ^ (td >> 63)
        if z < 0x80:
            rec.append(z)
        else:
            _put_uvarint(rec, z)
        z = (delta << 1) ^ (delta >> 31)
        if z < 0x80:
            rec.append(z)
        else:
            _put_uvarint(rec, z)
        key = record.key
        if key is None:
            rec.append(1)
        else:
            z = len(key) << 1
            if z < 0x80:
                rec.append(z)
            else:
                _put_uvarint(rec, z)
            rec += key
        value = record.value
        if value is None:
            rec.append(1)
        else:
            z = len(value) << 1
            if z < 0x80:
                rec.append(z)
            else:
                _put_uvarint(rec, z)
            rec += value
        if record.headers:
            _put_headers(rec, record.headers)
        else:
            rec.append(0)
        z = len(rec) << 1
        if z < 0x80:
            body.append(z)
        else:
            _put_uvarint(body, z)
        body += rec

    if last_offset_delta is None:
        last_offset_delta = delta if count else 0
    _check_range("last_offset_delta", last_offset_delta, _INT32_MIN, _INT32_MAX)
    if max_timestamp is None:
        max_timestamp = largest if count else NO_TIMESTAMP
    _check_range("base_timestamp", first_timestamp, _INT64_MIN, _INT64_MAX)
    _check_range("max_timestamp", max_timestamp, _INT64_MIN, _INT64_MAX)

    attributes = codec.value
    if kind is TimestampType.LOG_APPEND_TIME:
        attributes |= _TIMESTAMP_TYPE_BIT
    if is_transactional:
        attributes |= _TRANSACTIONAL_BIT
    if is_control:
        attributes |= _CONTROL_BIT
    if has_delete_horizon:
        attributes |= _DELETE_HORIZON_BIT
    payload: bytes | bytearray = body
    if codec is not Compression.NONE:
        payload = _compress(codec, bytes(body), compression_level, 2)
    out = bytearray(_HEADER_SIZE)
    out += payload
    _HEADER.pack_into(
        out,
        0,
        base_offset,
        len(out) - _LOG_OVERHEAD,
        partition_leader_epoch,
        2,
        0,
        attributes,
        last_offset_delta,
        first_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        count,
    )
    struct.pack_into(">I", out, 17, crc32c(memoryview(out)[_CRC_FROM:], 0))
    return bytes(out)


def build_legacy(
    records: Iterable[Record],
    *,
    magic: int = 1,
    compression: Compression | int = Compression.NONE,
    timestamp_type: TimestampType | int = TimestampType.CREATE_TIME,
    wrapper_timestamp: int | None = None,
    compression_level: int | None = None,
) -> bytes:
    """A magic 0 or 1 message set holding ``records`` (for tests, and for brokers older
    than 0.11): one message per record, each at its own ``offset``; or, compressed, one
    wrapper message whose value is that set compressed.

    In a compressed set the inner offsets are relative for magic 1 (the wrapper carries the
    last record's offset) and as given for magic 0, as Kafka writes them; the wrapper's
    timestamp is the largest record timestamp unless ``wrapper_timestamp`` says otherwise
    (its LogAppendTime). Magic 0 writes no timestamps and lz4 with Kafka's old header
    checksum. Records may not have headers; zstd needs magic 2.
    """
    if magic not in (0, 1):
        raise ValueError(f"legacy message sets are magic 0 or 1, not {magic}")
    codec = Compression(compression)
    if codec is Compression.ZSTD:
        raise ValueError("zstd compression needs magic 2")
    kind = TimestampType(timestamp_type)
    if magic == 1 and kind is TimestampType.NO_TIMESTAMP_TYPE:
        raise ValueError("magic 1 messages need a timestamp type")
    items = list(records)
    if codec is Compression.NONE:
        attributes = _TIMESTAMP_TYPE_BIT if magic == 1 and kind == 1 else 0
        out = bytearray()
        for record in items:
            _put_message(out, magic, record.offset, attributes, record.timestamp, record, None)
        return bytes(out)
    if not items:
        raise ValueError("a compressed message set needs at least one record")
    first = items[0].offset
    inner = bytearray()
    for record in items:
        offset = record.offset - first if magic == 1 else record.offset
        _put_message(inner, magic, offset, 0, record.timestamp, record, None)
    value = _compress(codec, bytes(inner), compression_level, magic)
    timestamp = max(r.timestamp for r in items) if wrapper_timestamp is None else wrapper_timestamp
    attributes = codec.value
    if magic == 1 and kind is TimestampType.LOG_APPEND_TIME:
        attributes |= _TIMESTAMP_TYPE_BIT
    out = bytearray()
    _put_message(out, magic, items[-1].offset, attributes, timestamp, None, value)
    return bytes(out)


def _put_message(
    out: bytearray,
    magic: int,
    offset: int,
    attributes: int,
    timestamp: int,
    record: Record | None,
    value: bytes | None,
) -> None:
    """Append one magic 0/1 message: the record's key and value, or (wrapper) a null key
    and ``value``."""
    key = None
    if record is not None:
        if record.headers:
            raise ValueError("magic 0 and 1 messages cannot have headers")
        key, value = record.key, record.value
    _check_range("offset", offset, _INT64_MIN, _INT64_MAX)
    body = bytearray((magic, attributes))
    if magic == 1:
        _check_range("timestamp", timestamp, _INT64_MIN, _INT64_MAX)
        body += timestamp.to_bytes(8, "big", signed=True)
    for part in (key, value):
        if part is None:
            body += b"\xff\xff\xff\xff"
        else:
            body += len(part).to_bytes(4, "big")
            body += part
    out += _OFFSET_AND_LENGTH.pack(offset, len(body) + 4)
    out += zlib.crc32(body).to_bytes(4, "big")
    out += body
