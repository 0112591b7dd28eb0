# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""``Struct``, the base of every generated class: encode, decode and JSON conversion, run
by the runtime from the tables each generated module binds to its classes."""

from __future__ import annotations

from ._read import decode as _decode
from .errors import DecodeError, UnsupportedVersionError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any, Mapping, TypeVar

    from ._plan import Buffer, Plan

    S = TypeVar("S", bound="Struct")
    T = TypeVar("T")


class Codec:
    """What the runtime knows of one generated class."""

    __slots__ = ("name", "fields", "plans", "flexible")

    def __init__(
        self, name: str, fields: tuple[tuple[Any, ...], ...], plans: dict[int, Plan], flexible: bool
    ) -> None:
        self.name = name
        self.fields = fields
        """``(attr, json kind[, struct class])`` per field, for ``_json``."""
        self.plans = plans
        """Version -> the plan of that version (versions with one layout share a plan)."""
        self.flexible = flexible
        """Whether the class has ``unknown_tagged_fields`` (some version is flexible)."""

    def plan(self, version: int) -> Plan:
        plan = self.plans.get(version)
        if plan is None:
            raise UnsupportedVersionError(
                f"{self.name} has no version {version} (versions: {_ranges(self.plans)})"
            )
        return plan


CODECS: dict[type, Codec] = {}

#: Values a constructor leaves as they are for an array field, for the encoder to refuse by
#: name: a string is never meant as the sequence of its characters, nor a dict as its keys.
_NOT_ARRAYS = (str, bytes, bytearray, memoryview, dict)


def as_tuple(items: Iterable[T] | None) -> Any:
    """An array field's value as constructors store it: a tuple (a tuple stays itself, the
    empty one is shared). None, a string, bytes or a dict stay as they are, so that
    encoding names the field. (Typed ``Any``, not a tuple: the compiled build checks a
    declared return type at run time, and then its attribute does the checking.)"""
    if isinstance(items, tuple) or items is None or isinstance(items, _NOT_ARRAYS):
        return items
    return tuple(items)


def bind(
    cls: type,
    fields: tuple[str, ...],
    plans: tuple[tuple[int, int, Plan], ...],
    *,
    structs: tuple[type, ...] = (),
    flexible: bool = False,
) -> None:
    """Give the runtime a generated class's tables (each generated module does this once
    per class, at import).

    ``fields``: every attribute, with its JSON kind when that is not ``value``
    (``topic_id:uuid``, ``records:bytes``, ``topics:[]struct``); struct fields take their
    classes from ``structs``, in order. ``plans``: ``(first, last, plan)`` runs
    of versions that share a layout.
    """
    classes = iter(structs)
    table: list[tuple[Any, ...]] = []
    for spec in fields:
        attr, _, kind = spec.partition(":")
        kind = kind or "value"
        table.append((attr, kind, next(classes)) if kind.endswith("struct") else (attr, kind))
    by_version = {v: plan for first, last, plan in plans for v in range(first, last + 1)}
    CODECS[cls] = Codec(cls.__name__, tuple(table), by_version, flexible)


def field_names(cls: type) -> tuple[str, ...]:
    """The attributes of a generated class, in field order."""
    return tuple(spec[0] for spec in CODECS[cls].fields)


def item_class(cls: type, attr: str) -> Any:
    """The class of the items of array field ``attr`` (or of struct field ``attr``) of a
    generated class: its name differs between spec releases, so code that builds messages
    for any release looks it up here."""
    for spec in CODECS[cls].fields:
        if spec[0] == attr and len(spec) > 2:
            return spec[2]
    raise KeyError(f"{cls.__name__} has no struct field {attr}")


class Struct:
    """A Kafka message or struct: one dataclass covering every version of it.

    Classes that are flexible in some version also have ``unknown_tagged_fields``: tagged
    fields this package does not know, kept raw (``RawTaggedField``) and written back in
    tag order. Classes with known tagged fields have ``tags_on_wire``: the known tags that
    were present when the object was decoded, so re-encoding writes them back even when
    they hold their default value (a message built in code omits a tagged field equal to
    its default, as Kafka does).
    """

    __slots__ = ()

    def encode(self, version: int) -> bytes:
        """The bytes of this message or struct at ``version``."""
        codec = CODECS[type(self)]
        plan = codec.plan(version)
        out = bytearray()
        try:
            plan.write(self, out)
        except Exception as exc:  # noqa: BLE001 - named precisely below
            # Imported here: only a failed encode needs it (imports cost every user).
            from ._diagnose import encode_error

            raise encode_error(self, plan, exc, codec.name, version) from None
        return bytes(out)

    @classmethod
    def decode(cls: type[S], data: Buffer, version: int) -> S:
        """Decode a whole buffer (bytes, bytearray or memoryview) at ``version``; raises
        ``DecodeError`` (with the offset and field path) on bad bytes, nothing else."""
        codec = CODECS[cls]
        plan = codec.plans.get(version)
        if plan is None:
            raise DecodeError(f"{codec.name} has no version {version}", 0, codec.name)
        obj: S = _decode(data, 0, plan, codec.name, True)[0]
        return obj

    @classmethod
    def decode_from(cls: type[S], data: Buffer, offset: int, version: int) -> tuple[S, int]:
        """Decode from ``offset`` on; returns the value and the offset after it."""
        codec = CODECS[cls]
        plan = codec.plans.get(version)
        if plan is None:
            raise DecodeError(f"{codec.name} has no version {version}", offset, codec.name)
        result: tuple[S, int] = _decode(data, offset, plan, codec.name, False)
        return result

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict: UUIDs as Kafka's base64 text, bytes as base64, arrays as lists."""
        from . import _json  # imported on first use: it brings base64

        codec = CODECS[type(self)]
        return _json.to_dict(self, codec.fields, codec.flexible)

    @classmethod
    def from_dict(cls: type[S], data: Mapping[str, Any]) -> S:
        """The inverse of ``to_dict``; missing keys take their defaults."""
        from . import _json

        codec = CODECS[cls]
        obj: S = _json.from_dict(cls, data, codec.fields, codec.flexible)
        return obj


def _ranges(plans: dict[int, Any]) -> str:
    versions = sorted(plans)
    return f"{versions[0]}-{versions[-1]}" if versions else "none"
