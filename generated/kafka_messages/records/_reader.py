# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""The batches of a records field, one at a time, whichever their magic."""

from __future__ import annotations

from ._batch import RecordBatch
from ._format import (
    _INT32,
    _LOG_OVERHEAD,
    _MIN_MESSAGE_SIZE,
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    CorruptRecordError,
)
from ._legacy import LegacyBatch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._format import Buffer


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
