"""Kafka's configs as DescribeConfigs shows them: every topic config with its default and its
broker-level synonym (apache/kafka ``LogConfig``, ``TopicConfig``, ``ServerLogConfigs``), the
broker configs clients and tools read (``KafkaConfig`` and the ``*Configs`` classes of the
server modules), and the group configs of KIP-848 and KIP-932 (``GroupConfig``), each for
the releases that have it.

The tables are literal data (Kafka's own defaults); ``lookup`` and ``validate`` are the
little logic around them.
"""

from __future__ import annotations

from dataclasses import dataclass

LONG_MAX = "9223372036854775807"

# config types (DescribeConfigs v3 ConfigType)
BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD = 1, 2, 3, 4, 5, 6, 7, 8, 9
# config sources (DescribeConfigs v1 ConfigSource)
DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG = 1, 2, 3
STATIC_BROKER_CONFIG, DEFAULT_CONFIG, DYNAMIC_BROKER_LOGGER_CONFIG = 4, 5, 6
CLIENT_METRICS_CONFIG, GROUP_CONFIG = 7, 8
# resource types (ConfigResource.Type)
TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32

Release = tuple[int, int]
ALWAYS: Release = (0, 0)
NEVER: Release = (99, 0)


@dataclass(frozen=True)
class Config:
    name: str
    default: str | None
    type: int
    synonym: str | None = None
    """A topic config's broker-level config (its server default), if it has one."""
    since: Release = ALWAYS
    until: Release = NEVER
    """The first release without it."""
    choices: tuple[str, ...] = ()
    sensitive: bool = False

    def in_release(self, release: Release) -> bool:
        return self.since <= release < self.until


def _c(
    name: str, default: str | None, kind: int, synonym: str | None = None, **kw: object
) -> Config:
    return Config(name, default, kind, synonym, **kw)  # type: ignore[arg-type]


