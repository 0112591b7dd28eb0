# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""Reading responses per partition: errors with their ``ErrorCode``, and the records of a
Fetch answer. Field names differ between spec releases (``partition_responses`` or
``partitions``, ``topic`` or ``name``, ``records`` or ``record_set``): both are read."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any
from uuid import UUID

from .. import records as _records
from ..error_codes import ErrorCode, error_code

TOPIC_NAME = ("name", "topic", "topic_name")
PARTITION_INDEX = ("partition_index", "index", "partition", "partition_id")
ZERO_UUID = UUID(int=0)


def first(obj: Any, names: tuple[str, ...], default: Any = None) -> Any:
    """The value of the first of ``names`` that ``obj`` has."""
    for name in names:
        if hasattr(obj, name):
            return getattr(obj, name)
    return default


@dataclass(frozen=True)
class PartitionError:
    """A non-zero error code in a response, with where it was."""

    path: str
    """The field path, e.g. ``responses[0].partition_responses[2].error_code``."""
    error: ErrorCode
    topic: str | None = None
    """The topic it concerns (by name; from the id when ``names`` was given); None for a
    top-level error."""
    topic_id: UUID | None = None
    partition: int | None = None
    message: str | None = None
    """The ``error_message`` beside the code, when the response has one."""


def partition_errors(
    response: object, names: Mapping[UUID, str] | None = None
) -> list[PartitionError]:
    """Every non-zero ``error_code`` of ``response`` with the topic and partition it is in,
    depth first. ``names`` (``ClusterMetadata.names``) names topics the response gives by
    id only (Produce v13, Fetch v13+)."""
    return list(_walk(response, "", None, None, None, names or {}))


def _walk(
    obj: Any,
    path: str,
    topic: str | None,
    topic_id: UUID | None,
    partition: int | None,
    names: Mapping[UUID, str],
) -> Iterator[PartitionError]:
    if not is_dataclass(obj):
        return
    own_name = first(obj, TOPIC_NAME)
    if isinstance(own_name, str) and own_name:
        topic = own_name
    own_id = getattr(obj, "topic_id", None)
    if isinstance(own_id, UUID) and own_id != ZERO_UUID:
        topic_id = own_id
        topic = topic or names.get(own_id)
    own_partition = first(obj, PARTITION_INDEX)
    if isinstance(own_partition, int) and not isinstance(own_partition, bool):
        partition = own_partition
    for f in fields(obj):
        value = getattr(obj, f.name)
        where = f"{path}.{f.name}" if path else f.name
        if f.name == "error_code":
            if isinstance(value, int) and value != 0:
                message = getattr(obj, "error_message", None)
                yield PartitionError(where, error_code(value), topic, topic_id, partition, message)
        elif isinstance(value, tuple):
            for index, item in enumerate(value):
                yield from _walk(item, f"{where}[{index}]", topic, topic_id, partition, names)
        elif is_dataclass(value):
            yield from _walk(value, where, topic, topic_id, partition, names)


@dataclass(frozen=True)
class FetchedPartition:
    """One partition of a Fetch answer, read."""

    topic: str
    partition: int
    error: ErrorCode
    high_watermark: int
    records: list[_records.Record] = field(default_factory=list)
    """The data records (control batches, i.e. transaction markers, left out), from the
    fetch offset on when one was given."""
    next_offset: int = -1
    """The offset to fetch next: one past the last record of the answer (-1: no record)."""
    incomplete_size: int = 0
    """Non-zero when the answer ended inside a batch this big: fetch again with a larger
    ``max_bytes`` to get past it."""


def fetched_records(
    response: Any,
    names: Mapping[UUID, str] | None = None,
    offsets: Mapping[tuple[str, int], int] | None = None,
) -> list[FetchedPartition]:
    """Every partition of a decoded ``FetchResponse``, with its records read from the
    batches (CRC checked). ``names`` names topics the answer gives by id (Fetch v13+);
    ``offsets`` ((topic, partition) -> the fetch offset) drops the records before it that a
    compressed batch may carry. Raises ``records.CorruptRecordError`` on a broken batch."""
    names = names or {}
    out: list[FetchedPartition] = []
    for topic_response in first(response, ("responses", "topics"), ()):
        topic = first(topic_response, TOPIC_NAME) or ""
        topic_id = getattr(topic_response, "topic_id", None)
        if not topic and isinstance(topic_id, UUID):
            topic = names.get(topic_id, str(topic_id))
        for p in first(topic_response, ("partitions", "partition_responses"), ()):
            index = first(p, PARTITION_INDEX)
            start = (offsets or {}).get((topic, index), -1)
            batches = _records.iter_batches(first(p, ("records", "record_set")))
            kept: list[_records.Record] = []
            last = -1
            for batch in batches:
                batch.validate()
                if not batch.is_control:
                    for record in batch.records():
                        last = max(last, record.offset)
                        if record.offset >= start:
                            kept.append(record)
                # a control batch, or one emptied by compaction, still moves the offset on
                last = max(last, getattr(batch, "last_offset", last))
            out.append(
                FetchedPartition(
                    topic,
                    index,
                    error_code(p.error_code),
                    p.high_watermark,
                    kept,
                    last + 1 if last >= 0 else -1,
                    batches.incomplete_size or 0,
                )
            )
    return out
