"""The record batches of a produced partition, checked as Kafka checks them, with every size
capped: ``accepted_batches`` returns magic-2 batches ready to append, or raises ``Refused``.

Magic-2 batches are kept as sent: their CRC is checked, they are not decompressed (a valid
batch that decompresses to a lot is stored and served compressed, as Kafka serves it).
Message sets (magic 0 and 1, Produce v0-v2) are converted to one magic-2 batch on the way
in, as a broker does; that means decompressing them, within a budget shared by the whole
request (``Limits.max_decompressed_bytes``). A compressed message inside a compressed
message is refused, as Kafka refuses it, so a wrapper nests one level at most.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import ErrorCode

#: Produce v3 on carries exactly one magic-2 batch per partition (KIP-98)
FIRST_BATCH_ONLY_VERSION = 3
#: zstd is allowed from Produce v7 on (KIP-110)
ZSTD_VERSION = 7
#: the size of an inner magic 0 / magic 1 message besides its key and value
_LEGACY_OVERHEAD = {0: 26, 1: 34}


class Refused(Exception):
    """A partition's records that Kafka would refuse: its error code and message."""

    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        super().__init__(message or code.name)
        self.code = code
        self.message = message


@dataclass
class Budget:
    """The decompressed bytes one request may produce: ``total``, of which ``left`` are
    left."""

    total: int
    left: int = -1

    def __post_init__(self) -> None:
        if self.left < 0:
            self.left = self.total


def accepted_batches(
    records: Any, data: bytes | None, version: int, max_message_bytes: int, budget: Budget
) -> list[Any]:
    """The batches of ``data`` to append (magic 2), or ``Refused``. ``records`` is the
    generated package's records module."""
    try:
        batches = list(records.iter_batches(data or b""))
        for batch in batches:
            if batch.size > max_message_bytes:
                raise Refused(
                    ErrorCode.MESSAGE_TOO_LARGE,
                    f"the batch of {batch.size} bytes is larger than the {max_message_bytes} "
                    "bytes allowed (message.max.bytes)",
                )
            batch.validate()
    except records.CorruptRecordError as exc:
        raise Refused(ErrorCode.CORRUPT_MESSAGE, str(exc)) from None
    if version >= FIRST_BATCH_ONLY_VERSION:
        _check_v3(records, batches, version)
    if not batches:
        raise Refused(ErrorCode.CORRUPT_MESSAGE, "no record batch")
    if isinstance(batches[0], records.RecordBatch):
        return batches
    return [_converted(records, batches, budget)]


def _check_v3(records: Any, batches: list[Any], version: int) -> None:
    """apache/kafka ``ProduceRequest.validateRecords``."""
    if not batches:
        raise Refused(
            ErrorCode.INVALID_RECORD,
            f"Produce requests with version {version} must have at least one record batch "
            "per partition",
        )
    if not isinstance(batches[0], records.RecordBatch):
        raise Refused(
            ErrorCode.INVALID_RECORD,
            f"Produce requests with version {version} are only allowed to contain record "
            "batches with magic version 2",
        )
    if version < ZSTD_VERSION and batches[0].compression == records.Compression.ZSTD:
        raise Refused(
            ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
            f"Produce requests with version {version} are not allowed to use ZStandard "
            "compression",
        )
    if len(batches) > 1:
        raise Refused(
            ErrorCode.INVALID_RECORD,
            f"Produce requests with version {version} are only allowed to contain exactly "
            "one record batch per partition",
        )


def _converted(records: Any, legacy: list[Any], budget: Budget) -> Any:
    """Message sets as one magic-2 batch (fetches then return magic 2: no
    down-conversion here)."""
    kept = []
    for message in legacy:
        limit = budget.left
        try:
            inner = list(message.records(max_decompressed_size=limit))
        except records.CorruptRecordError as exc:
            raise _refusal(exc.reason, limit, budget.total) from None
        if message.compression != records.Compression.NONE:
            overhead = _LEGACY_OVERHEAD[message.magic]
            budget.left -= sum(overhead + len(r.key or b"") + len(r.value or b"") for r in inner)
        kept += inner
    data = records.build_batch(
        [records.Record(n, r.timestamp, r.key, r.value) for n, r in enumerate(kept)],
        compression=legacy[0].compression,
    )
    return records.RecordBatch(data)


def _refusal(reason: str, limit: int, total: int) -> Refused:
    # The records module says why in words: a codec stopped at the limit it was given
    # ("... the limit of N ..."), or it met a compressed message inside a compressed one.
    if f"limit of {limit}" in reason:
        return Refused(
            ErrorCode.INVALID_RECORD,
            f"the records of this request decompress to more than {total} bytes "
            "(the fake broker's max_decompressed_bytes)",
        )
    if "compressed again" in reason:
        # apache/kafka AbstractLegacyRecordBatch.DeepRecordsIterator
        return Refused(ErrorCode.INVALID_RECORD, "Inner messages must not be compressed")
    return Refused(ErrorCode.CORRUPT_MESSAGE, reason)
