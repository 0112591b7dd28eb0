"""KIP-932's ShareFetch and ShareAcknowledge: members of a share group take records under an
acquisition lock and acknowledge them one by one (accept, release, reject, renew), within
share sessions, as apache/kafka ``SharePartitionManager`` and ``ShareSessionCache`` run them.

A ShareFetch first applies the acknowledgements it carries, then acquires available records
of its session's partitions (whole batches, up to MaxRecords; exactly MaxRecords in v2's
record-limit mode), and waits up to MaxWaitMs when there is none: it is woken by appends
and by records becoming available again. Locks that expire give their records back (or
archive them past the delivery limit) on a timer of the cluster's loop.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from . import clock
from .acl import Operation, ResourceType
from ..api_keys import ApiKey
from .call import Call
from .configs import group_setting
from .errors import ErrorCode
from .handler import Handler
from .log import PartitionLog
from .modern import ModernGroup
from .shapes import Names
from .share_groups import delivery_limit, initial_offset, lock_duration_ms
from .share_state import RENEW, SharePartition, ShareSession, ranges
from .waiting import Wait

FINAL_EPOCH = -1
#: the most share sessions one broker keeps (Kafka's group.share.max.share.sessions)
MAX_SESSIONS = 2000
RECORD_LIMIT_MODE = 1
NAMES = Names(
    absent={
        "max_records": 500,
        "batch_size": 500,
        "share_acquire_mode": 0,
        "is_renew_ack": False,
        "partition_max_bytes": 0,
        "acquisition_lock_timeout_ms": 0,
    }
)


class AckBatchIn(Protocol):
    first_offset: int
    last_offset: int
    acknowledge_types: Sequence[int]


class PartitionIn(Protocol):
    partition_index: int
    acknowledgement_batches: Sequence[AckBatchIn]


class TopicIn(Protocol):
    topic_id: uuid.UUID
    partitions: Sequence[PartitionIn]


class ForgottenIn(Protocol):
    topic_id: uuid.UUID
    partitions: Sequence[int]


class ShareFetchIn(Protocol):
    group_id: str | None
    member_id: str | None
    share_session_epoch: int
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    max_records: int
    share_acquire_mode: int
    is_renew_ack: bool
    topics: Sequence[TopicIn]
    forgotten_topics_data: Sequence[ForgottenIn]


class ShareAcknowledgeIn(Protocol):
    group_id: str | None
    member_id: str | None
    share_session_epoch: int
    is_renew_ack: bool
    topics: Sequence[TopicIn]


class Refused(Exception):
    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        super().__init__(message or code.name)
        self.code, self.message = code, message


@dataclass
class Outcome:
    """What a ShareFetch/ShareAcknowledge says of one partition."""

    error: ErrorCode = ErrorCode.NONE
    ack_error: ErrorCode = ErrorCode.NONE
    records: bytes = b""
    acquired: tuple[tuple[int, int, int], ...] = ()
    leader: int = -1


Key = tuple[uuid.UUID, int]


def share_fetch(call: Call) -> Any:
    req: ShareFetchIn = call.read(ShareFetchIn)
    try:
        modern, group_id, member_id = _group(call, req.group_id, req.member_id)
        session = _session(call, modern, member_id, req.share_session_epoch, opening_allowed=True)
    except Refused as refused:
        return _fetch_error(call, refused)
    outcomes: dict[Key, Outcome] = {}
    asked = [(t.topic_id, p.partition_index) for t in req.topics for p in t.partitions]
    _acknowledge(call, modern, group_id, member_id, req.topics, req.is_renew_ack, outcomes)
    if req.share_session_epoch == FINAL_EPOCH:
        _close(call, modern, group_id, member_id)
        return _fetch_response(call, group_id, outcomes)
    assert session is not None
    forgotten = {(f.topic_id, i) for f in req.forgotten_topics_data for i in f.partitions}
    session.partitions = [k for k in session.partitions if k not in forgotten]
    session.partitions += [k for k in dict.fromkeys(asked) if k not in session.partitions]
    partitions = list(session.partitions)
    for key in asked:
        outcomes.setdefault(key, Outcome())

    def attempt(final: bool) -> Any:
        got = _acquire(call, modern, group_id, member_id, req, partitions, outcomes)
        if got or final:
            return _fetch_response(call, group_id, outcomes)
        return None

    answer = attempt(req.max_wait_ms <= 0)
    if answer is not None:
        return answer
    signals = []
    for key in partitions:
        log = _log(call, key)
        share = modern.shares.get(key)
        if log is not None:
            signals.append(log.arrivals)
        if share is not None:
            signals.append(share.available)

    def poll(now: float, expired: bool) -> Any:
        return attempt(expired)

    return Wait(call.now + req.max_wait_ms / 1000.0, poll, signals)


def share_acknowledge(call: Call) -> Any:
    req: ShareAcknowledgeIn = call.read(ShareAcknowledgeIn)
    try:
        modern, group_id, member_id = _group(call, req.group_id, req.member_id)
        _session(call, modern, member_id, req.share_session_epoch, opening_allowed=False)
    except Refused as refused:
        return call.respond(
            error_code=refused.code, error_message=refused.message, responses=[], node_endpoints=[]
        )
    outcomes: dict[Key, Outcome] = {}
    _acknowledge(call, modern, group_id, member_id, req.topics, req.is_renew_ack, outcomes)
    if req.share_session_epoch == FINAL_EPOCH:
        _close(call, modern, group_id, member_id)
    topic_class = call.item(call.response, "responses")
    partition_class = call.item(topic_class, "partitions")
    by_topic: dict[uuid.UUID, list[Any]] = {}
    for (topic_id, index), outcome in outcomes.items():
        by_topic.setdefault(topic_id, []).append(
            call.build(
                partition_class,
                partition_index=index,
                error_code=outcome.ack_error or outcome.error,
                error_message=None,
                current_leader=_leader(call, partition_class, outcome),
            )
        )
    return call.respond(
        error_code=ErrorCode.NONE,
        error_message=None,
        acquisition_lock_timeout_ms=lock_duration_ms(call, group_id),
        responses=[call.build(topic_class, topic_id=t, partitions=p) for t, p in by_topic.items()],
        node_endpoints=_endpoints(call, outcomes),
    )


# --- groups and sessions --------------------------------------------------------------------


def _group(call: Call, group_id: str | None, member_id: str | None) -> tuple[ModernGroup, str, str]:
    if not group_id or not member_id:
        raise Refused(ErrorCode.INVALID_REQUEST, "GroupId and MemberId must be set.")
    group = call.state.groups.get(group_id)
    if group is None or group.modern is None or group.modern.kind != "share":
        raise Refused(ErrorCode.INVALID_REQUEST, f"Group {group_id} is not a share group.")
    return group.modern, group_id, member_id


def _session(
    call: Call, modern: ModernGroup, member_id: str, epoch: int, *, opening_allowed: bool
) -> ShareSession | None:
    """The member's session on this broker, checked and moved to its next epoch (apache/kafka
    ``ShareSessionCache``); None for the final request (epoch -1)."""
    key = (call.node.node_id, member_id)
    session = modern.sessions.get(key)
    if epoch == FINAL_EPOCH:
        if session is None:
            raise Refused(ErrorCode.SHARE_SESSION_NOT_FOUND)
        return None
    if epoch == 0:
        if not opening_allowed:
            raise Refused(ErrorCode.INVALID_SHARE_SESSION_EPOCH)
        if session is None and _sessions_on(call) >= MAX_SESSIONS:
            raise Refused(ErrorCode.SHARE_SESSION_LIMIT_REACHED)
        session = modern.sessions[key] = ShareSession(1)
        return session
    if session is None:
        raise Refused(ErrorCode.SHARE_SESSION_NOT_FOUND)
    if session.epoch != epoch:
        raise Refused(ErrorCode.INVALID_SHARE_SESSION_EPOCH)
    session.epoch = epoch + 1 if epoch < 2**31 - 1 else 1
    return session


def _sessions_on(call: Call) -> int:
    node = call.node.node_id
    return sum(
        sum(1 for n, _ in g.modern.sessions if n == node)
        for g in call.state.groups.values()
        if g.modern is not None
    )


def _close(call: Call, modern: ModernGroup, group_id: str, member_id: str) -> None:
    """The final request: the session ends and what the member holds here goes back."""
    modern.sessions.pop((call.node.node_id, member_id), None)
    limit = delivery_limit(call, group_id)
    for key, share in modern.shares.items():
        log = _log(call, key)
        if log is not None and log.leader == call.node.node_id:
            share.release_member(member_id, limit)


def _log(call: Call, key: Key) -> PartitionLog | None:
    topic = call.state.topic_by_id(key[0])
    if topic is None or not 0 <= key[1] < len(topic.partitions):
        return None
    return topic.partitions[key[1]]


def _readable(call: Call, key: Key) -> bool:
    """Whether the principal may READ the partition's topic (apache/kafka ``KafkaApis``
    checks every partition of the share session, those of earlier requests too)."""
    topic = call.state.topic_by_id(key[0])
    return topic is not None and call.permits(Operation.READ, ResourceType.TOPIC, topic.name)


def _served(call: Call, key: Key, outcome: Outcome) -> tuple[PartitionLog | None, ErrorCode]:
    """The partition's log when this broker leads it and the principal may read it, else
    None and the error; the leader found is noted in ``outcome`` for the client."""
    log = _log(call, key)
    if log is None:
        return None, ErrorCode.UNKNOWN_TOPIC_ID
    if not _readable(call, key):
        return None, ErrorCode.TOPIC_AUTHORIZATION_FAILED
    outcome.leader = log.leader
    if log.leader != call.node.node_id:
        return None, ErrorCode.NOT_LEADER_OR_FOLLOWER
    return log, ErrorCode.NONE


def _share(
    call: Call, modern: ModernGroup, group_id: str, key: Key, log: PartitionLog
) -> SharePartition:
    share = modern.shares.get(key)
    if share is None:  # a partition the group's heartbeats have not initialized yet
        reset = group_setting(call.state, group_id, "share.auto.offset.reset", "latest")
        share = modern.shares[key] = SharePartition(
            initial_offset(call, log, reset), locks=call.state.alarm()
        )
    if share.start < log.log_start:
        share.move_start(log.log_start)
    return share


# --- acknowledging and acquiring ------------------------------------------------------------


def _acknowledge(
    call: Call,
    modern: ModernGroup,
    group_id: str,
    member_id: str,
    topics: Sequence[TopicIn],
    renew_allowed: bool,
    outcomes: dict[Key, Outcome],
) -> None:
    limit = delivery_limit(call, group_id)
    deadline = call.now + lock_duration_ms(call, group_id) / 1000.0
    for t in topics:
        for p in t.partitions:
            key = (t.topic_id, p.partition_index)
            outcome = outcomes.setdefault(key, Outcome())
            if not p.acknowledgement_batches:
                continue
            log, error = _served(call, key, outcome)
            if log is None:
                outcome.ack_error = error
                continue
            share = _share(call, modern, group_id, key, log)
            for batch in p.acknowledgement_batches:
                outcome.ack_error = (
                    _ack_batch(share, batch, member_id, limit, deadline, renew_allowed)
                    or outcome.ack_error
                )
            _arm(call, share, limit)


def _ack_batch(
    share: SharePartition,
    batch: AckBatchIn,
    member_id: str,
    limit: int,
    deadline: float,
    renew_allowed: bool,
) -> ErrorCode:
    first, last, kinds = batch.first_offset, batch.last_offset, batch.acknowledge_types
    if last < first or len(kinds) not in (1, last - first + 1):
        return ErrorCode.INVALID_REQUEST
    if last - first >= share.in_flight():  # at most what is in flight (bounds the work)
        return ErrorCode.INVALID_RECORD_STATE
    if any(k not in (0, 1, 2, 3, 4) or (k == RENEW and not renew_allowed) for k in kinds):
        return ErrorCode.INVALID_REQUEST
    if len(kinds) == 1:
        ok = share.acknowledge(first, last, kinds[0], member_id, limit, deadline)
        return ErrorCode.NONE if ok else ErrorCode.INVALID_RECORD_STATE
    code = ErrorCode.NONE
    for n, kind in enumerate(kinds):
        if not share.acknowledge(first + n, first + n, kind, member_id, limit, deadline):
            code = ErrorCode.INVALID_RECORD_STATE
    return code


def _acquire(
    call: Call,
    modern: ModernGroup,
    group_id: str,
    member_id: str,
    req: ShareFetchIn,
    partitions: list[Key],
    outcomes: dict[Key, Outcome],
) -> bool:
    """Acquire records of the session's partitions for ``member_id``; whether any were."""
    locks = call.limits.group_share_partition_max_record_locks
    limit = delivery_limit(call, group_id)
    deadline = call.now + lock_duration_ms(call, group_id) / 1000.0
    committed = (
        group_setting(call.state, group_id, "share.isolation.level", "read_uncommitted")
        == "read_committed"
    )
    budget = min(req.max_bytes, call.limits.fetch_max_bytes)
    wanted = max(req.max_records, 1)
    exact = req.share_acquire_mode == RECORD_LIMIT_MODE
    size = taken = 0
    for key in partitions:
        outcome = outcomes.setdefault(key, Outcome())
        log, error = _served(call, key, outcome)
        if log is None:
            outcome.error = error
            continue
        if taken >= wanted or size >= budget:
            continue
        share = _share(call, modern, group_id, key, log)
        upto = log.last_stable if committed else log.end
        data = bytearray()
        acquired: list[tuple[int, int]] = []
        for index in range(log._first_index(share.start), len(log.batches)):
            batch = log.batches[index]
            if batch.base_offset >= upto or taken >= wanted:
                break
            if data and size + len(data) + len(batch.data) > budget:
                break
            # at most max_record_locks offsets above the start offset are looked at
            window = range(
                max(batch.base_offset, share.start), min(batch.next_offset, share.start + locks)
            )
            offsets = [o for o in window if share.acquirable(o, locks)]
            if exact:
                offsets = offsets[: wanted - taken]
            if not offsets:
                continue
            acquired += [(o, share.acquire(o, member_id, deadline)) for o in offsets]
            taken += len(offsets)
            data += batch.data
        if acquired:
            size += len(data)
            outcome.records = bytes(data)
            outcome.acquired = tuple(ranges(acquired))
            _arm(call, share, limit)
    return taken > 0


