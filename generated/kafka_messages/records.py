# kafka-specgen runtime, copied verbatim into every generated package — do not edit
"""Record batches: the bytes of a Produce request's or a Fetch response's ``records`` field.

Reading::

    for batch in records.iter_batches(partition.records):
        batch.validate()                      # CRC and size; raises CorruptRecordError
        for record in batch.records():        # decompresses if needed
            record.offset, record.timestamp, record.key, record.value, record.headers

``iter_batches`` yields a ``RecordBatch`` per magic-2 batch and a ``LegacyBatch`` per
top-level magic 0/1 message (a compressed wrapper expands in ``records()``). A batch cut
short at the end of the data (which a Fetch response may legally end with) ends the
iteration quietly; the iterator's ``incomplete_size`` then says how big it was going to be.

Writing::

    data = records.build_batch([records.Record(0, now_ms, b"key", b"value")],
                               compression=records.Compression.LZ4)

lays a magic-2 batch out as Kafka's own writer does; ``build_legacy`` writes magic 0/1
message sets. Control batches' records (transaction markers) decode with
``decode_control``.

Every malformed input raises ``CorruptRecordError`` (a ``DecodeError``, with the byte offset
in the data given to ``iter_batches``); nothing else escapes, whatever the bytes.
Decompression is capped (``max_decompressed_size``, 128 MiB by default) against
decompression bombs. gzip comes from the standard library; snappy, lz4 and zstd from an
optional package (``cramjam`` covers them all), found on first use; a batch that needs a
missing one raises a ``CorruptRecordError`` naming the package to install.
``register_codec`` plugs in your own. CRC-32C uses the ``crc32c`` or ``google-crc32c``
package when importable, else a pure-Python implementation.
"""

from __future__ import annotations

import struct
import zlib
from enum import IntEnum

from . import _compression, _crc32c
from .errors import DecodeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Union

    Buffer = Union[bytes, bytearray, memoryview]

__all__ = [
    "DEFAULT_MAX_DECOMPRESSED_SIZE",
    "BatchIterator",
    "Compression",
    "ControlRecord",
    "ControlType",
    "CorruptRecordError",
    "LegacyBatch",
    "Record",
    "RecordBatch",
    "TimestampType",
    "build_batch",
    "build_legacy",
    "codec_packages",
    "crc32c",
    "decode_control",
    "encode_control",
    "iter_batches",
    "register_codec",
]

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


class ControlType(IntEnum):
    """The type in a control record's key. Only ABORT and COMMIT values are decoded here."""

    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6


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


