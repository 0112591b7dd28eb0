# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""JSON-style conversion: ``to_dict`` and ``from_dict`` of every generated class, driven by
the class's field table (``(attr, kind)`` or ``(attr, kind, struct class)``; kind is
``value``, ``bytes``, ``uuid`` or ``struct``, with a ``[]`` prefix for arrays).

The dicts hold only JSON types: UUIDs in Kafka's text form (URL-safe base64 without
padding), bytes in standard base64, arrays as lists.
"""

from __future__ import annotations

import base64
from uuid import UUID

from ._plan import RawTaggedField

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Mapping

    Fields = tuple[tuple[Any, ...], ...]


def uuid_to_str(value: UUID) -> str:
    """Kafka's text form of a UUID: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode("ascii")


def uuid_from_str(text: str) -> UUID:
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if len(raw) != 16:
        raise ValueError(f"{text!r} is not a base64 UUID")
    return UUID(bytes=raw)


def bytes_to_str(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


def bytes_from_str(text: str) -> bytes:
    return base64.b64decode(text, validate=True)


def to_dict(obj: Any, fields: Fields, flexible: bool) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for entry in fields:
        attr, kind = entry[0], entry[1]
        value = getattr(obj, attr)
        if value is None:
            result[attr] = None
        elif kind[:2] == "[]":
            convert = _TO_JSON[kind[2:]]
            result[attr] = [convert(item) for item in value]
        else:
            result[attr] = _TO_JSON[kind](value)
    if flexible and obj.unknown_tagged_fields:
        result["unknown_tagged_fields"] = [
            {"tag": raw.tag, "data": bytes_to_str(raw.data)} for raw in obj.unknown_tagged_fields
        ]
    return result


def from_dict(cls: type, data: Mapping[str, Any], fields: Fields, flexible: bool) -> Any:
    known = {entry[0]: entry for entry in fields}
    if flexible:
        known["unknown_tagged_fields"] = ("unknown_tagged_fields", "tags")
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ValueError(f"{cls.__name__} has no field(s) {', '.join(unknown)}")
    kwargs: dict[str, Any] = {}
    for attr, value in data.items():
        entry = known[attr]
        kind = entry[1]
        if value is None:
            kwargs[attr] = None
        elif kind == "tags":
            kwargs[attr] = tuple(
                RawTaggedField(int(item["tag"]), bytes_from_str(item["data"])) for item in value
            )
        elif kind[:2] == "[]":
            kwargs[attr] = tuple(_from_json(item, kind[2:], entry) for item in value)
        else:
            kwargs[attr] = _from_json(value, kind, entry)
    return cls(**kwargs)


def _from_json(value: Any, kind: str, entry: tuple[Any, ...]) -> Any:
    if kind == "struct":
        return entry[2].from_dict(value)
    if kind == "uuid":
        return uuid_from_str(value)
    if kind == "bytes":
        return bytes_from_str(value)
    return value


def _as_is(value: Any) -> Any:
    return value


def _struct_to_dict(value: Any) -> Any:
    return value.to_dict()


_TO_JSON = {"value": _as_is, "bytes": bytes_to_str, "uuid": uuid_to_str, "struct": _struct_to_dict}
