# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""Magic 0 and 1 message sets (Kafka before 0.11): ``LegacyBatch``, one top-level message."""

from __future__ import annotations

import zlib

from ._codecs import _decompress
from ._format import (
    _CODEC_MASK,
    _INT32,
    _LEGACY_V0,
    _LEGACY_V1,
    _LOG_OVERHEAD,
    _MIN_MESSAGE_SIZE,
    _OFFSET_AND_LENGTH,
    _TIMESTAMP_TYPE_BIT,
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    Compression,
    CorruptRecordError,
    Record,
    TimestampType,
    _corrupt,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from ._format import Buffer


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
