# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""Records of the coordinators' internal topics, as the broker writes them.

``__consumer_offsets`` (the group coordinator), ``__share_group_state`` (share) and
``__transaction_state`` (transaction) hold records whose key starts with an int16 record
type id (older Kafka calls it the key version), followed by the key at version 0; the value
starts with an int16 version, followed by the value at that version. A null value is a
tombstone: the key was deleted. ``registry.COORDINATOR_RECORDS`` maps each coordinator's
record type ids to their key and value classes.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from .errors import DecodeError, EncodeError
from .registry import COORDINATOR_RECORDS

TYPE_CHECKING = False
if TYPE_CHECKING:  # names for annotations only: importing typing costs about 3 ms
    from typing import Any

    from ._registry import CoordinatorRecordType

_INT16 = struct.Struct(">h")

COORDINATOR_TOPICS: dict[str, str] = {
    "__consumer_offsets": "group",
    "__share_group_state": "share",
    "__transaction_state": "transaction",
}
"""Internal topic -> the coordinator whose records it holds."""


@dataclass(slots=True)
class CoordinatorRecord:
    """One decoded record: ``value`` is None for a tombstone."""

    coordinator: str
    record_type: int
    name: str
    """The record type's name, e.g. ``OffsetCommit`` (its key class without ``Key``)."""
    key: Any
    value: Any
    value_version: int | None
    """The version the value was written at; None for a tombstone."""

    @property
    def tombstone(self) -> bool:
        return self.value is None


def decode_record(coordinator: str, key: bytes, value: bytes | None) -> CoordinatorRecord:
    """Decode the key and value bytes of one record of ``coordinator`` (``group``, ``share``,
    ``transaction``, or the internal topic's name). Raises ``DecodeError`` on bad bytes,
    an unknown record type or a value version the value class does not have."""
    record = _record_type(coordinator, key)
    key_obj = _decode_whole(record.key, key, 0)
    name = _coordinator_name(coordinator)
    if value is None:
        return CoordinatorRecord(name, record.record_type, record.name, key_obj, None, None)
    if len(value) < 2:
        raise DecodeError("a value needs its int16 version", len(value), record.value.__name__)
    version = _INT16.unpack_from(value)[0]
    value_obj = _decode_whole(record.value, value, version)
    return CoordinatorRecord(name, record.record_type, record.name, key_obj, value_obj, version)


def encode_record(
    coordinator: str, key: Any, value: Any, value_version: int
) -> tuple[bytes, bytes | None]:
    """The key and value bytes of one record; ``value`` None writes a tombstone."""
    records = COORDINATOR_RECORDS.get(_coordinator_name(coordinator), {})
    for record in records.values():
        if isinstance(key, record.key):
            key_bytes = _INT16.pack(record.record_type) + key.encode(0)
            if value is None:
                return key_bytes, None
            if not isinstance(value, record.value):
                raise EncodeError(
                    f"a {record.name} record needs a {record.value.__name__} value, "
                    f"not {type(value).__name__}",
                    "value",
                    value,
                )
            return key_bytes, _INT16.pack(value_version) + value.encode(value_version)
    raise EncodeError(
        f"{type(key).__name__} is not a key of the {coordinator!r} coordinator", "key", key
    )


def _decode_whole(cls: Any, data: bytes, version: int) -> Any:
    """The body after the int16 prefix; offsets in errors count from the prefix."""
    obj, end = cls.decode_from(data, 2, version)
    if end != len(data):
        raise DecodeError(f"{len(data) - end} bytes left after the body", end, cls.__name__)
    return obj


def _coordinator_name(coordinator: str) -> str:
    return COORDINATOR_TOPICS.get(coordinator, coordinator)


def _record_type(coordinator: str, key: bytes) -> CoordinatorRecordType:
    name = _coordinator_name(coordinator)
    records = COORDINATOR_RECORDS.get(name)
    if records is None:
        known = ", ".join(sorted(COORDINATOR_RECORDS)) or "none"
        raise DecodeError(f"unknown coordinator {coordinator!r} (known: {known})", 0, "key")
    if len(key) < 2:
        raise DecodeError("a key needs its int16 record type", len(key), "key")
    record_type = _INT16.unpack_from(key)[0]
    record = records.get(record_type)
    if record is None:
        raise DecodeError(f"unknown {name} coordinator record type {record_type}", 0, "key")
    return record
