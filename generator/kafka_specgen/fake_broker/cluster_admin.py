"""What admin clients ask a broker about itself: DescribeLogDirs and AlterReplicaLogDirs
(one log directory per broker, holding the partitions it leads) and DescribeQuorum (KRaft:
the metadata quorum, the first broker its one voter, as in a combined-mode cluster)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, Protocol

from . import clock
from ..api_keys import ApiKey
from .call import Call
from .errors import ErrorCode
from .handler import Handler
from .shapes import PLAIN, Names

#: the log directory every fake broker reports (Kafka's default log.dirs)
LOG_DIR = "/tmp/kafka-logs"
METADATA_TOPIC = "__cluster_metadata"
LOG_DIRS_NAMES = Names(
    renamed={"partitions": ("partition_index",)},  # the request's name until Kafka 2.8
    absent={"total_bytes": -1, "usable_bytes": -1, "is_cordoned": False, "error_code": 0},
)
QUORUM_NAMES = Names(
    absent={
        "error_message": None,
        "nodes": (),
        "replica_directory_id": uuid.UUID(int=0),
        "last_fetch_timestamp": -1,
        "last_caught_up_timestamp": -1,
    }
)


class LogDirTopicIn(Protocol):
    topic: str
    partitions: Sequence[int]


class DescribeLogDirsIn(Protocol):
    topics: Sequence[LogDirTopicIn] | None


def describe_log_dirs(call: Call) -> Any:
    """This broker's one log directory and the partitions it leads (all, or those asked
    for), with their sizes."""
    req: DescribeLogDirsIn = call.read(DescribeLogDirsIn)
    result_class = call.item(call.response, "results")
    topic_class = call.item(result_class, "topics")
    partition_class = call.item(topic_class, "partitions")
    me = call.node.node_id
    wanted: dict[str, set[int] | None] = {}
    if req.topics is None:
        wanted = {name: None for name in call.state.topics}
    else:
        for t in req.topics:
            wanted.setdefault(t.topic, set()).update(t.partitions)  # type: ignore[union-attr]
    topics = []
    used = 0
    for name, indexes in sorted(wanted.items()):
        topic = call.state.topics.get(name)
        if topic is None:
            continue
        partitions = []
        for index, log in enumerate(topic.partitions):
            if log.leader != me or (indexes is not None and index not in indexes):
                continue
            used += log.size
            partitions.append(
                call.build(
                    partition_class,
                    partition_index=index,
                    partition_size=log.size,
                    offset_lag=0,
                    is_future_key=False,
                )
            )
        if partitions:
            topics.append(call.build(topic_class, name=name, partitions=partitions))
    result = call.build(
        result_class,
        error_code=ErrorCode.NONE,
        log_dir=LOG_DIR,
        topics=topics,
        total_bytes=-1,
        usable_bytes=-1,
        is_cordoned=False,
    )
    return call.respond(error_code=ErrorCode.NONE, results=[result])


class AlterDirTopicIn(Protocol):
    name: str
    partitions: Sequence[int]


class AlterDirIn(Protocol):
    path: str
    topics: Sequence[AlterDirTopicIn]


class AlterReplicaLogDirsIn(Protocol):
    dirs: Sequence[AlterDirIn]


def alter_replica_log_dirs(call: Call) -> Any:
    """Moving a replica to the one directory it is in already succeeds; any other path is
    LOG_DIR_NOT_FOUND (apache/kafka ``ReplicaManager.alterReplicaLogDirs``)."""
    req: AlterReplicaLogDirsIn = call.read(AlterReplicaLogDirsIn)
    topic_class = call.item(call.response, "results")
    partition_class = call.item(topic_class, "partitions")
    me = call.node.node_id
    results = []
    for d in req.dirs:
        for t in d.topics:
            topic = call.state.topics.get(t.name)
            partitions = []
            for index in t.partitions:
                if d.path != LOG_DIR:
                    code = ErrorCode.LOG_DIR_NOT_FOUND
                elif topic is None or not 0 <= index < len(topic.partitions):
                    code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                elif topic.partitions[index].leader != me:
                    code = ErrorCode.NOT_LEADER_OR_FOLLOWER
                else:
                    code = ErrorCode.NONE
                partitions.append(
                    call.build(partition_class, partition_index=index, error_code=code)
                )
            results.append(call.build(topic_class, topic_name=t.name, partitions=partitions))
    return call.respond(results=results)


class QuorumPartitionIn(Protocol):
    partition_index: int


class QuorumTopicIn(Protocol):
    topic_name: str
    partitions: Sequence[QuorumPartitionIn]


class DescribeQuorumIn(Protocol):
    topics: Sequence[QuorumTopicIn]


def describe_quorum(call: Call) -> Any:
    """The metadata quorum: the first broker leads it and is its one voter, the others
    observe; its high watermark counts the cluster's topics and partitions."""
    req: DescribeQuorumIn = call.read(DescribeQuorumIn)
    topic_class = call.item(call.response, "topics")
    partition_class = call.item(topic_class, "partitions")
    state_class = call.item(partition_class, "current_voters")
    state = call.state
    leader = state.brokers[0]
    end = 1 + sum(1 + len(t.partitions) for t in state.topics.values())
    now_ms = clock.wall_ms()

    def replica(node_id: int) -> Any:
        return call.build(
            state_class,
            replica_id=node_id,
            replica_directory_id=uuid.UUID(int=node_id + 1),
            log_end_offset=end,
            last_fetch_timestamp=now_ms,
            last_caught_up_timestamp=now_ms,
        )

    topics = []
    for t in req.topics:
        partitions = []
        for p in t.partitions:
            if t.topic_name != METADATA_TOPIC or p.partition_index != 0:
                partitions.append(
                    call.build(
                        partition_class,
                        partition_index=p.partition_index,
                        error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                        error_message="The topic or partition is not the metadata log.",
                    )
                )
                continue
            partitions.append(
                call.build(
                    partition_class,
                    partition_index=0,
                    error_code=ErrorCode.NONE,
                    error_message=None,
                    leader_id=leader.node_id,
                    leader_epoch=1,
                    high_watermark=end,
                    current_voters=[replica(leader.node_id)],
                    observers=[replica(b.node_id) for b in state.brokers[1:]],
                )
            )
        topics.append(call.build(topic_class, topic_name=t.topic_name, partitions=partitions))
    nodes = []
    if call.has(call.response, "nodes"):  # v2 (Kafka 3.9)
        node_class = call.item(call.response, "nodes")
        listener_class = call.item(node_class, "listeners")
        nodes = [
            call.build(
                node_class,
                node_id=leader.node_id,
                listeners=[
                    call.build(
                        listener_class, name="CONTROLLER", host=leader.host, port=leader.port
                    )
                ],
            )
        ]
    return call.respond(error_code=ErrorCode.NONE, error_message=None, topics=topics, nodes=nodes)


HANDLERS = (
    Handler(ApiKey.DESCRIBE_LOG_DIRS, (0, 5), describe_log_dirs, LOG_DIRS_NAMES, DescribeLogDirsIn),
    Handler(
        ApiKey.ALTER_REPLICA_LOG_DIRS, (0, 2), alter_replica_log_dirs, PLAIN, AlterReplicaLogDirsIn
    ),
    Handler(ApiKey.DESCRIBE_QUORUM, (0, 2), describe_quorum, QUORUM_NAMES, DescribeQuorumIn),
)