def _arm(call: Call, share: SharePartition, limit: int) -> None:
    """Set the partition's lock timer for its earliest acquisition lock."""
    when = share.next_deadline()
    if when is None:
        share.locks.clear()
        return
    if share.locks.pending and share.locks.when <= when:
        return

    def expire() -> None:
        share.expire(clock.now(), limit)
        _arm(call, share, limit)

    share.locks.set(when, expire)


# --- answers --------------------------------------------------------------------------------


def _leader(call: Call, partition_class: type, outcome: Outcome) -> Any:
    cls = call.item(partition_class, "current_leader")
    return call.build(cls, leader_id=outcome.leader, leader_epoch=0 if outcome.leader >= 0 else -1)


def _endpoints(call: Call, outcomes: dict[Key, Outcome]) -> list[Any]:
    item = call.item(call.response, "node_endpoints")
    moved = {o.leader for o in outcomes.values() if o.error == ErrorCode.NOT_LEADER_OR_FOLLOWER}
    moved |= {
        o.leader for o in outcomes.values() if o.ack_error == ErrorCode.NOT_LEADER_OR_FOLLOWER
    }
    return [
        call.build(item, node_id=b.node_id, host=b.host, port=b.port, rack=None)
        for b in call.state.brokers
        if b.node_id in moved
    ]


