"""The records a share group (KIP-932) hands out, partition by partition: apache/kafka
``SharePartition``'s state machine.

Each partition of a share group has a start offset (below it everything is done), and the
records in flight above it: ACQUIRED by a member (with a delivery count and a lock that
expires), AVAILABLE again (released, or their lock expired), ACKNOWLEDGED or ARCHIVED
(rejected, or delivered ``delivery.count.limit`` times). The start offset moves past
records that are done; at most ``max_record_locks`` records above it are in flight.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

from .clock import Alarm
from .waiting import Signal

AVAILABLE, ACQUIRED, ACKNOWLEDGED, ARCHIVED = "AVAILABLE", "ACQUIRED", "ACKNOWLEDGED", "ARCHIVED"
#: acknowledge types (ShareFetch/ShareAcknowledge AcknowledgeTypes)
GAP, ACCEPT, RELEASE, REJECT, RENEW = 0, 1, 2, 3, 4


@dataclass
class InFlight:
    state: str
    delivery_count: int = 0
    member_id: str = ""
    deadline: float = 0.0


@dataclass
class SharePartition:
    start: int
    """The share-partition start offset (SPSO)."""
    records: dict[int, InFlight] = field(default_factory=dict)
    """Offset -> its state, for the records in flight above ``start``."""
    locks: Alarm = field(default_factory=lambda: Alarm(None), repr=False)
    """Set for the earliest acquisition lock to expire."""
    available: Signal = field(default_factory=Signal, repr=False)
    """Fired when records become available again (released, or their lock expired)."""

    def state_of(self, offset: int) -> str:
        found = self.records.get(offset)
        return found.state if found is not None else AVAILABLE

    def acquirable(self, offset: int, limit: int) -> bool:
        return (
            offset >= self.start
            and offset < self.start + limit
            and (self.state_of(offset) == AVAILABLE)
        )

    def acquire(self, offset: int, member_id: str, deadline: float) -> int:
        """Hand ``offset`` to ``member_id``; returns its delivery count."""
        found = self.records.get(offset)
        count = (found.delivery_count if found is not None else 0) + 1
        self.records[offset] = InFlight(ACQUIRED, count, member_id, deadline)
        return count

    def acknowledge(
        self, first: int, last: int, kind: int, member_id: str, limit: int, deadline: float
    ) -> bool:
        """Apply one acknowledgement to ``first``..``last``; False (and nothing changed)
        if any of them is not acquired by ``member_id`` (INVALID_RECORD_STATE)."""
        if last < first or last - first >= len(self.records):  # more than is in flight
            return False
        for offset in range(first, last + 1):
            held = self.records.get(offset)
            if held is None or held.state != ACQUIRED or held.member_id != member_id:
                return False
        for offset in range(first, last + 1):
            held = self.records[offset]
            if kind in (ACCEPT, GAP):
                held.state = ACKNOWLEDGED
            elif kind == REJECT:
                held.state = ARCHIVED
            elif kind == RENEW:
                held.deadline = deadline
            else:  # RELEASE
                self._release(held, limit)
        self.advance()
        return True

    def _release(self, held: InFlight, limit: int) -> None:
        held.state = ARCHIVED if held.delivery_count >= limit else AVAILABLE
        held.member_id = ""
        if held.state == AVAILABLE:
            self.available.fire()

    def release_member(self, member_id: str, limit: int) -> None:
        """What ``member_id`` holds goes back (its session closed, or it left the group)."""
        for held in self.records.values():
            if held.state == ACQUIRED and held.member_id == member_id:
                self._release(held, limit)
        self.advance()

    def expire(self, now: float, limit: int) -> None:
        """Locks past their deadline are released (or archived past the delivery limit)."""
        for held in self.records.values():
            if held.state == ACQUIRED and held.deadline <= now:
                self._release(held, limit)
        self.advance()

    def next_deadline(self) -> float | None:
        deadlines = [r.deadline for r in self.records.values() if r.state == ACQUIRED]
        return min(deadlines) if deadlines else None

    def advance(self) -> None:
        """Move the start offset past the records that are done."""
        while self.state_of(self.start) in (ACKNOWLEDGED, ARCHIVED):
            del self.records[self.start]
            self.start += 1

    def move_start(self, offset: int) -> None:
        """The log start moved past records (retention, DeleteRecords) or an admin set the
        start offset: the records below ``offset`` are gone."""
        if offset > self.start:
            for gone in [o for o in self.records if o < offset]:
                del self.records[gone]
            self.start = offset
            self.advance()

    def in_flight(self) -> int:
        return len(self.records)

    def done_above_start(self) -> int:
        return sum(1 for r in self.records.values() if r.state in (ACKNOWLEDGED, ARCHIVED))


def ranges(acquired: list[tuple[int, int]]) -> Iterator[tuple[int, int, int]]:
    """(first, last, delivery count) runs of consecutive offsets with the same count."""
    run: list[int] = []
    for offset, count in acquired:
        if run and (offset == run[1] + 1 and count == run[2]):
            run[1] = offset
            continue
        if run:
            yield run[0], run[1], run[2]
        run = [offset, offset, count]
    if run:
        yield run[0], run[1], run[2]


@dataclass
class ShareSession:
    """A member's share session on one broker (KIP-932): the partitions it fetches, and
    the epoch its next request must carry."""

    epoch: int
    partitions: list[tuple[uuid.UUID, int]] = field(default_factory=list)
