"""The sizes and counts the fake broker caps, at Kafka's defaults, the group coordinator's
and the log's settings, and their options.

Each is a keyword argument of ``FakeCluster`` and an option of ``kafka-specgen fake-broker``
(the field name with dashes); the help texts below are the command's.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

MIB = 1 << 20


def _limit(default: int, text: str, minimum: int = 1) -> Any:
    return field(default=default, metadata={"help": text, "minimum": minimum})


@dataclass(frozen=True)
class Limits:
    socket_request_max_bytes: int = _limit(
        100 * MIB,
        "the largest request frame; a bigger size prefix closes the connection "
        "(Kafka's socket.request.max.bytes; default 104857600)",
    )
    message_max_bytes: int = _limit(
        MIB + 12,
        "the largest record batch a producer may send, MESSAGE_TOO_LARGE above it; a topic's "
        "max.message.bytes config overrides it (Kafka's message.max.bytes; default 1048588)",
    )
    fetch_max_bytes: int = _limit(
        55 * MIB,
        "the most record bytes one Fetch response carries, whatever the client asks "
        "(Kafka's fetch.max.bytes; default 57671680)",
    )
    max_decompressed_bytes: int = _limit(
        4 * MIB,
        "the most bytes the records of one Produce request may decompress to: old message "
        "sets (magic 0 and 1) are decompressed to be converted, a few microseconds per "
        "record on the broker's one thread; more is refused with INVALID_RECORD (the fake "
        "broker's own guard against compression bombs; default 4194304)",
    )
    max_partitions_per_request: int = _limit(
        10_000,
        "the most partitions one CreateTopics request may create; more fails every topic of "
        "it with POLICY_VIOLATION (Kafka's QuorumController.MAX_RECORDS_PER_USER_OP; "
        "default 10000)",
    )
    connections_max_idle_ms: int = _limit(
        600_000,
        "close a connection that sent and received nothing for this long "
        "(Kafka's connections.max.idle.ms; default 600000)",
    )
    idempotence_window: int = _limit(
        5,
        "the batches an idempotent producer may retry per partition: a retry of one of its "
        "last N batches is acknowledged with the offset it got "
        "(Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN; default 5)",
    )

    # --- the group coordinator's and the log's settings (Kafka's names, fake defaults) -----
    group_initial_rebalance_delay_ms: int = _limit(
        100,
        "how long the first rebalance of an empty classic group waits for more members "
        "(Kafka's group.initial.rebalance.delay.ms, 3000 there; default 100 here, for tests)",
        minimum=0,
    )
    group_consumer_heartbeat_interval_ms: int = _limit(
        5000,
        "the heartbeat interval consumer group members (KIP-848) are told to keep "
        "(Kafka's group.consumer.heartbeat.interval.ms; default 5000)",
    )
    group_consumer_session_timeout_ms: int = _limit(
        45000,
        "a consumer group member (KIP-848) that does not heartbeat for this long is removed "
        "(Kafka's group.consumer.session.timeout.ms; default 45000)",
    )
    group_share_heartbeat_interval_ms: int = _limit(
        5000,
        "the heartbeat interval share group members (KIP-932) are told to keep "
        "(Kafka's group.share.heartbeat.interval.ms; default 5000)",
    )
    group_share_session_timeout_ms: int = _limit(
        45000,
        "a share group member that does not heartbeat for this long is removed "
        "(Kafka's group.share.session.timeout.ms; default 45000)",
    )
    group_share_record_lock_duration_ms: int = _limit(
        30000,
        "how long a share group member holds the records it was given before they go to "
        "others (Kafka's group.share.record.lock.duration.ms; default 30000)",
    )
    group_share_delivery_count_limit: int = _limit(
        5,
        "deliveries of a record to share group members before it is archived "
        "(Kafka's group.share.delivery.count.limit; default 5)",
    )
    group_share_partition_max_record_locks: int = _limit(
        2000,
        "records of one partition that a share group may hold at once "
        "(Kafka's group.share.partition.max.record.locks; default 2000)",
    )
    log_retention_check_interval_ms: int = _limit(
        300000,
        "how often topics' retention.ms and retention.bytes are applied "
        "(Kafka's log.retention.check.interval.ms; default 300000)",
    )
    handshake_timeout_ms: int = _limit(
        10_000,
        "close a connection whose TLS handshake and SASL authentication have not finished "
        "this long after it was accepted (the fake broker's own guard; default 10000)",
    )

    def with_values(self, values: dict[str, int]) -> Limits:
        """These limits with ``values`` (field names) changed; ``ValueError`` for an unknown
        name or a value below the field's minimum (1, or 0 where 0 means "none")."""
        known = {f.name: int(f.metadata["minimum"]) for f in fields(self)}
        for name, value in values.items():
            if name not in known:
                raise ValueError(f"no limit {name!r}: the limits are {', '.join(sorted(known))}")
            least = known[name]
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(
                    f"{name} must be a whole number of at least {least}, not {value!r}"
                )
        return replace(self, **values)


def options() -> list[tuple[str, str, int]]:
    """(field name, help text, default) of every limit, for the command's options."""
    defaults = Limits()
    return [(f.name, str(f.metadata["help"]), getattr(defaults, f.name)) for f in fields(Limits)]


def minimum(name: str) -> int:
    """The least value the limit ``name`` takes."""
    return next(int(f.metadata["minimum"]) for f in fields(Limits) if f.name == name)
