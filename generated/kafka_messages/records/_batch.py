# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""Magic-2 record batches (Kafka 0.11 and later): ``RecordBatch`` and its records' reader."""

from __future__ import annotations

from ._codecs import _decompress
from ._format import (
    _CODEC_MASK,
    _CONTROL_BIT,
    _CRC_FROM,
    _DELETE_HORIZON_BIT,
    _HEADER,
    _HEADER_SIZE,
    _INT32_MAX,
    _LOG_OVERHEAD,
    _MIN_BATCH_LENGTH,
    _TIMESTAMP_TYPE_BIT,
    _TRANSACTIONAL_BIT,
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    NO_SEQUENCE,
    Compression,
    CorruptRecordError,
    Record,
    TimestampType,
    _corrupt,
    _Malformed,
    _read_headers,
    _varint,
    crc32c,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from ._format import Buffer


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