class ControlRecord:
    """A control record's key (and, for ABORT and COMMIT markers, value) decoded.

    ``type`` is a ``ControlType`` when Kafka defines it, else the raw number;
    ``coordinator_epoch`` is set for ABORT and COMMIT only; ``value`` is the record's value
    as it was, whatever the type (the raw bytes for types not decoded here)."""

    __slots__ = ("type", "version", "coordinator_epoch", "value")

    # a union, not int: mypyc would store a plain int and lose the ControlType
    type: ControlType | int

    def __init__(
        self,
        type: ControlType | int,
        version: int = 0,
        coordinator_epoch: int | None = None,
        value: bytes | None = None,
    ) -> None:
        self.type = type
        self.version = version
        self.coordinator_epoch = coordinator_epoch
        self.value = value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ControlRecord):
            return NotImplemented
        return (
            self.type == other.type
            and self.version == other.version
            and self.coordinator_epoch == other.coordinator_epoch
            and self.value == other.value
        )

    def __repr__(self) -> str:
        kind = self.type.name if isinstance(self.type, ControlType) else self.type
        return (
            f"ControlRecord(type={kind}, version={self.version}, "
            f"coordinator_epoch={self.coordinator_epoch}, value={self.value!r})"
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
_CONTROL_KEY = struct.Struct(">hh")
_END_TXN_VALUE = struct.Struct(">hi")

_CODEC_MASK = 0x07
_TIMESTAMP_TYPE_BIT = 0x08
_TRANSACTIONAL_BIT = 0x10
_CONTROL_BIT = 0x20
_DELETE_HORIZON_BIT = 0x40

_INT16_MIN, _INT16_MAX = -(1 << 15), (1 << 15) - 1
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1

crc32c = _crc32c.crc32c


# --- codecs ----------------------------------------------------------------------------------

# codec -> (compress(data, level), decompress(data, limit)) registered by the user
_registered: dict[
    int, tuple[Callable[[bytes, int | None], bytes] | None, Callable[[bytes, int], bytes] | None]
] = {}


def register_codec(
    compression: Compression | int,
    compress: Callable[[bytes, int | None], bytes] | None = None,
    decompress: Callable[[bytes, int], bytes] | None = None,
) -> None:
    """Use your own functions for a codec, in place of the built-in ones.

    ``compress(data, level)`` returns the compressed records (``level`` is None unless the
    caller of ``build_batch`` gave one); ``decompress(data, max_size)`` returns at most
    ``max_size`` bytes (longer results are refused). Either may be None to keep the
    built-in direction; passing both as None unregisters the codec. Whatever exception
    ``decompress`` raises becomes a ``CorruptRecordError``.
    """
    codec = Compression(compression)
    if codec is Compression.NONE:
        raise ValueError("Compression.NONE has no codec to register")
    if compress is None and decompress is None:
        _registered.pop(codec, None)
    else:
        _registered[codec] = (compress, decompress)


def codec_packages() -> dict[Compression, str | None]:
    """Which package serves each codec here (``"registered"`` for your own; None: none
    installed). Looks for the optional packages if that was not done yet."""
    found: dict[Compression, str | None] = {}
    for codec in (Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD):
        if codec in _registered:
            found[codec] = "registered"
        else:
            backend = _compression.backend(codec)
            found[codec] = None if backend is None else backend.name
    return found


def _compress(codec: int, data: bytes, level: int | None, magic: int) -> bytes:
    own = _registered.get(codec)
    if own is not None and own[0] is not None:
        return bytes(own[0](data, level))
    return _compression.compress(codec, data, level, magic)


def _decompress(codec: int, data: bytes, limit: int, magic: int, offset: int, path: str) -> bytes:
    """Decompressed ``data`` (at ``offset``), or a CorruptRecordError: nothing else."""
    own = _registered.get(codec)
    try:
        if own is not None and own[1] is not None:
            try:
                out = bytes(own[1](data, limit))
            except Exception as exc:  # the user's code: whatever it raises means bad data
                raise _compression.CodecError(f"{Compression(codec).name.lower()}: {exc!r}")
            if len(out) > limit:
                raise _compression.CodecError(
                    f"decompressed to {len(out)} bytes, over the limit of {limit}"
                )
            return out
        return _compression.decompress(codec, data, limit, magic)
    except _compression.CodecError as exc:  # MissingCodecError too
        raise CorruptRecordError(str(exc), offset, path) from None


# --- reading ---------------------------------------------------------------------------------


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


def _read_records(
    buf: bytes,
    pos: int,
    end: int,
    count: int,
    base_offset: int,
    base_timestamp: int,
    append_time: int | None,
    origin: int,
) -> Iterator[Record]:
    """The ``count`` records in ``buf[pos:end]``, which they must fill exactly.

    ``append_time`` (LogAppendTime) replaces every record's timestamp. ``origin`` is 0 when
    ``buf`` is the data itself, else where the compressed records start in it (errors then
    say where in the decompressed bytes). The varints are decoded inline for their one- and
    two-byte forms, by far the most common: a function call per field would cost more than
    all the rest.
    """
    start = pos
    try:
        for _ in range(count):
            start = pos
            # record length
            b = buf[pos]
            if b < 0x80:
                length = (b >> 1) ^ -(b & 1)
                pos += 1
            elif buf[pos + 1] < 0x80:
                v = (b & 0x7F) | buf[pos + 1] << 7
                length = (v >> 1) ^ -(v & 1)
                pos += 2
            else:
                length, pos = _varint(buf, pos, 5)
            body_end = pos + length
            # attributes, timestamp delta, offset delta, key, value, header count: 1+ byte each
            if length < 6:
                raise _Malformed(f"record length {length}", start)
            if body_end > end:
                raise _Malformed(f"record of {length} bytes runs past the end", start)
            pos += 1  # attributes: no record-level attribute is defined
            # timestamp delta (varlong)
            b = buf[pos]
            if b < 0x80:
                timestamp = (b >> 1) ^ -(b & 1)
                pos += 1
            elif buf[pos + 1] < 0x80:
                v = (b & 0x7F) | buf[pos + 1] << 7
                timestamp = (v >> 1) ^ -(v & 1)
                pos += 2
            else:
                timestamp, pos = _varint(buf, pos, 10)
            # offset delta
            b = buf[pos]
            if b < 0x80:
                offset = (b >> 1) ^ -(b & 1)
                pos += 1
            elif buf[pos + 1] < 0x80:
                v = (b & 0x7F) | buf[pos + 1] << 7
                offset = (v >> 1) ^ -(v & 1)
                pos += 2
            else:
                offset, pos = _varint(buf, pos, 5)
            # key
            b = buf[pos]
            if b < 0x80:
                size = (b >> 1) ^ -(b & 1)
                pos += 1
            elif buf[pos + 1] < 0x80:
                v = (b & 0x7F) | buf[pos + 1] << 7
                size = (v >> 1) ^ -(v & 1)
                pos += 2
            else:
                size, pos = _varint(buf, pos, 5)
            if size >= 0:
                if size > body_end - pos:
                    raise _Malformed(f"key of {size} bytes runs past the record", pos)
                key: bytes | None = buf[pos : pos + size]
                pos += size
            elif size == -1:
                key = None
            else:
                raise _Malformed(f"key length {size}", pos)
            # value
            b = buf[pos]
            if b < 0x80:
                size = (b >> 1) ^ -(b & 1)
                pos += 1
            elif buf[pos + 1] < 0x80:
                v = (b & 0x7F) | buf[pos + 1] << 7
                size = (v >> 1) ^ -(v & 1)
                pos += 2
            else:
                size, pos = _varint(buf, pos, 5)
            if size >= 0:
                if size > body_end - pos:
                    raise _Malformed(f"value of {size} bytes runs past the record", pos)
                value: bytes | None = buf[pos : pos + size]
                pos += size
            elif size == -1:
                value = None
            else:
                raise _Malformed(f"value length {size}", pos)
            # headers
            if buf[pos] == 0:
                headers: tuple[tuple[str, bytes | None], ...] = ()
                pos += 1
            else:
                size, pos = _varint(buf, pos, 5)
                headers, pos = _read_headers(buf, pos, body_end, size)
            if pos != body_end:
                raise _Malformed(
                    f"record fields take {pos - body_end + length} bytes, its length says "
                    f"{length}",
                    start,
                )
            yield Record(
                base_offset + offset,
                base_timestamp + timestamp if append_time is None else append_time,
                key,
                value,
                headers,
            )
        if pos != end:
            raise _Malformed(f"{end - pos} bytes after the last of {count} records", pos)
    except _Malformed as exc:
        raise _corrupt(exc.reason, exc.pos, origin, "RecordBatch.records") from None
    except IndexError:
        raise _corrupt(
            "records end inside a record", start, origin, "RecordBatch.records"
        ) from None


def _corrupt(reason: str, pos: int, origin: int, path: str) -> CorruptRecordError:
    """The error for a failure at ``pos``: in the data itself (``origin`` 0) or in the
    decompressed bytes of records that start at ``origin``."""
    if origin:
        return CorruptRecordError(
            f"{reason} (byte {pos} of the decompressed records)", origin, path
        )
    return CorruptRecordError(reason, pos, path)


class RecordBatch:
    """A magic-2 record batch: its header fields, as attributes, and its records.

    The attributes are the header as written: ``base_offset``, ``batch_length``,
    ``partition_leader_epoch``, ``magic``, ``crc``, ``attributes``, ``last_offset_delta``,
    ``base_timestamp``, ``max_timestamp``, ``producer_id``, ``producer_epoch``,
    ``base_sequence``, ``record_count``. Properties decode the attributes and sizes; nothing
    is decompressed or checked until ``records()``, ``crc_ok()`` or ``validate()``.
    """

    __slots__ = (
        "_data",
        "_start",
        "max_decompressed_size",
        "base_offset",
        "batch_length",
        "partition_leader_epoch",
        "magic",
        "crc",
        "attributes",
        "last_offset_delta",
        "base_timestamp",
        "max_timestamp",
        "producer_id",
        "producer_epoch",
        "base_sequence",
        "record_count",
    )

    _data: bytes
    _start: int
    max_decompressed_size: int
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int

    def __init__(
        self,
        data: Buffer,
        start: int = 0,
        max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    ) -> None:
        """The batch at ``data[start:]`` (``data`` may hold more after it). Raises
        ``CorruptRecordError`` if the header is cut short or impossible."""
        buf = data if type(data) is bytes else bytes(data)
        self._data = buf
        self._start = start
        self.max_decompressed_size = max_decompressed_size
        if start < 0 or len(buf) - start < _HEADER_SIZE:
            raise CorruptRecordError(
                "record batch header is cut short", max(start, 0), "RecordBatch"
            )
        (
            self.base_offset,
            self.batch_length,
            self.partition_leader_epoch,
            self.magic,
            self.crc,
            self.attributes,
            self.last_offset_delta,
            self.base_timestamp,
            self.max_timestamp,
            self.producer_id,
            self.producer_epoch,
            self.base_sequence,
            self.record_count,
        ) = _HEADER.unpack_from(buf, start)
        if self.magic != 2:
            raise CorruptRecordError(f"magic {self.magic} is not 2", start + 16, "RecordBatch")
        if self.batch_length < _MIN_BATCH_LENGTH:
            raise CorruptRecordError(
                f"batch length {self.batch_length} is less than the header's {_MIN_BATCH_LENGTH}",
                start + 8,
                "RecordBatch",
            )
        if self.batch_length > len(buf) - start - _LOG_OVERHEAD:
            raise CorruptRecordError(
                f"batch of {self.size} bytes runs past the end", start + 8, "RecordBatch"
            )
        if self.attributes & _CODEC_MASK > Compression.ZSTD:
            raise CorruptRecordError(
                f"unknown compression type {self.attributes & _CODEC_MASK}",
                start + _CRC_FROM,
                "RecordBatch",
            )

    # sizes ---------------------------------------------------------------------------------

    @property
    def size(self) -> int:
        """Bytes of the whole batch, header included."""
        return self.batch_length + _LOG_OVERHEAD

    @property
    def records_size(self) -> int:
        """Bytes of the records section as stored (compressed, if the batch is)."""
        return self.batch_length - _MIN_BATCH_LENGTH

    @property
    def offset_in_data(self) -> int:
        """Where this batch starts in the data it was read from."""
        return self._start

    @property
    def raw(self) -> bytes:
        """The batch's bytes."""
        return self._data[self._start : self._start + self.size]

    # attributes ----------------------------------------------------------------------------

    @property
    def compression(self) -> Compression:
        return Compression(self.attributes & _CODEC_MASK)

    @property
    def timestamp_type(self) -> TimestampType:
        if self.attributes & _TIMESTAMP_TYPE_BIT:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & _TRANSACTIONAL_BIT)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & _CONTROL_BIT)

    @property
    def has_delete_horizon(self) -> bool:
        """Compaction set a delete horizon (KIP-534): ``base_timestamp`` holds it."""
        return bool(self.attributes & _DELETE_HORIZON_BIT)

    # offsets and sequences -----------------------------------------------------------------

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def last_sequence(self) -> int:
        """The sequence number of the last record; sequences wrap from 2^31-1 to 0."""
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return _increment_sequence(self.base_sequence, self.last_offset_delta)

    # checks ----------------------------------------------------------------------------------

    def compute_crc(self) -> int:
        """The CRC-32C of the bytes the ``crc`` field covers (attributes to the end)."""
        start = self._start
        return crc32c(memoryview(self._data)[start + _CRC_FROM : start + self.size], 0)

    def crc_ok(self) -> bool:
        return self.compute_crc() == self.crc

    def validate(self) -> None:
        """Raise ``CorruptRecordError`` unless the CRC matches and the record count is
        possible. The records themselves are checked as ``records()`` reads them."""
        computed = self.compute_crc()
        if computed != self.crc:
            raise CorruptRecordError(
                f"CRC-32C is 0x{computed:08x}, the batch says 0x{self.crc:08x}",
                self._start + 17,
                "RecordBatch",
            )
        if self.record_count < 0:
            raise CorruptRecordError(
                f"record count {self.record_count}", self._start + 57, "RecordBatch"
            )

    # records ---------------------------------------------------------------------------------

    def records(self, max_decompressed_size: int | None = None) -> Iterator[Record]:
        """The batch's records, decoded as they are iterated (a compressed batch is
        decompressed first, to at most ``max_decompressed_size`` bytes)."""
        count = self.record_count
        start = self._start
        if count < 0:
            raise CorruptRecordError(f"record count {count}", start + 57, "RecordBatch")
        if count == 0:
            # compaction can leave a batch with no records (its offsets and sequence stay)
            return iter(())
        codec = self.attributes & _CODEC_MASK
        records_at = start + _HEADER_SIZE
        end = start + self.size
        limit = (
            self.max_decompressed_size if max_decompressed_size is None else max_decompressed_size
        )
        buf = self._data
        origin = 0
        if codec:
            buf = _decompress(
                codec, buf[records_at:end], limit, 2, records_at, "RecordBatch.records"
            )
            origin = records_at
            records_at = 0
            end = len(buf)
        if count > (end - records_at) // 7:
            # every record takes at least 7 bytes: its length and six one-byte fields
            raise CorruptRecordError(
                f"{count} records cannot fit in {end - records_at} bytes",
                start + 57,
                "RecordBatch",
            )
        append_time = self.max_timestamp if self.attributes & _TIMESTAMP_TYPE_BIT else None
        return _read_records(
            buf, records_at, end, count, self.base_offset, self.base_timestamp, append_time, origin
        )

    def __repr__(self) -> str:
        return (
            f"RecordBatch(base_offset={self.base_offset}, last_offset_delta="
            f"{self.last_offset_delta}, record_count={self.record_count}, "
            f"compression={self.compression.name}, timestamp_type={self.timestamp_type.name}, "
            f"producer_id={self.producer_id}, producer_epoch={self.producer_epoch}, "
            f"base_sequence={self.base_sequence}, is_transactional={self.is_transactional}, "
            f"is_control={self.is_control}, size={self.size})"
        )


