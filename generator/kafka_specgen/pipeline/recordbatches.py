"""The record batches of a decoded Produce request or Fetch response, as facts: one
``BatchFacts`` per batch (magic 2) or top-level legacy message (magic 0/1), read with the
generated package's ``records`` module, or one with ``error`` set where the data cannot be
read. Magic 2 counts come from the batch header, not from decompressing; legacy
compressed messages are decompressed to count what they hold. Standard library only.
"""

from __future__ import annotations

import base64
from typing import Any, NamedTuple

from ..capture.columns import OptBool, OptBytes, OptInt, OptLong, OptStr


class BatchFacts(NamedTuple):
    """One record batch (or legacy top-level message) of a frame, or the data of a partition
    that could not be read (``error`` set: the reason; ``data``: the bytes from there on)."""

    topic: OptStr
    topic_id: OptStr  # Kafka's text form (base64) where the message names topics by id
    partition: OptInt
    batch_index: OptInt  # its place in the partition's record data, from 0
    base_offset: OptLong
    magic: OptInt
    compression: OptStr  # none, gzip, snappy, lz4, zstd
    record_count: OptInt  # magic 2: from the header; legacy: messages (decompressed)
    size_bytes: OptInt  # on the wire
    uncompressed_bytes: OptLong  # where known without decompressing magic 2 data
    producer_id: OptLong  # magic 2 only
    producer_epoch: OptInt
    is_transactional: OptBool
    is_control: OptBool
    crc_ok: OptBool
    error: OptStr
    data: OptBytes  # error rows only: the unreadable bytes


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
            batch_error(
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
            batch_error(
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


def batch_error(
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
            return batch_error(
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


def uuid_text(value: Any) -> str:
    """Kafka's text form of a UUID: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode("ascii")