def _fetch_response(call: Call, group_id: str, outcomes: dict[Key, Outcome]) -> Any:
    topic_class = call.item(call.response, "responses")
    partition_class = call.item(topic_class, "partitions")
    acquired_class = call.item(partition_class, "acquired_records")
    by_topic: dict[uuid.UUID, list[Any]] = {}
    for (topic_id, index), o in outcomes.items():
        by_topic.setdefault(topic_id, []).append(
            call.build(
                partition_class,
                partition_index=index,
                error_code=o.error,
                error_message=None,
                acknowledge_error_code=o.ack_error,
                acknowledge_error_message=None,
                current_leader=_leader(call, partition_class, o),
                records=o.records,
                acquired_records=[
                    call.build(acquired_class, first_offset=f, last_offset=l, delivery_count=c)
                    for f, l, c in o.acquired
                ],
            )
        )
    return call.respond(
        error_code=ErrorCode.NONE,
        error_message=None,
        acquisition_lock_timeout_ms=lock_duration_ms(call, group_id),
        responses=[call.build(topic_class, topic_id=t, partitions=p) for t, p in by_topic.items()],
        node_endpoints=_endpoints(call, outcomes),
    )


def _fetch_error(call: Call, refused: Refused) -> Any:
    return call.respond(
        error_code=refused.code,
        error_message=refused.message,
        acquisition_lock_timeout_ms=0,
        responses=[],
        node_endpoints=[],
    )


HANDLERS = (
    Handler(ApiKey.SHARE_FETCH, (1, 2), share_fetch, NAMES, ShareFetchIn),
    Handler(ApiKey.SHARE_ACKNOWLEDGE, (1, 2), share_acknowledge, NAMES, ShareAcknowledgeIn),
)
