"""Adapters between our generated classes and two independent Kafka codecs (the "peers").

The peers are kafka-python 3.0.12 (classes built at runtime from Kafka's JSON specs,
``kafka.protocol``) and kio 0.6.5 (one frozen dataclass per api/version/direction,
``kio.schema`` + ``kio.serial``). Each adapter converts one of our instances to the peer's
value and back, walking the generator model (``kafka_specgen.model``) side by side with the
peer's own description of the message, field by field in spec order.

A peer that cannot hold a value raises ``Inexpressible``; a peer that cannot express a whole
(message, version) raises ``Unsupported`` from ``lookup``. Some values are *projected* into
what the peer can hold before encoding (``project``), e.g. kio only knows the error codes
of its ``ErrorCode`` enum, so a random error code is folded onto a known one; both sides then
encode the same projected instance, so the comparison stays exact.
"""

from __future__ import annotations

import dataclasses
import datetime
import io
import sys
import uuid
from typing import Any

from kafka_specgen.model import Field, FieldType, Message, Struct

ZERO_UUID = uuid.UUID(int=0)


class Unsupported(Exception):
    """The peer cannot express this (message, version) at all."""


class Inexpressible(Exception):
    """The peer cannot hold this particular value."""


# --- helpers on our side -------------------------------------------------------------------


def struct_class(message_cls: type, message: Message, struct: Struct) -> type:
    """The class of ``struct``: a module-level class beside ``message_cls``."""
    module = sys.modules[message_cls.__module__]
    return getattr(module, message.class_name(struct))  # type: ignore[no-any-return]


def default_of(cls: type, attr: str) -> Any:
    return getattr(cls(), attr)


def is_tagged(f: Field, version: int) -> bool:
    return f.tag is not None and version in f.tagged_versions


