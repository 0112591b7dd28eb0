"""Topics and partition logs in memory: record batches as produced, offsets as assigned.

A batch is kept as the bytes the producer sent, with its base offset and partition leader
epoch rewritten (the CRC covers neither), so a consumer fetches what was produced.
"""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass, field

_BASE_OFFSET = struct.Struct(">q")
_LEADER_EPOCH = struct.Struct(">i")


@dataclass
class StoredBatch:
    base_offset: int
    next_offset: int
    data: bytes
    max_timestamp: int
    producer_id: int
    transactional: bool
    control: bool


@dataclass
class AbortedTxn:
    producer_id: int
    first_offset: int
    last_offset: int


@dataclass
class PartitionLog:
    leader: int
    batches: list[StoredBatch] = field(default_factory=list)
    log_start: int = 0
    end: int = 0
    """The log end offset (the next offset to assign) and the high watermark: every
    write is acknowledged by all replicas at once here."""
    open_txns: dict[int, int] = field(default_factory=dict)
    """Producer id -> first offset of its open transaction in this partition."""
    aborted: list[AbortedTxn] = field(default_factory=list)
    sequences: dict[int, tuple[int, int, int, int]] = field(default_factory=dict)
    """Producer id -> its last batch's (epoch, base sequence, last sequence, base offset),
    for the idempotence checks."""

    @property
    def last_stable(self) -> int:
        """The first offset of the oldest open transaction, else the end."""
        return min(self.open_txns.values(), default=self.end)

    def append(
        self,
        data: bytes,
        count: int,
        *,
        max_timestamp: int,
        producer_id: int,
        transactional: bool,
        control: bool,
    ) -> int:
        """Append one magic-2 batch of ``count`` offsets; returns its base offset."""
        base = self.end
        raw = bytearray(data)
        _BASE_OFFSET.pack_into(raw, 0, base)
        _LEADER_EPOCH.pack_into(raw, 12, 0)
        self.batches.append(
            StoredBatch(
                base, base + count, bytes(raw), max_timestamp, producer_id, transactional, control
            )
        )
        self.end = base + count
        if transactional and not control and producer_id not in self.open_txns:
            self.open_txns[producer_id] = base
        return base

    def read(self, offset: int, max_bytes: int, upto: int) -> bytes:
        """Batches from the one holding ``offset`` on, below ``upto``, within ``max_bytes``
        (at least one batch, as Kafka returns one over the limit to make progress)."""
        out = bytearray()
        for batch in self.batches:
            if batch.next_offset <= offset or batch.base_offset >= upto:
                continue
            if out and len(out) + len(batch.data) > max_bytes:
                break
            out += batch.data
        return bytes(out)

    def offset_for_time(self, timestamp: int) -> tuple[int, int]:
        """(offset, timestamp) of the first batch whose records reach ``timestamp``."""
        for batch in self.batches:
            if not batch.control and batch.max_timestamp >= timestamp:
                return batch.base_offset, batch.max_timestamp
        return -1, -1

    def aborted_in(self, start: int, end: int) -> list[AbortedTxn]:
        return [a for a in self.aborted if a.last_offset >= start and a.first_offset < end]


@dataclass
class Topic:
    name: str
    partitions: list[PartitionLog]
    topic_id: uuid.UUID = field(default_factory=uuid.uuid4)
    configs: dict[str, str] = field(default_factory=dict)