def _increment_sequence(sequence: int, increment: int) -> int:
    if sequence > _INT32_MAX - increment:
        return increment - (_INT32_MAX - sequence) - 1
    return sequence + increment


class LegacyBatch:
    """A top-level magic 0 or 1 message (Kafka's "legacy" formats): one record, or, when
    compressed, a wrapper whose value is a compressed message set.

    The same properties as ``RecordBatch`` where the format has them; the others hold
    Kafka's "none" values (producer id -1, partition leader epoch -1 ...). ``base_offset``
    is the message's offset field: for a compressed magic-1 wrapper that is the offset of
    its last inner message. ``record_count`` is None for a compressed wrapper (the format
    does not say without decompressing).
    """

    __slots__ = (
        "_data",
        "_start",
        "max_decompressed_size",
        "base_offset",
        "message_size",
        "crc",
        "magic",
        "attributes",
        "timestamp",
        "_key_at",
        "_value_at",
    )

    _data: bytes
    _start: int
    max_decompressed_size: int
    base_offset: int
    message_size: int
    crc: int
    magic: int
    attributes: int
    timestamp: int
    _key_at: int
    _value_at: int

    def __init__(
        self,
        data: Buffer,
        start: int = 0,
        max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    ) -> None:
        buf = data if type(data) is bytes else bytes(data)
        self._data = buf
        self._start = start
        self.max_decompressed_size = max_decompressed_size
        if start < 0:
            raise CorruptRecordError("message is cut short", 0, "LegacyBatch")
        _, self._key_at, self._value_at = _parse_message(buf, start, "LegacyBatch")
        self.base_offset, self.message_size, self.crc, self.magic, self.attributes = (
            _LEGACY_V0.unpack_from(buf, start)
        )
        self.timestamp = NO_TIMESTAMP
        if self.magic == 1:
            self.timestamp = _LEGACY_V1.unpack_from(buf, start)[5]

    @property
    def size(self) -> int:
        return self.message_size + _LOG_OVERHEAD

    @property
    def offset_in_data(self) -> int:
        return self._start

    @property
    def raw(self) -> bytes:
        return self._data[self._start : self._start + self.size]

    @property
    def compression(self) -> Compression:
        return Compression(self.attributes & _CODEC_MASK)

    @property
    def timestamp_type(self) -> TimestampType:
        if self.magic == 0:
            return TimestampType.NO_TIMESTAMP_TYPE
        if self.attributes & _TIMESTAMP_TYPE_BIT:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    @property
    def base_timestamp(self) -> int:
        return self.timestamp

    # what magic 0/1 messages do not have, as Kafka reports it for them

    @property
    def partition_leader_epoch(self) -> int:
        return NO_PARTITION_LEADER_EPOCH

    @property
    def producer_id(self) -> int:
        return NO_PRODUCER_ID

    @property
    def producer_epoch(self) -> int:
        return -1

    @property
    def base_sequence(self) -> int:
        return NO_SEQUENCE

    @property
    def last_sequence(self) -> int:
        return NO_SEQUENCE

    @property
    def is_transactional(self) -> bool:
        return False

    @property
    def is_control(self) -> bool:
        return False

    @property
    def max_timestamp(self) -> int:
        return self.timestamp

    @property
    def record_count(self) -> int | None:
        return None if self.attributes & _CODEC_MASK else 1

    @property
    def last_offset(self) -> int:
        return self.base_offset

    @property
    def next_offset(self) -> int:
        return self.base_offset + 1

    def compute_crc(self) -> int:
        """The CRC-32 (IEEE) of the bytes the ``crc`` field covers (magic to the end)."""
        start = self._start
        return zlib.crc32(memoryview(self._data)[start + 16 : start + self.size])

    def crc_ok(self) -> bool:
        return self.compute_crc() == self.crc

    def validate(self) -> None:
        """Raise ``CorruptRecordError`` unless the message's CRC matches (the messages
        inside a compressed wrapper are checked by their own CRCs: see ``records``)."""
        computed = self.compute_crc()
        if computed != self.crc:
            raise CorruptRecordError(
                f"CRC-32 is 0x{computed:08x}, the message says 0x{self.crc:08x}",
                self._start + 12,
                "LegacyBatch",
            )

    def records(self, max_decompressed_size: int | None = None) -> Iterator[Record]:
        """The message itself as a record, or the messages inside a compressed wrapper."""
        buf = self._data
        if not self.attributes & _CODEC_MASK:
            key, value = _key_value(buf, self._key_at, self._value_at)
            return iter((Record(self.base_offset, self.timestamp, key, value),))
        limit = (
            self.max_decompressed_size if max_decompressed_size is None else max_decompressed_size
        )
        return iter(self._inner_records(limit))

    def _inner_records(self, limit: int) -> list[Record]:
        start = self._start
        path = "LegacyBatch.records"
        _, value = _key_value(self._data, self._key_at, self._value_at)
        if value is None:
            raise CorruptRecordError("compressed message has a null value", self._value_at, path)
        inner = _decompress(
            self.attributes & _CODEC_MASK, value, limit, self.magic, self._value_at + 4, path
        )
        origin = self._value_at + 4
        messages = []
        pos = 0
        try:
            while pos < len(inner):
                end, key_at, value_at = _parse_message(inner, pos, path)
                messages.append((pos, key_at, value_at))
                pos = end
        except CorruptRecordError as exc:
            raise _corrupt(exc.reason, exc.offset, origin, path) from None
        if not messages:
            raise CorruptRecordError("compressed message set is empty", origin, path)
        wrapper_log_append = self.magic == 1 and self.attributes & _TIMESTAMP_TYPE_BIT
        base = -1
        if self.magic == 1:
            # inner offsets are relative: the wrapper holds the last one's absolute offset
            # (or 0 from some producers, which means "relative is absolute" here)
            last_inner = _OFFSET_AND_LENGTH.unpack_from(inner, messages[-1][0])[0]
            if self.base_offset == 0:
                base = 0
            elif self.base_offset < last_inner:
                raise CorruptRecordError(
                    f"wrapper offset {self.base_offset} is below its last inner offset "
                    f"{last_inner}",
                    start,
                    path,
                )
            else:
                base = self.base_offset - last_inner
        out = []
        for pos, key_at, value_at in messages:
            offset, _, _, magic, attributes = _LEGACY_V0.unpack_from(inner, pos)
            if attributes & _CODEC_MASK:
                raise _corrupt("inner message is compressed again", pos, origin, path)
            timestamp = NO_TIMESTAMP
            if wrapper_log_append:
                timestamp = self.timestamp
            elif magic == 1:
                timestamp = _LEGACY_V1.unpack_from(inner, pos)[5]
            key, value = _key_value(inner, key_at, value_at)
            out.append(Record(offset + base if base >= 0 else offset, timestamp, key, value))
        return out

    def __repr__(self) -> str:
        return (
            f"LegacyBatch(magic={self.magic}, base_offset={self.base_offset}, "
            f"compression={self.compression.name}, timestamp={self.timestamp}, size={self.size})"
        )


