# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""Control batches' records (transaction markers and KRaft's own): their key and value."""

from __future__ import annotations

import struct
from enum import IntEnum

from ._format import CorruptRecordError, Record


class ControlType(IntEnum):
    """The type in a control record's key. Only ABORT and COMMIT values are decoded here."""

    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6


class ControlRecord:
    """A control record's key (and, for ABORT and COMMIT markers, value) decoded.

    ``type`` is a ``ControlType`` when Kafka defines it, else the raw number;
    ``coordinator_epoch`` is set for ABORT and COMMIT only; ``value`` is the record's value
    as it was, whatever the type (the raw bytes for types not decoded here)."""

    __slots__ = ("type", "version", "coordinator_epoch", "value")

    # a union, not int: mypyc would store a plain int and lose the ControlType
    type: ControlType | int

    def __init__(
        self,
        type: ControlType | int,
        version: int = 0,
        coordinator_epoch: int | None = None,
        value: bytes | None = None,
    ) -> None:
        self.type = type
        self.version = version
        self.coordinator_epoch = coordinator_epoch
        self.value = value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ControlRecord):
            return NotImplemented
        return (
            self.type == other.type
            and self.version == other.version
            and self.coordinator_epoch == other.coordinator_epoch
            and self.value == other.value
        )

    def __repr__(self) -> str:
        kind = self.type.name if isinstance(self.type, ControlType) else self.type
        return (
            f"ControlRecord(type={kind}, version={self.version}, "
            f"coordinator_epoch={self.coordinator_epoch}, value={self.value!r})"
        )


_CONTROL_KEY = struct.Struct(">hh")
_END_TXN_VALUE = struct.Struct(">hi")


def decode_control(record: Record) -> ControlRecord:
    """The control type of a control batch's record, and for ABORT and COMMIT markers the
    coordinator epoch. Types Kafka defines otherwise keep their value raw."""
    key = record.key
    if key is None or len(key) < 4:
        raise CorruptRecordError(
            "control record key is shorter than 4 bytes", 0, "ControlRecord.key"
        )
    version, kind = _CONTROL_KEY.unpack_from(key)
    value = record.value
    epoch = None
    if kind == ControlType.ABORT or kind == ControlType.COMMIT:
        if value is None or len(value) < 6:
            raise CorruptRecordError(
                "transaction marker value is shorter than 6 bytes", 0, "ControlRecord.value"
            )
        epoch = _END_TXN_VALUE.unpack_from(value)[1]
    control_type: ControlType | int = kind
    if 0 <= kind <= ControlType.KRAFT_VOTERS:
        control_type = ControlType(kind)
    return ControlRecord(control_type, version, epoch, value)


def encode_control(control: ControlRecord) -> tuple[bytes, bytes | None]:
    """The (key, value) of a control record: for ABORT and COMMIT with a coordinator epoch,
    the marker value (version 0); otherwise ``control.value`` as given."""
    key = _CONTROL_KEY.pack(control.version, control.type)
    if control.coordinator_epoch is not None and control.type in (
        ControlType.ABORT,
        ControlType.COMMIT,
    ):
        return key, _END_TXN_VALUE.pack(0, control.coordinator_epoch)
    return key, control.value
