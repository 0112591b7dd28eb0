"""The partition admin APIs: CreatePartitions, ElectLeaders, AlterPartitionReassignments,
ListPartitionReassignments and DescribeTopicPartitions (KIP-966), as Kafka's controller
answers them (apache/kafka ``ReplicationControlManager``).

Every partition has one replica here, its leader: an election is never needed, and a
reassignment completes at once, moving the partition to the first replica it names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..api_keys import ApiKey
from .call import Call
from .errors import ErrorCode
from .handler import Handler
from .log import PartitionLog
from .shapes import PLAIN, Names
from .topics import TOO_MANY_PARTITIONS

PREFERRED, UNCLEAN = 0, 1
#: ElectLeaders v1 on carries an election type and a top-level error
TYPED_ELECTION_VERSION = 1
#: the most partitions DescribeTopicPartitions answers at once (max.request.partition.size.limit)
PARTITION_LIMIT = 2000
#: AclOperation bits of a topic nothing is denied on: READ, WRITE, CREATE, DELETE, ALTER,
#: DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS
TOPIC_OPERATIONS = sum(1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11))

ELECT_NAMES = Names(renamed={"partitions": ("partition_id",)}, absent={"election_type": PREFERRED})
REASSIGN_NAMES = Names(absent={"allow_replication_factor_change": True})


# --- CreatePartitions -----------------------------------------------------------------------


class AssignmentIn(Protocol):
    broker_ids: Sequence[int]


class CreatePartitionsTopicIn(Protocol):
    name: str
    count: int
    assignments: Sequence[AssignmentIn] | None


class CreatePartitionsIn(Protocol):
    topics: Sequence[CreatePartitionsTopicIn]
    validate_only: bool


def create_partitions(call: Call) -> Any:
    req: CreatePartitionsIn = call.read(CreatePartitionsIn)
    item = call.item(call.response, "results")
    names = [t.name for t in req.topics]
    budget = call.limits.max_partitions_per_request
    results = []
    for t in req.topics:
        code, message = _grow(call, t, names.count(t.name) > 1, budget, req.validate_only)
        topic = call.state.topics.get(t.name)
        if code == ErrorCode.NONE and topic is not None:
            budget -= max(t.count - len(topic.partitions), 0)
        results.append(call.build(item, name=t.name, error_code=code, error_message=message))
    return call.respond(results=results)


def _grow(
    call: Call, t: CreatePartitionsTopicIn, duplicate: bool, budget: int, validate_only: bool
) -> tuple[ErrorCode, str | None]:
    brokers = [b.node_id for b in call.state.brokers]
    topic = call.state.topics.get(t.name)
    if duplicate:
        return ErrorCode.INVALID_REQUEST, "Duplicate topic name."
    if topic is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{t.name}' does not exist."
    have = len(topic.partitions)
    if t.count < have:
        return (
            ErrorCode.INVALID_PARTITIONS,
            f"The topic {t.name} currently has {have} partition(s); {t.count} would not be an "
            "increase.",
        )
    if t.count == have:
        return ErrorCode.INVALID_PARTITIONS, f"Topic already has {have} partition(s)."
    added = t.count - have
    if added > budget:
        return ErrorCode.POLICY_VIOLATION, TOO_MANY_PARTITIONS
    leaders = [(have + n) % len(brokers) for n in range(added)]
    if t.assignments is not None:
        if len(t.assignments) != added:
            return (
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"Attempted to add {added} additional partition(s), but only "
                f"{len(t.assignments)} assignment(s) were specified.",
            )
        for a in t.assignments:
            unknown = [b for b in a.broker_ids if b not in brokers]
            if unknown or not a.broker_ids or len(set(a.broker_ids)) != len(a.broker_ids):
                return (
                    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    f"The manual partition assignment includes broker(s) that are not "
                    f"registered or duplicates: {list(a.broker_ids)}",
                )
        leaders = [a.broker_ids[0] for a in t.assignments]
    if not validate_only:
        topic.partitions += [PartitionLog(leader=leader) for leader in leaders]
    return ErrorCode.NONE, None


# --- ElectLeaders ---------------------------------------------------------------------------


class ElectTopicIn(Protocol):
    topic: str
    partitions: Sequence[int]


class ElectLeadersIn(Protocol):
    election_type: int
    topic_partitions: Sequence[ElectTopicIn] | None


def elect_leaders(call: Call) -> Any:
    """Each partition's one replica leads already: ELECTION_NOT_NEEDED (a request for every
    partition lists none, as Kafka lists only the partitions it elected)."""
    req: ElectLeadersIn = call.read(ElectLeadersIn)
    topic_class = call.item(call.response, "replica_election_results")
    partition_class = call.item(topic_class, "partition_result")
    results = []
    if req.election_type not in (PREFERRED, UNCLEAN):
        return call.respond(error_code=ErrorCode.INVALID_REQUEST, replica_election_results=[])
    for t in req.topic_partitions or ():
        topic = call.state.topics.get(t.topic)
        partitions = []
        for index in t.partitions:
            if topic is None or not 0 <= index < len(topic.partitions):
                code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                message = "The partition does not exist."
            else:
                code, message = (
                    ErrorCode.ELECTION_NOT_NEEDED,
                    "Leader election not needed for topic partition.",
                )
            partitions.append(
                call.build(
                    partition_class, partition_id=index, error_code=code, error_message=message
                )
            )
        results.append(call.build(topic_class, topic=t.topic, partition_result=partitions))
    return call.respond(error_code=ErrorCode.NONE, replica_election_results=results)


# --- partition reassignments ----------------------------------------------------------------


class ReassignPartitionIn(Protocol):
    partition_index: int
    replicas: Sequence[int] | None


class ReassignTopicIn(Protocol):
    name: str
    partitions: Sequence[ReassignPartitionIn]


class AlterReassignmentsIn(Protocol):
    allow_replication_factor_change: bool
    topics: Sequence[ReassignTopicIn]


def alter_reassignments(call: Call) -> Any:
    req: AlterReassignmentsIn = call.read(AlterReassignmentsIn)
    topic_class = call.item(call.response, "responses")
    partition_class = call.item(topic_class, "partitions")
    brokers = {b.node_id for b in call.state.brokers}
    answered = []
    for t in req.topics:
        topic = call.state.topics.get(t.name)
        partitions = []
        for p in t.partitions:
            code, message = ErrorCode.NONE, None
            if topic is None or not 0 <= p.partition_index < len(topic.partitions):
                code, message = (
                    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                    "The partition does not exist.",
                )
            elif p.replicas is None:
                code = ErrorCode.NO_REASSIGNMENT_IN_PROGRESS
                message = "No ongoing reassignment for this partition."
            elif not p.replicas or len(set(p.replicas)) != len(p.replicas):
                code = ErrorCode.INVALID_REPLICA_ASSIGNMENT
                message = "The manual partition assignment includes an empty or duplicate replica."
            elif any(b not in brokers for b in p.replicas):
                code = ErrorCode.INVALID_REPLICA_ASSIGNMENT
                message = f"The manual partition assignment includes broker(s) that are not registered: {list(p.replicas)}"
            elif len(p.replicas) != 1 and not req.allow_replication_factor_change:
                code = ErrorCode.INVALID_REPLICATION_FACTOR
                message = f"The replication factor is changed from 1 to {len(p.replicas)}"
            else:
                topic.partitions[p.partition_index].leader = p.replicas[0]
            partitions.append(
                call.build(
                    partition_class,
                    partition_index=p.partition_index,
                    error_code=code,
                    error_message=message,
                )
            )
        answered.append(call.build(topic_class, name=t.name, partitions=partitions))
    return call.respond(
        allow_replication_factor_change=req.allow_replication_factor_change,
        error_code=ErrorCode.NONE,
        error_message=None,
        responses=answered,
    )


def list_reassignments(call: Call) -> Any:
    """Reassignments complete at once here: none is ever in progress."""
    return call.respond(error_code=ErrorCode.NONE, error_message=None, topics=[])


# --- DescribeTopicPartitions ----------------------------------------------------------------


class CursorIn(Protocol):
    topic_name: str
    partition_index: int


class DescribeTopicIn(Protocol):
    name: str


class DescribeTopicPartitionsIn(Protocol):
    topics: Sequence[DescribeTopicIn]
    response_partition_limit: int
    cursor: CursorIn | None


def describe_topic_partitions(call: Call) -> Any:
    """Topics by name order, partitions from the cursor on, at most the limit (and
    PARTITION_LIMIT) of them; a next cursor where it stopped (apache/kafka
    ``DescribeTopicPartitionsRequestHandler``)."""
    req: DescribeTopicPartitionsIn = call.read(DescribeTopicPartitionsIn)
    topic_class = call.item(call.response, "topics")
    partition_class = call.item(topic_class, "partitions")
    cursor_class = call.item(call.response, "next_cursor")
    state = call.state
    names = sorted({t.name for t in req.topics}) if req.topics else sorted(state.topics)
    start_topic, start_index = "", 0
    if req.cursor is not None:
        start_topic, start_index = req.cursor.topic_name, req.cursor.partition_index
        if req.topics and start_topic not in names:
            return call.respond(topics=[], next_cursor=None)
    left = min(max(req.response_partition_limit, 1), PARTITION_LIMIT)
    described, cursor = [], None
    for name in names:
        if name < start_topic:
            continue
        topic = state.topics.get(name)
        if topic is None:
            described.append(
                call.build(topic_class, error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name=name)
            )
            continue
        first = start_index if name == start_topic else 0
        if left <= 0:
            cursor = call.build(cursor_class, topic_name=name, partition_index=first)
            break
        indexes = list(range(first, len(topic.partitions)))
        if len(indexes) > left:
            cursor = call.build(cursor_class, topic_name=name, partition_index=first + left)
            indexes = indexes[:left]
        left -= len(indexes)
        partitions = [
            call.build(
                partition_class,
                error_code=ErrorCode.NONE,
                partition_index=i,
                leader_id=topic.partitions[i].leader,
                leader_epoch=0,
                replica_nodes=[topic.partitions[i].leader],
                isr_nodes=[topic.partitions[i].leader],
                eligible_leader_replicas=None,
                last_known_elr=None,
                offline_replicas=[],
            )
            for i in indexes
        ]
        described.append(
            call.build(
                topic_class,
                error_code=ErrorCode.NONE,
                name=name,
                topic_id=topic.topic_id,
                is_internal=False,
                partitions=partitions,
                topic_authorized_operations=TOPIC_OPERATIONS,
            )
        )
        if cursor is not None:
            break
    return call.respond(topics=described, next_cursor=cursor)


HANDLERS = (
    Handler(ApiKey.CREATE_PARTITIONS, (0, 3), create_partitions, PLAIN, CreatePartitionsIn),
    Handler(ApiKey.ELECT_LEADERS, (0, 2), elect_leaders, ELECT_NAMES, ElectLeadersIn),
    Handler(
        ApiKey.ALTER_PARTITION_REASSIGNMENTS,
        (0, 1),
        alter_reassignments,
        REASSIGN_NAMES,
        AlterReassignmentsIn,
    ),
    Handler(ApiKey.LIST_PARTITION_REASSIGNMENTS, (0, 0), list_reassignments),
    Handler(
        ApiKey.DESCRIBE_TOPIC_PARTITIONS,
        (0, 0),
        describe_topic_partitions,
        PLAIN,
        DescribeTopicPartitionsIn,
    ),
)