def _parse_message(buf: bytes, start: int, path: str) -> tuple[int, int, int]:
    """Check the structure of the magic 0/1 message at ``start``: (its end, where its key
    length is, where its value length is)."""
    if len(buf) - start < _LOG_OVERHEAD + _MIN_MESSAGE_SIZE:
        raise CorruptRecordError("message is cut short", start, path)
    size = _INT32.unpack_from(buf, start + 8)[0]
    magic = buf[start + 16]
    if magic > 1:
        raise CorruptRecordError(f"magic {magic} in a magic 0/1 message set", start + 16, path)
    header = 6 if magic == 0 else 14  # crc, magic, attributes (and timestamp)
    if size < header + 8:
        raise CorruptRecordError(f"message size {size} is below the minimum", start + 8, path)
    end = start + _LOG_OVERHEAD + size
    if end > len(buf):
        raise CorruptRecordError(f"message of {size} bytes runs past the end", start + 8, path)
    key_at = start + _LOG_OVERHEAD + header
    key_size = _INT32.unpack_from(buf, key_at)[0]
    value_at = key_at + 4 + max(key_size, 0)
    if key_size < -1 or value_at + 4 > end:
        raise CorruptRecordError(f"key length {key_size}", key_at, path)
    value_size = _INT32.unpack_from(buf, value_at)[0]
    if value_size < -1 or value_at + 4 + max(value_size, 0) != end:
        raise CorruptRecordError(
            f"value length {value_size} does not fill the message", value_at, path
        )
    if buf[start + 17] & _CODEC_MASK > Compression.LZ4:
        # zstd came with magic 2; 5 to 7 are no codec at all
        raise CorruptRecordError(
            f"compression type {buf[start + 17] & _CODEC_MASK} in a magic {magic} message",
            start + 17,
            path,
        )
    return end, key_at, value_at