def strip_unknown_tags(obj: Any) -> Any:
    """Drop ``unknown_tagged_fields`` everywhere: neither peer can write raw unknown tags."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        if hasattr(obj, "unknown_tagged_fields"):
            obj.unknown_tagged_fields = ()
        for fld in dataclasses.fields(obj):
            strip_unknown_tags(getattr(obj, fld.name))
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            strip_unknown_tags(item)
    return obj


def has_nondefault_tags(
    obj: Any, message_cls: type, message: Message, struct: Struct, version: int
) -> bool:
    """Whether ``obj`` (a ``struct`` instance) or anything under it writes a tagged field."""
    cls = struct_class(message_cls, message, struct)
    for f in struct.fields:
        if version not in f.versions:
            continue
        value = getattr(obj, f.attr)
        if is_tagged(f, version) and value != default_of(cls, f.attr):
            return True
        if f.struct is not None and value is not None:
            items = value if f.type.is_array else [value]
            for item in items:
                if has_nondefault_tags(item, message_cls, message, f.struct, version):
                    return True
    return False


# --- kafka-python ------------------------------------------------------------------------------


class KafkaPython:
    name = "kafka_python"

    def __init__(self) -> None:
        import kafka.protocol.admin  # noqa: F401  (registers the ApiMessage classes)
        import kafka.protocol.consumer  # noqa: F401
        import kafka.protocol.metadata  # noqa: F401
        import kafka.protocol.producer  # noqa: F401
        from kafka.protocol.api_message import ApiMessage

        self.ApiMessage = ApiMessage
        self.classes: dict[str, type] = {}
        todo = list(ApiMessage.__subclasses__())
        while todo:
            cls = todo.pop()
            todo.extend(cls.__subclasses__())
            if getattr(cls, "_class_version", None) is None and "_json" in cls.__dict__:
                self.classes.setdefault(cls._json["name"], cls)

    def lookup(self, message: Message, version: int) -> type:
        cls = self.classes.get(message.name)
        if cls is None:
            raise Unsupported(f"kafka-python has no class for {message.name}")
        if not 0 <= version <= cls.max_version:
            raise Unsupported(f"kafka-python's {message.name} stops at v{cls.max_version}")
        self._check_struct(message.root, cls._struct, version, message.name)
        return cls

    def _pairs(
        self, struct: Struct, kstruct: Any, version: int, where: str = ""
    ) -> list[tuple[Field, Any]]:
        """Our fields next to kafka-python's (matched by spec name), for one version."""
        kfields = list(kstruct._fields or ())
        by_name = {kf._name: kf for kf in kfields}
        pairs = []
        for i, f in enumerate(struct.fields):
            kf = by_name.get(f.name)
            if kf is None and i < len(kfields) and kfields[i]._type_str == "bitfield":
                kf = kfields[i]  # renamed to authorized_operations by a json_patch
            if kf is None:
                if version in f.versions:
                    raise Unsupported(f"kafka-python's {where} has no field {f.name}")
                continue
            if (version in f.versions) != kf.for_version_q(version):
                raise Unsupported(f"kafka-python's {where}.{f.name} has other versions")
            if is_tagged(f, version) != kf.tagged_field_q(version):
                raise Unsupported(f"kafka-python's {where}.{f.name} is tagged differently")
            pairs.append((f, kf))
        matched = {id(kf) for _, kf in pairs}
        for kf in kfields:
            if id(kf) not in matched and kf.for_version_q(version):
                raise Unsupported(
                    f"kafka-python's {where} has a field {kf._name} at v{version} "
                    "that our spec lacks"
                )
        return pairs

    def _check_struct(self, struct: Struct, kstruct: Any, version: int, where: str) -> None:
        for f, kf in self._pairs(struct, kstruct, version, where):
            if f.struct is not None and version in f.versions:
                inner = kf.array_of if f.type.is_array else kf
                self._check_struct(f.struct, inner, version, f"{where}.{f.name}")

    # our instance -> kafka-python instance
    def to_peer(self, obj: Any, message_cls: type, message: Message, version: int) -> Any:
        kcls = self.lookup(message, version)
        kwargs = self._fields_to_peer(
            obj, message_cls, message, message.root, kcls._struct, version, in_tag=False
        )
        return kcls(version=version, **kwargs)

    def _fields_to_peer(
        self,
        obj: Any,
        message_cls: type,
        message: Message,
        struct: Struct,
        kstruct: Any,
        version: int,
        in_tag: bool,
    ) -> dict[str, Any]:
        if getattr(obj, "unknown_tagged_fields", None):
            raise Inexpressible("kafka-python does not write unknown tagged fields")
        cls = struct_class(message_cls, message, struct)
        kwargs: dict[str, Any] = {}
        for f, kf in self._pairs(struct, kstruct, version):
            if version not in f.versions:
                continue
            value = getattr(obj, f.attr)
            if is_tagged(f, version):
                if value == default_of(cls, f.attr):
                    # Left out: kafka-python then sees its own default and skips the tag
                    # (its default for a tagged struct is None, not an empty struct).
                    continue
                if in_tag:
                    # kafka-python encodes a tagged field's value with ``tagged=None``,
                    # which writes an empty tag section for every struct under it.
                    raise Inexpressible("kafka-python cannot nest tagged fields in a tag")
            kwargs[kf.name] = self._value_to_peer(
                value, f, kf, message_cls, message, version, in_tag or is_tagged(f, version)
            )
        return kwargs

    def _value_to_peer(
        self,
        value: Any,
        f: Field,
        kf: Any,
        message_cls: type,
        message: Message,
        version: int,
        in_tag: bool,
    ) -> Any:
        if value is None:
            return None
        if f.struct is not None:
            inner = kf.array_of if f.type.is_array else kf
            items = value if f.type.is_array else [value]
            if in_tag:
                for item in items:
                    if has_nondefault_tags(item, message_cls, message, f.struct, version):
                        raise Inexpressible("kafka-python cannot nest tagged fields in a tag")
            built = [
                inner.data_class(
                    version=version,
                    **self._fields_to_peer(
                        item, message_cls, message, f.struct, inner, version, in_tag
                    ),
                )
                for item in items
            ]
            return built if f.type.is_array else built[0]
        if kf._type_str == "bitfield":
            bits = {i for i in range(32) if (value >> i) & 1}
            return None if bits == {31} else bits
        if f.type.is_array:
            return list(value)
        return value

    # kafka-python instance -> our instance
    def from_peer(self, kobj: Any, message_cls: type, message: Message, version: int) -> Any:
        return self._from_peer(kobj, message_cls, message, message.root, version)

    def _from_peer(
        self, kobj: Any, message_cls: type, message: Message, struct: Struct, version: int
    ) -> Any:
        cls = struct_class(message_cls, message, struct)
        unknown = getattr(kobj, "unknown_tags", None)
        if unknown:
            raise AssertionError(f"kafka-python decoded unknown tags {unknown}")
        kwargs: dict[str, Any] = {}
        for f, kfield in self._pairs(struct, kobj._struct, version):
            if version not in f.versions:
                continue
            value = getattr(kobj, kfield.name)
            if value is None and is_tagged(f, version) and f.struct is not None:
                continue  # kafka-python's default for an absent tagged struct
            kwargs[f.attr] = self._value_from_peer(value, f, kfield, message_cls, message, version)
        # Through the constructor (lists become tuples), which the compiled build needs too:
        # its attributes take only values of their declared types.
        return cls(**kwargs)

    def _value_from_peer(
        self, value: Any, f: Field, kf: Any, message_cls: type, message: Message, version: int
    ) -> Any:
        if kf._type_str == "bitfield":
            if value is None:
                return -(2**31)
            n = sum(1 << b for b in value)
            return n - 2**32 if n >= 2**31 else n
        if value is None and f.type.text == "uuid":
            return ZERO_UUID  # kafka-python reads the zero uuid as None
        if value is None:
            return None
        if f.struct is not None:
            if f.type.is_array:
                return [self._from_peer(v, message_cls, message, f.struct, version) for v in value]
            return self._from_peer(value, message_cls, message, f.struct, version)
        if f.type.is_array:
            return [self._scalar_from_peer(v) for v in value]
        return self._scalar_from_peer(value)

    @staticmethod
    def _scalar_from_peer(value: Any) -> Any:
        if isinstance(value, (memoryview, bytearray)):
            return bytes(value)
        return value

    def encode(self, kobj: Any, version: int) -> bytes:
        return bytes(kobj.encode(version=version))

    def decode(self, message: Message, version: int, data: bytes) -> Any:
        kcls = self.lookup(message, version)
        # kafka-python's ApiVersionsResponse.decode reads any response with a non-zero
        # error code as version 0 (a broker answers an unsupported version at v0). That is
        # deliberate framing logic, not the body codec under test, so call the plain
        # ApiMessage.decode for the exact version.
        return self.ApiMessage.decode.__func__(kcls, data, version=version)