TOPIC_CONFIGS: tuple[Config, ...] = (
    _c("cleanup.policy", "delete", LIST, "log.cleanup.policy", choices=("compact", "delete")),
    _c("compression.gzip.level", "-1", INT, "compression.gzip.level", since=(3, 8)),
    _c("compression.lz4.level", "9", INT, "compression.lz4.level", since=(3, 8)),
    _c(
        "compression.type",
        "producer",
        STRING,
        "compression.type",
        choices=("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
    ),
    _c("compression.zstd.level", "3", INT, "compression.zstd.level", since=(3, 8)),
    _c("delete.retention.ms", "86400000", LONG, "log.cleaner.delete.retention.ms"),
    _c("file.delete.delay.ms", "60000", LONG, "log.segment.delete.delay.ms"),
    _c("flush.messages", LONG_MAX, LONG, "log.flush.interval.messages"),
    _c("flush.ms", LONG_MAX, LONG, "log.flush.interval.ms"),
    _c("follower.replication.throttled.replicas", "", LIST),
    _c("index.interval.bytes", "4096", INT, "log.index.interval.bytes"),
    _c("leader.replication.throttled.replicas", "", LIST),
    _c("local.retention.bytes", "-2", LONG, "log.local.retention.bytes", since=(3, 6)),
    _c("local.retention.ms", "-2", LONG, "log.local.retention.ms", since=(3, 6)),
    _c("max.compaction.lag.ms", LONG_MAX, LONG, "log.cleaner.max.compaction.lag.ms"),
    _c("max.message.bytes", "1048588", INT, "message.max.bytes"),
    _c(
        "message.downconversion.enable",
        "true",
        BOOLEAN,
        "log.message.downconversion.enable",
        until=(4, 0),
    ),
    _c("message.format.version", "3.0-IV1", STRING, "log.message.format.version", until=(4, 0)),
    _c(
        "message.timestamp.after.max.ms",
        LONG_MAX,
        LONG,
        "log.message.timestamp.after.max.ms",
        since=(3, 6),
        until=(4, 0),
    ),
    _c(
        "message.timestamp.after.max.ms",
        "3600000",  # KIP-1030: one hour from Kafka 4.0
        LONG,
        "log.message.timestamp.after.max.ms",
        since=(4, 0),
    ),
    _c(
        "message.timestamp.before.max.ms",
        LONG_MAX,
        LONG,
        "log.message.timestamp.before.max.ms",
        since=(3, 6),
    ),
    _c(
        "message.timestamp.difference.max.ms",
        LONG_MAX,
        LONG,
        "log.message.timestamp.difference.max.ms",
        until=(4, 0),
    ),
    _c(
        "message.timestamp.type",
        "CreateTime",
        STRING,
        "log.message.timestamp.type",
        choices=("CreateTime", "LogAppendTime"),
    ),
    _c("min.cleanable.dirty.ratio", "0.5", DOUBLE, "log.cleaner.min.cleanable.ratio"),
    _c("min.compaction.lag.ms", "0", LONG, "log.cleaner.min.compaction.lag.ms"),
    _c("min.insync.replicas", "1", INT, "min.insync.replicas"),
    _c("preallocate", "false", BOOLEAN, "log.preallocate"),
    _c("remote.log.copy.disable", "false", BOOLEAN, since=(3, 9)),
    _c("remote.log.delete.on.disable", "false", BOOLEAN, since=(3, 9)),
    _c("remote.storage.enable", "false", BOOLEAN, since=(3, 6)),
    _c("retention.bytes", "-1", LONG, "log.retention.bytes"),
    _c("retention.ms", "604800000", LONG, "log.retention.ms"),
    _c("segment.bytes", "1073741824", INT, "log.segment.bytes"),
    _c("segment.index.bytes", "10485760", INT, "log.index.size.max.bytes"),
    _c("segment.jitter.ms", "0", LONG, "log.roll.jitter.ms"),
    _c("segment.ms", "604800000", LONG, "log.roll.ms"),
    _c("unclean.leader.election.enable", "false", BOOLEAN, "unclean.leader.election.enable"),
)

#: Broker configs (a broker started with no server.properties overrides): the server
#: defaults of every topic config, and the settings clients and tools look at.
BROKER_CONFIGS: tuple[Config, ...] = (
    _c("advertised.listeners", None, STRING),
    _c("auto.create.topics.enable", "true", BOOLEAN),
    _c("auto.leader.rebalance.enable", "true", BOOLEAN),
    _c("background.threads", "10", INT),
    _c("broker.id", "-1", INT),
    _c("broker.rack", None, STRING),
    _c("compression.gzip.level", "-1", INT, since=(3, 8)),
    _c("compression.lz4.level", "9", INT, since=(3, 8)),
    _c("compression.type", "producer", STRING),
    _c("compression.zstd.level", "3", INT, since=(3, 8)),
    _c("connections.max.idle.ms", "600000", LONG),
    _c("controlled.shutdown.enable", "true", BOOLEAN),
    _c("default.replication.factor", "1", INT),
    _c("delete.records.purgatory.purge.interval.requests", "1", INT),
    _c("delete.topic.enable", "true", BOOLEAN),
    _c("fetch.max.bytes", "57671680", INT),
    _c("group.consumer.assignors", "uniform,range", LIST, since=(3, 7)),
    _c("group.consumer.heartbeat.interval.ms", "5000", INT, since=(3, 7)),
    _c("group.consumer.max.size", "2147483647", INT, since=(3, 7)),
    _c("group.consumer.session.timeout.ms", "45000", INT, since=(3, 7)),
    _c("group.coordinator.rebalance.protocols", "classic", LIST, since=(3, 7), until=(4, 0)),
    _c("group.coordinator.rebalance.protocols", "classic,consumer,streams", LIST, since=(4, 0)),
    _c("group.initial.rebalance.delay.ms", "3000", INT),
    _c("group.max.session.timeout.ms", "1800000", INT),
    _c("group.max.size", "2147483647", INT),
    _c("group.min.session.timeout.ms", "6000", INT),
    _c("group.share.delivery.count.limit", "5", INT, since=(4, 0)),
    _c("group.share.heartbeat.interval.ms", "5000", INT, since=(4, 0)),
    _c("group.share.partition.max.record.locks", "2000", INT, since=(4, 0)),
    _c("group.share.record.lock.duration.ms", "30000", INT, since=(4, 0)),
    _c("group.share.session.timeout.ms", "45000", INT, since=(4, 0)),
    _c("leader.imbalance.check.interval.seconds", "300", LONG),
    _c("listeners", "PLAINTEXT://:9092", STRING),
    _c("log.cleaner.delete.retention.ms", "86400000", LONG),
    _c("log.cleaner.enable", "true", BOOLEAN),
    _c("log.cleaner.max.compaction.lag.ms", LONG_MAX, LONG),
    _c("log.cleaner.min.cleanable.ratio", "0.5", DOUBLE),
    _c("log.cleaner.min.compaction.lag.ms", "0", LONG),
    _c("log.cleaner.threads", "1", INT),
    _c("log.cleanup.policy", "delete", LIST),
    _c("log.dir", "/tmp/kafka-logs", STRING),
    _c("log.dirs", None, STRING),
    _c("log.flush.interval.messages", LONG_MAX, LONG),
    _c("log.flush.interval.ms", None, LONG),
    _c("log.flush.scheduler.interval.ms", LONG_MAX, LONG),
    _c("log.index.interval.bytes", "4096", INT),
    _c("log.index.size.max.bytes", "10485760", INT),
    _c("log.local.retention.bytes", "-2", LONG, since=(3, 6)),
    _c("log.local.retention.ms", "-2", LONG, since=(3, 6)),
    _c("log.message.downconversion.enable", "true", BOOLEAN, until=(4, 0)),
    _c("log.message.format.version", "3.0-IV1", STRING, until=(4, 0)),
    _c("log.message.timestamp.after.max.ms", LONG_MAX, LONG, since=(3, 6), until=(4, 0)),
    _c("log.message.timestamp.after.max.ms", "3600000", LONG, since=(4, 0)),
    _c("log.message.timestamp.before.max.ms", LONG_MAX, LONG, since=(3, 6)),
    _c("log.message.timestamp.difference.max.ms", LONG_MAX, LONG, until=(4, 0)),
    _c("log.message.timestamp.type", "CreateTime", STRING),
    _c("log.preallocate", "false", BOOLEAN),
    _c("log.retention.bytes", "-1", LONG),
    _c("log.retention.check.interval.ms", "300000", LONG),
    _c("log.retention.hours", "168", INT),
    _c("log.retention.minutes", None, INT),
    _c("log.retention.ms", None, LONG),
    _c("log.roll.hours", "168", INT),
    _c("log.roll.jitter.hours", "0", INT),
    _c("log.roll.jitter.ms", None, LONG),
    _c("log.roll.ms", None, LONG),
    _c("log.segment.bytes", "1073741824", INT),
    _c("log.segment.delete.delay.ms", "60000", LONG),
    _c("max.connections", "2147483647", INT),
    _c("max.connections.per.ip", "2147483647", INT),
    _c("message.max.bytes", "1048588", INT),
    _c("min.insync.replicas", "1", INT),
    _c("num.io.threads", "8", INT),
    _c("num.network.threads", "3", INT),
    _c("num.partitions", "1", INT),
    _c("num.recovery.threads.per.data.dir", "2", INT, since=(4, 0)),
    _c("num.recovery.threads.per.data.dir", "1", INT, until=(4, 0)),
    _c("offsets.commit.timeout.ms", "5000", INT),
    _c("offsets.retention.minutes", "10080", INT),
    _c("offsets.topic.num.partitions", "50", INT),
    _c("offsets.topic.replication.factor", "3", SHORT),
    _c("process.roles", "broker,controller", LIST, since=(2, 8)),
    _c("queued.max.requests", "500", INT),
    _c("replica.fetch.max.bytes", "1048576", INT),
    _c("replica.lag.time.max.ms", "30000", LONG),
    _c("request.timeout.ms", "30000", INT),
    _c("share.coordinator.state.topic.num.partitions", "50", INT, since=(4, 0)),
    _c("socket.receive.buffer.bytes", "102400", INT),
    _c("socket.request.max.bytes", "104857600", INT),
    _c("socket.send.buffer.bytes", "102400", INT),
    _c("transaction.max.timeout.ms", "900000", INT),
    _c("transaction.state.log.num.partitions", "50", INT),
    _c("transaction.state.log.replication.factor", "3", SHORT),
    _c("transactional.id.expiration.ms", "604800000", INT),
    _c("unclean.leader.election.enable", "false", BOOLEAN),
    _c("unstable.api.versions.enable", "false", BOOLEAN),
)

#: Group configs (KIP-848 and KIP-932 dynamic group configs, apache/kafka ``GroupConfig``):
#: their defaults are the broker's group.* configs.
GROUP_CONFIGS: tuple[Config, ...] = (
    _c(
        "consumer.heartbeat.interval.ms",
        "5000",
        INT,
        "group.consumer.heartbeat.interval.ms",
        since=(4, 0),
    ),
    _c(
        "consumer.session.timeout.ms",
        "45000",
        INT,
        "group.consumer.session.timeout.ms",
        since=(4, 0),
    ),
    _c(
        "share.auto.offset.reset",
        "latest",
        STRING,
        since=(4, 0),
        choices=("latest", "earliest", "by_duration"),
    ),
    _c("share.delivery.count.limit", "5", INT, "group.share.delivery.count.limit", since=(4, 2)),
    _c(
        "share.heartbeat.interval.ms",
        "5000",
        INT,
        "group.share.heartbeat.interval.ms",
        since=(4, 0),
    ),
    _c(
        "share.isolation.level",
        "read_uncommitted",
        STRING,
        since=(4, 1),
        choices=("read_committed", "read_uncommitted"),
    ),
    _c(
        "share.record.lock.duration.ms",
        "30000",
        INT,
        "group.share.record.lock.duration.ms",
        since=(4, 0),
    ),
    _c("share.session.timeout.ms", "45000", INT, "group.share.session.timeout.ms", since=(4, 0)),
)

#: Topic configs whose server default a broker's limit sets (the fake cluster's own values)
LIMIT_CONFIGS = {
    "message.max.bytes": "message_max_bytes",
    "socket.request.max.bytes": "socket_request_max_bytes",
    "fetch.max.bytes": "fetch_max_bytes",
    "connections.max.idle.ms": "connections_max_idle_ms",
    "group.initial.rebalance.delay.ms": "group_initial_rebalance_delay_ms",
    "group.consumer.heartbeat.interval.ms": "group_consumer_heartbeat_interval_ms",
    "group.consumer.session.timeout.ms": "group_consumer_session_timeout_ms",
    "group.share.heartbeat.interval.ms": "group_share_heartbeat_interval_ms",
    "group.share.session.timeout.ms": "group_share_session_timeout_ms",
    "group.share.record.lock.duration.ms": "group_share_record_lock_duration_ms",
    "group.share.delivery.count.limit": "group_share_delivery_count_limit",
    "group.share.partition.max.record.locks": "group_share_partition_max_record_locks",
    "log.retention.check.interval.ms": "log_retention_check_interval_ms",
}


def release_of(name: str | None) -> Release:
    """``"3.9.0"`` -> (3, 9); no release: the newest."""
    if not name:
        return (98, 0)
    parts = name.split(".")
    try:
        return int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    except ValueError:
        return (98, 0)


def table(resource_type: int, release: Release) -> dict[str, Config]:
    """The configs of a resource type in a release, by name."""
    configs = {TOPIC: TOPIC_CONFIGS, BROKER: BROKER_CONFIGS, GROUP: GROUP_CONFIGS}.get(
        resource_type, ()
    )
    return {c.name: c for c in configs if c.in_release(release)}


def validate(config: Config, value: str | None) -> str | None:
    """Why ``value`` is not valid for ``config`` (Kafka's ``ConfigDef`` parsing and its
    validators, roughly: the type, and the choices of an enumerated one), else None."""
    if value is None:
        return None
    try:
        if config.type in (INT, SHORT, LONG):
            int(value.strip())
        elif config.type == DOUBLE:
            float(value.strip())
        elif config.type == BOOLEAN and value.strip().lower() not in ("true", "false"):
            raise ValueError
    except ValueError:
        kind = {INT: "int", SHORT: "short", LONG: "long", DOUBLE: "double", BOOLEAN: "boolean"}
        return (
            f"Invalid value {value} for configuration {config.name}: Expected value to be a "
            f"{kind.get(config.type, 'value')}"
        )
    if config.choices:
        items = [v.strip() for v in value.split(",")] if config.type == LIST else [value]
        for item in items:
            if item not in config.choices and item.lower() not in config.choices:
                return (
                    f"Invalid value {value} for configuration {config.name}: String must be "
                    f"one of: {', '.join(config.choices)}"
                )
    return None