def _key_value(buf: bytes, key_at: int, value_at: int) -> tuple[bytes | None, bytes | None]:
    key_size = _INT32.unpack_from(buf, key_at)[0]
    value_size = _INT32.unpack_from(buf, value_at)[0]
    key = None if key_size < 0 else buf[key_at + 4 : key_at + 4 + key_size]
    value = None if value_size < 0 else buf[value_at + 4 : value_at + 4 + value_size]
    return key, value


class BatchIterator:
    """Iterates the batches of a records field (``iter_batches``).

    After the last complete batch, ``trailing_bytes`` says how many bytes were left over
    and ``incomplete_size`` the size a cut-short batch declared (None when there was none,
    or when not even its length field arrived).
    """

    __slots__ = ("_data", "_pos", "max_decompressed_size", "trailing_bytes", "incomplete_size")

    def __init__(self, data: Buffer | None, max_decompressed_size: int) -> None:
        if data is None:
            data = b""
        self._data = data if type(data) is bytes else bytes(data)
        self._pos = 0
        self.max_decompressed_size = max_decompressed_size
        self.trailing_bytes = 0
        self.incomplete_size: int | None = None

    def __iter__(self) -> BatchIterator:
        return self

    def __next__(self) -> RecordBatch | LegacyBatch:
        data = self._data
        pos = self._pos
        remaining = len(data) - pos
        if remaining < _LOG_OVERHEAD:
            self.trailing_bytes = remaining
            raise StopIteration
        length = _INT32.unpack_from(data, pos + 8)[0]
        if length < _MIN_MESSAGE_SIZE:
            raise CorruptRecordError(
                f"batch length {length} is below the minimum {_MIN_MESSAGE_SIZE}",
                pos + 8,
                "records",
            )
        size = length + _LOG_OVERHEAD
        if size > remaining:
            # a Fetch response may end with part of a batch: not an error
            self.trailing_bytes = remaining
            self.incomplete_size = size
            raise StopIteration
        magic = data[pos + 16]
        batch: RecordBatch | LegacyBatch
        if magic == 2:
            batch = RecordBatch(data, pos, self.max_decompressed_size)
        elif magic < 2:
            batch = LegacyBatch(data, pos, self.max_decompressed_size)
        else:
            raise CorruptRecordError(f"unknown magic {magic}", pos + 16, "records")
        self._pos = pos + size
        return batch

    @property
    def position(self) -> int:
        """Bytes consumed so far: the end of the last batch returned."""
        return self._pos