# --- kio -----------------------------------------------------------------------------------------


# The widest millisecond values kio's datetime/timedelta types survive: datetime covers
# years 1-9999, and kio writes a timedelta through float seconds (exact up to 2**53 µs).
_DT_MAX = 253402300799999
_TD_LIMIT = 2**43


def _fold(value: int, lo: int, hi: int) -> int:
    return lo + (value - lo) % (hi - lo + 1)


class Kio:
    name = "kio"

    def __init__(self) -> None:
        from kio.schema.errors import ErrorCode
        from kio.serial import entity_reader, entity_writer

        self.ErrorCode = ErrorCode
        self.known_codes = sorted(e.value for e in ErrorCode)
        self.entity_reader = entity_reader
        self.entity_writer = entity_writer

    def lookup(self, message: Message, version: int) -> type:
        from kio.index import KioIndexError, load_request_schema, load_response_schema

        if message.api_key is None or message.type not in ("request", "response"):
            raise Unsupported(f"kio has no payload class for {message.name}")
        load = load_request_schema if message.type == "request" else load_response_schema
        try:
            kcls = load(message.api_key, version)
        except KioIndexError as exc:
            raise Unsupported(f"kio has no {message.name} v{version}: {exc}") from None
        if kcls.__name__ != message.name:
            raise Unsupported(f"kio's api {message.api_key} v{version} is {kcls.__name__}")
        self._check(kcls, message.root, version, message.name)
        return kcls

    def _pairs(self, kcls: type, struct: Struct, version: int) -> list[tuple[Field, Any]]:
        ours = [f for f in struct.fields if version in f.versions]
        theirs = list(dataclasses.fields(kcls))
        if len(ours) != len(theirs):
            raise Unsupported(
                f"kio's {kcls.__name__} v{version} has fields "
                f"{[k.name for k in theirs]}, our spec {[f.attr for f in ours]}"
            )
        return list(zip(ours, theirs))

    def _check(self, kcls: type, struct: Struct, version: int, where: str) -> None:
        for f, kf in self._pairs(kcls, struct, version):
            ktag = kf.metadata.get("tag")
            ours = f.tag if is_tagged(f, version) else None
            if ktag != ours:
                raise Unsupported(f"kio's {where}.{kf.name} has tag {ktag}, ours {ours}")
            if f.struct is not None:
                self._check(self._entity_type(kf), f.struct, version, f"{where}.{f.name}")

    @staticmethod
    def _optional(kf: Any) -> bool:
        from kio.serial._introspect import is_optional

        return is_optional(kf)

    @staticmethod
    def _entity_type(kf: Any) -> type:
        from kio.serial._introspect import classify_field

        return classify_field(kf).type_

    # our instance -> kio instance (projecting values kio cannot hold, in place)
    def to_peer(self, obj: Any, message_cls: type, message: Message, version: int) -> Any:
        kcls = self.lookup(message, version)
        return self._to_peer(obj, kcls, message.root, version)

    def _to_peer(self, obj: Any, kcls: type, struct: Struct, version: int) -> Any:
        if getattr(obj, "unknown_tagged_fields", None):
            raise Inexpressible("kio does not write unknown tagged fields")
        kwargs = {}
        for f, kf in self._pairs(kcls, struct, version):
            kwargs[kf.name] = self._value_to_peer(obj, f, kf, version)
        return kcls(**kwargs)

    def _value_to_peer(self, obj: Any, f: Field, kf: Any, version: int) -> Any:
        value = getattr(obj, f.attr)
        if value is None and f.struct is not None and is_tagged(f, version):
            return kf.default  # an absent tagged struct: kio's default instance
        if value is None:
            return None
        if f.struct is not None:
            ktype = self._entity_type(kf)
            if f.type.is_array:
                return tuple(self._to_peer(v, ktype, f.struct, version) for v in value)
            return self._to_peer(value, ktype, f.struct, version)
        kind = kf.metadata["kafka_type"]
        if kind == "uuid" and value == ZERO_UUID and self._optional(kf):
            return None  # kio's own spelling of the zero uuid (what its reader returns)
        if f.type.is_array:
            return tuple(self._scalar_to_peer(v, kind) for v in value)
        projected = self._project(value, kind, self._optional(kf))
        if projected != value:
            setattr(obj, f.attr, projected)
        return self._scalar_to_peer(projected, kind)

    def _project(self, value: Any, kind: str, optional: bool) -> Any:
        if kind == "error_code" and value not in self.known_codes:
            return self.known_codes[value % len(self.known_codes)]
        if kind == "datetime_i64":
            # kio writes any datetime but its reader rejects negative timestamps ("Cannot
            # parse negative timestamp"), except -1 in a nullable field, which is None.
            if optional and value == -1:
                return value
            return value if 0 <= value <= _DT_MAX else _fold(value, 0, _DT_MAX)
        if kind == "timedelta_i64":
            return (
                value if -_TD_LIMIT <= value <= _TD_LIMIT else _fold(value, -_TD_LIMIT, _TD_LIMIT)
            )
        return value

    def _scalar_to_peer(self, value: Any, kind: str) -> Any:
        from kio.serial.readers import tz_aware_from_i64
        from kio.static.primitive import i32Timedelta, i64Timedelta

        if kind == "error_code":
            if value not in self.known_codes:
                raise Inexpressible(f"kio has no error code {value}")
            return self.ErrorCode(value)
        if kind == "timedelta_i32":
            return i32Timedelta.parse(datetime.timedelta(milliseconds=value))
        if kind == "timedelta_i64":
            return i64Timedelta.parse(datetime.timedelta(milliseconds=value))
        if kind == "datetime_i64":
            return None if value == -1 else tz_aware_from_i64(value)
        return value

    # kio instance -> our instance
    def from_peer(self, kobj: Any, message_cls: type, message: Message, version: int) -> Any:
        return self._from_peer(kobj, message_cls, message, message.root, version)

    def _from_peer(
        self, kobj: Any, message_cls: type, message: Message, struct: Struct, version: int
    ) -> Any:
        kwargs: dict[str, Any] = {}
        for f, kf in self._pairs(type(kobj), struct, version):
            value = getattr(kobj, kf.name)
            if value is not None and f.struct is not None:
                if f.type.is_array:
                    value = [
                        self._from_peer(v, message_cls, message, f.struct, version) for v in value
                    ]
                else:
                    value = self._from_peer(value, message_cls, message, f.struct, version)
            elif value is not None and f.type.is_array:
                value = [self._scalar_from_peer(v, f.type.element) for v in value]
            elif f.type.text == "uuid" and value is None:
                value = ZERO_UUID  # kio reads the zero uuid as None
            elif kf.metadata.get("kafka_type") == "datetime_i64" and value is None:
                value = -1  # kio reads -1 in a nullable timestamp as None
            elif value is not None:
                value = self._scalar_from_peer(value, f.type)
            kwargs[f.attr] = value
        # Through the constructor, as above.
        return struct_class(message_cls, message, struct)(**kwargs)

    @staticmethod
    def _scalar_from_peer(value: Any, ftype: FieldType | None) -> Any:
        # kio builds these through float seconds; read them back the way its writer does.
        if isinstance(value, datetime.timedelta):
            return round(value.total_seconds() * 1000)
        if isinstance(value, datetime.datetime):
            return round(value.timestamp() * 1000)
        from kio.schema.errors import ErrorCode

        if isinstance(value, ErrorCode):
            return int(value.value)
        if isinstance(value, bool):
            return value
        if isinstance(value, int):
            return int(value)
        if isinstance(value, float):
            return float(value)
        if isinstance(value, (bytes, bytearray, memoryview)) and not isinstance(value, str):
            return bytes(value)
        if isinstance(value, str):
            return str(value)
        return value

    def encode(self, kobj: Any, version: int) -> bytes:
        buf = io.BytesIO()
        self.entity_writer(type(kobj))(buf, kobj)
        return buf.getvalue()

    def decode(self, message: Message, version: int, data: bytes) -> Any:
        kcls = self.lookup(message, version)
        value, size = self.entity_reader(kcls)(data, 0)
        if size != len(data):
            raise AssertionError(f"kio read {size} of {len(data)} bytes")
        return value
