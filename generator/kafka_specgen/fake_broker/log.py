"""Topics and partition logs in memory: record batches as produced, offsets as assigned.

A batch is kept as the bytes the producer sent, with its base offset and partition leader
epoch rewritten (the CRC covers neither), so a consumer fetches what was produced. A
partition's leader epoch goes up when its leader moves (``move_leader``), and ``epochs``
remembers where each epoch began, for OffsetForLeaderEpoch (KIP-320). Every
append fires the partition's ``arrivals`` signal, which wakes the Fetches waiting on it.
"""

from __future__ import annotations

import struct
import uuid
from bisect import bisect_right
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from .waiting import Signal

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


@dataclass(frozen=True)
class BatchMetadata:
    """What an idempotent producer's batch is remembered by (apache/kafka
    ``BatchMetadata``): its sequence range and the offsets it got."""

    first_sequence: int
    last_sequence: int
    base_offset: int


@dataclass
class ProducerEntry:
    """An idempotent producer's state in one partition: its epoch and its last batches."""

    epoch: int
    batches: deque[BatchMetadata]
    last_timestamp: int = -1
    coordinator_epoch: int = -1

    @property
    def last_sequence(self) -> int:
        return self.batches[-1].last_sequence if self.batches else -1

    def duplicate_of(self, epoch: int, first: int, last: int) -> BatchMetadata | None:
        if epoch != self.epoch:
            return None
        for kept in self.batches:
            if kept.first_sequence == first and kept.last_sequence == last:
                return kept
        return None


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
    producers: dict[int, ProducerEntry] = field(default_factory=dict)
    """Producer id -> its epoch and last batches, for the idempotence checks."""
    arrivals: Signal = field(default_factory=Signal, repr=False)
    """Fired on every append."""
    size: int = 0
    """Bytes of the batches kept (what retention.bytes limits)."""
    leader_epoch: int = 0
    epochs: list[tuple[int, int]] = field(default_factory=lambda: [(0, 0)])
    """(leader epoch, the first offset written in it), oldest first."""
    _bases: list[int] = field(default_factory=list, repr=False)

    def move_leader(self, node: int) -> None:
        """A new leader (-1: none), in a new leader epoch."""
        self.leader = node
        self.leader_epoch += 1
        self.epochs.append((self.leader_epoch, self.end))

    def end_offset_for(self, epoch: int) -> tuple[int, int]:
        """(epoch, end offset) of the newest epoch at most ``epoch``: where that epoch's
        log ends (apache/kafka ``LeaderEpochFileCache.endOffsetFor``); (-1, -1) unknown."""
        if epoch < 0:
            return -1, -1
        if epoch == self.leader_epoch:
            return epoch, self.end
        higher = next((start for known, start in self.epochs if known > epoch), None)
        if higher is None:  # an epoch after the newest
            return -1, -1
        floor = [known for known, _ in self.epochs if known <= epoch]
        return (floor[-1] if floor else epoch), higher

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
        _LEADER_EPOCH.pack_into(raw, 12, self.leader_epoch)
        self.batches.append(
            StoredBatch(
                base, base + count, bytes(raw), max_timestamp, producer_id, transactional, control
            )
        )
        self._bases.append(base)
        self.size += len(raw)
        self.end = base + count
        if transactional and not control and producer_id not in self.open_txns:
            self.open_txns[producer_id] = base
        self.arrivals.fire()
        return base

    def _first_index(self, offset: int) -> int:
        """The index of the batch holding ``offset`` (or of the first batch after it)."""
        index = bisect_right(self._bases, offset) - 1
        if index < 0:
            return 0
        return index if self.batches[index].next_offset > offset else index + 1

    def read(self, offset: int, max_bytes: int, upto: int, *, at_least_one: bool = True) -> bytes:
        """Batches from the one holding ``offset`` on, below ``upto``, within ``max_bytes``;
        with ``at_least_one``, the first batch even when it is larger."""
        parts: list[bytes] = []
        size = 0
        for index in range(self._first_index(offset), len(self.batches)):
            batch = self.batches[index]
            if batch.base_offset >= upto:
                break
            if size + len(batch.data) > max_bytes and (parts or not at_least_one):
                break
            parts.append(batch.data)
            size += len(batch.data)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def readable(self, offset: int, upto: int, enough: int) -> int:
        """The bytes a read from ``offset`` below ``upto`` would return, counted up to
        ``enough`` (cheap: for a waiting Fetch, which is answered once there is enough)."""
        size = 0
        for index in range(self._first_index(offset), len(self.batches)):
            batch = self.batches[index]
            if batch.base_offset >= upto or size >= enough:
                break
            size += len(batch.data)
        return size

    # --- log maintenance (retention, DeleteRecords, compaction) ---------------------------

    def delete_before(self, offset: int) -> None:
        """Move the log start offset up to ``offset`` (at most the end), dropping the
        batches wholly below it (a batch that straddles it is kept, as a segment is)."""
        offset = min(max(offset, self.log_start), self.end)
        self.log_start = offset
        gone = 0
        while gone < len(self.batches) and self.batches[gone].next_offset <= offset:
            self.size -= len(self.batches[gone].data)
            gone += 1
        if gone:
            del self.batches[:gone]
            del self._bases[:gone]
        self.aborted = [a for a in self.aborted if a.last_offset >= offset]

    def replace_batches(self, batches: list[StoredBatch]) -> None:
        """Put the batches compaction kept in place of the log's (same offsets, fewer
        records)."""
        self.batches = batches
        self._bases = [b.base_offset for b in batches]
        self.size = sum(len(b.data) for b in batches)

    def offset_for_time(self, records: Any, timestamp: int) -> tuple[int, int]:
        """(offset, timestamp) of the first record whose timestamp reaches ``timestamp``
        (apache/kafka ``UnifiedLog.fetchOffsetByTimestamp``), else (-1, -1)."""
        for batch in self.batches:
            if batch.control or batch.max_timestamp < timestamp:
                continue
            for record in records.RecordBatch(batch.data).records():
                if record.timestamp >= timestamp and record.offset >= self.log_start:
                    return record.offset, record.timestamp
        return -1, -1

    def max_timestamp(self, records: Any) -> tuple[int, int]:
        """(timestamp, offset) of the record with the largest timestamp (the first of them),
        else (-1, -1) (KIP-734)."""
        best: StoredBatch | None = None
        for batch in self.batches:
            if not batch.control and (best is None or batch.max_timestamp > best.max_timestamp):
                best = batch
        if best is None:
            return -1, -1
        for record in records.RecordBatch(best.data).records():
            if record.timestamp == best.max_timestamp:
                return record.timestamp, record.offset
        return best.max_timestamp, best.base_offset

    def aborted_in(self, start: int, end: int) -> list[AbortedTxn]:
        return [a for a in self.aborted if a.last_offset >= start and a.first_offset < end]


@dataclass
class Topic:
    name: str
    partitions: list[PartitionLog]
    topic_id: uuid.UUID = field(default_factory=uuid.uuid4)
    configs: dict[str, str] = field(default_factory=dict)
