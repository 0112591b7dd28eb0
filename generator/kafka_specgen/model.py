"""The model: validated, immutable messages, and the spec language's vocabulary.

``model_builder`` builds them from schema-checked raw specs, enforcing Kafka's generator's
rules, so a ``Message`` here is always valid.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from typing import Any

from .versions import Versions
from .wiretypes import WIRE_TYPES

PRIMITIVES = frozenset(WIRE_TYPES)
NULLABLE_PRIMITIVES = frozenset(name for name, t in WIRE_TYPES.items() if t.nullable)
MESSAGE_TYPES = (
    "request",
    "response",
    "header",
    "metadata",
    "data",
    "coordinator-key",
    "coordinator-value",
)
#: Record types whose api key is numbered per source folder (Kafka's generators for these
#: run once per module: metadata/ and storage/, each coordinator's folder).
SCOPED_RECORD_TYPES = ("metadata", "coordinator-key", "coordinator-value")
#: Types that need an apiKey (a record's is its record type id).
KEYED_TYPES = ("request", "response", *SCOPED_RECORD_TYPES)
ENTITY_TYPES = {
    "topicName": "string",
    "groupId": "string",
    "transactionalId": "string",
    "producerId": "int64",
    "brokerId": "int32",
}
NAME_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9]*\Z")

#: Attribute names the generated classes use themselves; a spec field that would
#: snake-case to one of these gets a trailing underscore instead.
RESERVED_ATTRIBUTES = frozenset(
    {
        "self",
        "cls",
        "encode",
        "decode",
        "decode_from",
        "to_dict",
        "from_dict",
        "unknown_tagged_fields",
        "tags_on_wire",
        "version",
        "data",
        "offset",
    }
)
#: Names the generated modules import or define at top level; a message with one of these
#: names would shadow them (struct classes carry their message's name as a prefix).
RESERVED_CLASS_NAMES = frozenset(
    {
        "Any",
        "Buffer",
        "ClassVar",
        "Mapping",
        "UUID",
        "RawTaggedField",
        "DecodeError",
        "EncodeError",
        "UnsupportedVersionError",
        "annotations",
        "dataclass",
        "field",
    }
)


class EmptyStruct:
    """Marks a struct-typed field whose default is a fresh empty instance."""

    def __repr__(self) -> str:
        return "EMPTY_STRUCT"


EMPTY_STRUCT = EmptyStruct()


@dataclass(frozen=True)
class FieldType:
    """A parsed type string: a primitive, ``[]Element`` or a struct name."""

    text: str
    element: FieldType | None = None

    @staticmethod
    def parse(text: str) -> FieldType:
        if text.startswith("[]"):
            element = FieldType.parse(text[2:])
            if element.is_array:
                raise ValueError(f"arrays of arrays are not allowed: {text!r}")
            return FieldType(text, element)
        if text in PRIMITIVES:
            return FieldType(text)
        if not NAME_PATTERN.match(text) or not text[0].isupper():
            raise ValueError(f"unknown type {text!r} (struct names start with a capital letter)")
        return FieldType(text)

    @property
    def is_array(self) -> bool:
        return self.element is not None

    @property
    def is_struct(self) -> bool:
        return not self.is_array and self.text not in PRIMITIVES

    @property
    def is_struct_array(self) -> bool:
        return self.element is not None and self.element.is_struct

    @property
    def struct_name(self) -> str | None:
        """The struct this type holds, directly or as array elements."""
        if self.is_struct:
            return self.text
        if self.element is not None and self.element.is_struct:
            return self.element.text
        return None


@dataclass(frozen=True)
class Field:
    name: str
    attr: str
    type: FieldType
    versions: Versions
    """The versions the field is on the wire: as declared, cut to its struct's."""
    declared_versions: Versions
    """The versions as the spec declares them (what a spec comparison compares)."""
    nullable_versions: Versions
    tagged_versions: Versions
    tag: int | None
    default: Any
    ignorable: bool
    about: str
    map_key: bool
    entity_type: str | None
    flexible_versions: Versions | None
    zero_copy: bool
    struct: Struct | None

    @property
    def nullable_everywhere(self) -> bool:
        return bool(self.versions) and self.versions in self.nullable_versions


@dataclass(frozen=True)
class Struct:
    name: str
    versions: Versions
    fields: tuple[Field, ...]
    about: str
    common: bool


@dataclass(frozen=True)
class Message:
    source: str
    name: str
    type: str
    api_key: int | None
    valid_versions: Versions
    flexible_versions: Versions
    root: Struct
    structs: tuple[Struct, ...]
    """Every nested struct of the message, leaves first (common structs included)."""
    listeners: tuple[str, ...]
    latest_version_unstable: bool
    deprecated_versions: Versions
    warnings: tuple[str, ...] = ()
    notes: str = ""
    """The spec's leading comments (its version history), for the class docstring."""

    @property
    def removed(self) -> bool:
        """An API that Kafka removed but whose key stays taken (``validVersions: none``):
        no class is generated, its name stays known."""
        return self.valid_versions.empty

    @property
    def flexible_range(self) -> Versions:
        """The versions that are flexible: ``flexibleVersions`` within ``validVersions``."""
        return self.flexible_versions.intersect(self.valid_versions)

    @property
    def flexible_min(self) -> int | None:
        """The first flexible version, or None when no version is flexible."""
        flexible = self.flexible_range
        return None if flexible.empty else flexible.lo

    @property
    def scope(self) -> str:
        """The folder of the spec file (``group-coordinator``), ``""`` for a bare file: api
        keys of records are unique per folder, as Kafka's generators run once per module."""
        return self.source.rsplit("/", 1)[0] if "/" in self.source else ""

    @property
    def api_name(self) -> str:
        """``MetadataRequest`` -> ``Metadata``: the name the API is known by."""
        for suffix in ("Request", "Response"):
            if self.type == suffix.lower() and self.name.endswith(suffix):
                return self.name[: -len(suffix)]
        return self.name

    def class_name(self, struct: Struct) -> str:
        """The module-level class name of ``struct``: the message's own name, or a struct
        name prefixed with the message name unless it already starts with it
        (``MetadataResponseTopic`` stays, VoteRequest's ``TopicData`` becomes
        ``VoteRequestTopicData``). Kafka scopes struct names to a message, and one module
        holds a request and its response, which often share struct names."""
        if struct is self.root or struct.name.startswith(self.name):
            return struct.name
        return self.name + struct.name


def snake_case(name: str) -> str:
    """``ThrottleTimeMs`` -> ``throttle_time_ms``, ``V3AndBelowTopics`` -> ``v3_and_below_topics``."""
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text)
    return text.lower()


def attribute_name(name: str) -> str:
    attr = snake_case(name)
    if keyword.iskeyword(attr) or keyword.issoftkeyword(attr) or attr in RESERVED_ATTRIBUTES:
        attr += "_"
    return attr
