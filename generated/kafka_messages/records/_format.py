# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""What the parts of ``records`` share: the public enums, ``Record`` and the error, the
wire layout's sizes, structs and attribute bits, and the magic-2 varints and headers (read
and written)."""

from __future__ import annotations

import struct
from enum import IntEnum

from .. import _crc32c
from ..errors import DecodeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Union

    Buffer = Union[bytes, bytearray, memoryview]


#: Decompressing one batch may produce at most this many bytes unless told otherwise.
DEFAULT_MAX_DECOMPRESSED_SIZE = 128 * 1024 * 1024

NO_PRODUCER_ID = -1
NO_SEQUENCE = -1
NO_TIMESTAMP = -1
NO_PARTITION_LEADER_EPOCH = -1


class Compression(IntEnum):
    """The codec in a batch's attributes (bits 0-2)."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


class TimestampType(IntEnum):
    """Whose clock a batch's timestamps are: the producer's or the broker's (bit 3)."""

    NO_TIMESTAMP_TYPE = -1  # magic 0 has no timestamps
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


class CorruptRecordError(DecodeError):
    """Bytes that are not valid record batches (or need a codec that is not installed).

    ``offset`` is a byte offset in the data given to ``iter_batches`` (or to the batch);
    inside compressed data it is where the compressed records start, and the reason says
    where in the decompressed bytes.
    """

    def __init__(self, reason: str, offset: int, path: str = "records") -> None:
        super().__init__(reason, offset, path)


class Record:
    """One record. ``offset`` is absolute where the batch assigns it (a Fetch response);
    ``timestamp`` is in milliseconds (the batch's max timestamp under LogAppendTime, -1 in
    magic 0); ``headers`` are (key, value) pairs, values possibly None (none in magic 0/1)."""

    # A plain class, not a dataclass: mypyc compiles its __init__ (it leaves the methods a
    # dataclass generates interpreted), a record is built per record read, and this module
    # then needs no dataclasses import.
    __slots__ = ("offset", "timestamp", "key", "value", "headers")

    def __init__(
        self,
        offset: int,
        timestamp: int,
        key: bytes | None = None,
        value: bytes | None = None,
        headers: tuple[tuple[str, bytes | None], ...] = (),
    ) -> None:
        self.offset = offset
        self.timestamp = timestamp
        self.key = key
        self.value = value
        self.headers = headers

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        return (
            self.offset == other.offset
            and self.timestamp == other.timestamp
            and self.key == other.key
            and self.value == other.value
            and self.headers == other.headers
        )

    def __repr__(self) -> str:
        return (
            f"Record(offset={self.offset!r}, timestamp={self.timestamp!r}, key={self.key!r}, "
            f"value={self.value!r}, headers={self.headers!r})"
        )


# --- the wire layout -------------------------------------------------------------------------

# baseOffset, batchLength, partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta,
# baseTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, records count
_HEADER = struct.Struct(">qiibIhiqqqhii")
_HEADER_SIZE = 61
_CRC_FROM = 21  # the CRC covers the attributes to the end of the batch
_LOG_OVERHEAD = 12  # offset and length, before every batch or message
# the smallest batch length: the header after the length field
_MIN_BATCH_LENGTH = _HEADER_SIZE - _LOG_OVERHEAD
# the smallest magic 0 message: crc, magic, attributes, key length, value length
_MIN_MESSAGE_SIZE = 14
_OFFSET_AND_LENGTH = struct.Struct(">qi")
_LEGACY_V0 = struct.Struct(">qiIbb")
_LEGACY_V1 = struct.Struct(">qiIbbq")
_INT32 = struct.Struct(">i")

_CODEC_MASK = 0x07
_TIMESTAMP_TYPE_BIT = 0x08
_TRANSACTIONAL_BIT = 0x10
_CONTROL_BIT = 0x20
_DELETE_HORIZON_BIT = 0x40

_INT16_MIN, _INT16_MAX = -(1 << 15), (1 << 15) - 1
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1

crc32c = _crc32c.crc32c


# --- varints and headers ---------------------------------------------------------------------


class _Malformed(Exception):
    """Raised inside the record readers; the caller turns it into a CorruptRecordError."""

    def __init__(self, reason: str, pos: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.pos = pos


def _varint(buf: bytes, pos: int, limit: int) -> tuple[int, int]:
    """The zigzag varint at ``pos`` of at most ``limit`` bytes (5: int32, 10: int64):
    (value, position after it). IndexError if the buffer ends inside it."""
    start = pos
    value = 0
    shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            break
        shift += 7
        if pos - start == limit:
            raise _Malformed(f"varint longer than {limit} bytes", start)
    bits = 32 if limit == 5 else 64
    if value >> bits:
        # Kafka's reader would drop the extra bits; they can only come from bad data
        raise _Malformed(f"varint does not fit in {bits} bits", start)
    return (value >> 1) ^ -(value & 1), pos


def _read_headers(
    buf: bytes, pos: int, end: int, count: int
) -> tuple[tuple[tuple[str, bytes | None], ...], int]:
    if count < 0:
        raise _Malformed(f"negative header count {count}", pos)
    if count > end - pos:
        raise _Malformed(f"{count} headers cannot fit in {end - pos} bytes", pos)
    headers = []
    for _ in range(count):
        size, pos = _varint(buf, pos, 5)
        if size < 0:
            raise _Malformed(f"header key length {size}", pos)
        if pos + size > end:
            raise _Malformed("header key runs past the record", pos)
        try:
            key = buf[pos : pos + size].decode("utf-8")
        except UnicodeDecodeError:
            raise _Malformed("header key is not UTF-8", pos) from None
        pos += size
        size, pos = _varint(buf, pos, 5)
        value: bytes | None = None
        if size >= 0:
            if size > end - pos:
                raise _Malformed("header value runs past the record", pos)
            value = buf[pos : pos + size]
            pos += size
        elif size != -1:
            raise _Malformed(f"header value length {size}", pos)
        headers.append((key, value))
    return tuple(headers), pos


def _corrupt(reason: str, pos: int, origin: int, path: str) -> CorruptRecordError:
    """The error for a failure at ``pos``: in the data itself (``origin`` 0) or in the
    decompressed bytes of records that start at ``origin``."""
    if origin:
        return CorruptRecordError(
            f"{reason} (byte {pos} of the decompressed records)", origin, path
        )
    return CorruptRecordError(reason, pos, path)


def _put_uvarint(out: bytearray, value: int) -> None:
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)


def _put_headers(out: bytearray, headers: Iterable[tuple[str, bytes | None]]) -> None:
    pairs = tuple(headers)
    _put_uvarint(out, len(pairs) << 1)
    for key, value in pairs:
        if type(key) is not str:
            raise TypeError(f"header key must be str, not {type(key).__name__}")
        raw = key.encode("utf-8")
        _put_uvarint(out, len(raw) << 1)
        out += raw
        if value is None:
            out.append(1)
        else:
            _put_uvarint(out, len(value) << 1)
            out += value