def iter_batches(
    data: Buffer | None, *, max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE
) -> BatchIterator:
    """The batches in a records field, one at a time (None reads as no batches)."""
    return BatchIterator(data, max_decompressed_size)


# --- control records -------------------------------------------------------------------------


def decode_control(record: Record) -> ControlRecord:
    """The control type of a control batch's record, and for ABORT and COMMIT markers the
    coordinator epoch. Types Kafka defines otherwise keep their value raw."""
    key = record.key
    if key is None or len(key) < 4:
        raise CorruptRecordError(
            "control record key is shorter than 4 bytes", 0, "ControlRecord.key"
        )
    version, kind = _CONTROL_KEY.unpack_from(key)
    value = record.value
    epoch = None
    if kind == ControlType.ABORT or kind == ControlType.COMMIT:
        if value is None or len(value) < 6:
            raise CorruptRecordError(
                "transaction marker value is shorter than 6 bytes", 0, "ControlRecord.value"
            )
        epoch = _END_TXN_VALUE.unpack_from(value)[1]
    control_type: ControlType | int = kind
    if 0 <= kind <= ControlType.KRAFT_VOTERS:
        control_type = ControlType(kind)
    return ControlRecord(control_type, version, epoch, value)


def encode_control(control: ControlRecord) -> tuple[bytes, bytes | None]:
    """The (key, value) of a control record: for ABORT and COMMIT with a coordinator epoch,
    the marker value (version 0); otherwise ``control.value`` as given."""
    key = _CONTROL_KEY.pack(control.version, control.type)
    if control.coordinator_epoch is not None and control.type in (
        ControlType.ABORT,
        ControlType.COMMIT,
    ):
        return key, _END_TXN_VALUE.pack(0, control.coordinator_epoch)
    return key, control.value


# --- writing ---------------------------------------------------------------------------------


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
