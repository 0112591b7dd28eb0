"""Building the model: Kafka's generator's rules, applied while each message is built.

Every semantic rule of Kafka's own generator (its MessageDataGenerator's checks) is enforced
here (a field's default in ``defaults``, the rules across files in ``message_set``), so an
invalid spec never reaches rendering. Each rejection is a ``SpecError`` naming file, struct,
field and rule; independent rejections are reported together.
"""

from __future__ import annotations

import keyword
from typing import Any, Sequence

from .defaults import field_default
from .errors import SpecError, each
from .limits import MAX_STRUCT_DEPTH
from .load import RawSpec
from .message_set import check_message_set
from .model import (
    ENTITY_TYPES,
    KEYED_TYPES,
    MESSAGE_TYPES,
    NAME_PATTERN,
    NULLABLE_PRIMITIVES,
    RESERVED_CLASS_NAMES,
    Field,
    FieldType,
    Message,
    Struct,
    attribute_name,
)
from .versions import NONE, Versions


def check_class_names(messages: Sequence[Message]) -> None:
    """Every class of one module needs its own name. Within a message, structs ``Topic``
    and ``MetadataResponseTopic`` would both be ``MetadataResponseTopic``; across the
    messages of a module (render groups them) a clash is rarer but as fatal. Refuse
    rather than pick one."""
    owners: dict[str, tuple[Message, Struct]] = {}
    for message in messages:
        for struct in (message.root, *message.structs):
            name = message.class_name(struct)
            owner, owner_struct = owners.setdefault(name, (message, struct))
            if owner is not message:
                raise SpecError(
                    message.source,
                    "class-name",
                    f"{message.name} and {owner.name} would both define class {name} "
                    "in one module",
                )
            if owner_struct is not struct:
                raise SpecError(
                    message.source,
                    "class-name",
                    f"structs {owner_struct.name} and {struct.name} would both be class {name}",
                    struct=struct.name,
                )


def build_messages(raws: Sequence[RawSpec]) -> list[Message]:
    """Build and cross-check every message; sorted by name for deterministic output."""
    messages = each(raws, lambda raw: MessageBuilder(raw).build())
    check_message_set(messages)
    return sorted(messages, key=lambda m: (m.name, m.source))


class MessageBuilder:
    """Turns one raw spec into a ``Message``, applying the per-file rules."""

    def __init__(self, raw: RawSpec) -> None:
        self.raw = raw
        self.data = raw.data
        self.source = raw.source
        self.name = str(self.data["name"])
        self.common_specs: dict[str, dict[str, Any]] = {}
        self.built: dict[str, Struct] = {}
        self.order: list[Struct] = []
        self.defined_inline: set[str] = set()
        self.building: list[str] = []
        """The structs being built, outermost first: the path to the one being built."""
        self.warnings: list[str] = []

    def fail(
        self,
        rule: str,
        message: str,
        *,
        struct: str | None = None,
        field: str | None = None,
    ) -> SpecError:
        return SpecError(self.source, rule, message, struct=struct, field=field)

    def versions(
        self,
        text: Any,
        what: str,
        *,
        struct: str | None = None,
        field: str | None = None,
    ) -> Versions:
        try:
            return Versions.parse(str(text))
        except ValueError as exc:
            raise self.fail("bad-versions", f"{what}: {exc}", struct=struct, field=field) from None

    def build(self) -> Message:
        data = self.data
        kind = data["type"]
        if kind not in MESSAGE_TYPES:
            raise self.fail("message-type", f"unknown message type {kind!r}")
        if not NAME_PATTERN.match(self.name):
            raise self.fail("name", f"message name {self.name!r} is not [A-Za-z][A-Za-z0-9]*")
        if self.name in RESERVED_CLASS_NAMES or keyword.iskeyword(self.name):
            raise self.fail(
                "reserved-name",
                f"message name {self.name!r} clashes with a name the generated module uses",
            )
        valid = self.versions(data["validVersions"], "validVersions")
        if valid.empty:
            return self.removed_api(kind)
        if valid.open_ended:
            raise self.fail("valid-versions", f"validVersions {valid} has no upper bound")
        if "flexibleVersions" not in data:
            # Kafka 2.4/2.8 specs omit it and their generator read that as "none";
            # from 3.0 Kafka requires it. Accept old specs, but say so.
            self.warnings.append(
                SpecError(
                    self.source,
                    "flexible-versions",
                    "flexibleVersions is missing; read as 'none' like Kafka before 3.0 did",
                ).args[0]
            )
        flexible = self.versions(data.get("flexibleVersions", "none"), "flexibleVersions")
        if not flexible.empty and not flexible.open_ended:
            raise self.fail(
                "flexible-versions",
                f"flexibleVersions must be 'none' or open-ended 'N+', not {flexible}",
            )
        if kind != "request":
            for key in ("listeners", "latestVersionUnstable"):
                if key in data:
                    raise self.fail("request-only-key", f"{key} is only allowed on requests")
        api_key = data.get("apiKey")
        if kind in KEYED_TYPES and api_key is None:
            raise self.fail("api-key", f"a {kind} message needs an apiKey")
        if kind not in KEYED_TYPES and api_key is not None:
            raise self.fail("api-key", f"a {kind} message has no apiKey")
        if kind == "coordinator-key" and (valid != Versions(0, 0) or not flexible.empty):
            # The key's leading int16 is its record type id, so the key has no versions.
            raise self.fail(
                "coordinator-key",
                f"a coordinator-key has validVersions 0 and flexibleVersions none, "
                f"not {valid} and {flexible}",
            )
        self.valid = valid
        self.flexible = flexible
        for common in data.get("commonStructs", []):
            name = common["name"]
            if not NAME_PATTERN.match(name) or not name[0].isupper():
                raise self.fail(
                    "struct-name",
                    f"common struct name {name!r} must be capitalised",
                    struct=name,
                )
            if name in self.common_specs:
                raise self.fail(
                    "duplicate-struct",
                    f"common struct {name} is defined twice",
                    struct=name,
                )
            self.common_specs[name] = common
        root = self.struct(self.name, valid, data["fields"], about="", common=False, top_level=True)
        # Kafka accepts unused common structs; they are generated too, at the message's versions.
        for name in sorted(set(self.common_specs) - set(self.built)):
            self.common_struct(name)
        deprecated = self.versions(data.get("deprecatedVersions", "none"), "deprecatedVersions")
        message = Message(
            source=self.source,
            name=self.name,
            type=kind,
            api_key=api_key,
            valid_versions=valid,
            flexible_versions=flexible,
            root=root,
            structs=tuple(self.order),
            listeners=tuple(data.get("listeners", ())),
            latest_version_unstable=bool(data.get("latestVersionUnstable", False)),
            deprecated_versions=deprecated,
            warnings=tuple(self.warnings),
            notes=self.raw.notes,
        )
        check_class_names([message])
        return message

    def removed_api(self, kind: str) -> Message:
        """A removed API (``validVersions: none``): Kafka ignores its flexibleVersions,
        listeners and fields, and so does this model; only the name and key remain."""
        if kind not in ("request", "response"):
            raise self.fail("valid-versions", f"validVersions of a {kind} must not be 'none'")
        api_key = self.data.get("apiKey")
        if api_key is None:
            raise self.fail("api-key", f"a {kind} message needs an apiKey")
        return Message(
            source=self.source,
            name=self.name,
            type=kind,
            api_key=api_key,
            valid_versions=NONE,
            flexible_versions=NONE,
            root=Struct(name=self.name, versions=NONE, fields=(), about="", common=False),
            structs=(),
            listeners=(),
            latest_version_unstable=False,
            deprecated_versions=NONE,
            notes=self.raw.notes,
        )

    def common_struct(self, name: str) -> Struct:
        """A common struct, built once at the message's versions (uses may narrow them)."""
        spec = self.common_specs[name]
        if name in self.built:
            return self.built[name]
        declared = self.versions(spec["versions"], "versions", struct=name)
        return self.struct(
            name, declared.intersect(self.valid), spec["fields"], about="", common=True
        )

    def struct(
        self,
        name: str,
        versions: Versions,
        field_specs: list[dict[str, Any]],
        *,
        about: str,
        common: bool,
        top_level: bool = False,
    ) -> Struct:
        if not top_level and name == self.name:
            raise self.fail(
                "struct-name", f"struct {name} has the name of its message", struct=name
            )
        if name in self.building:  # only a common struct can come back to itself
            loop = " -> ".join([*self.building[self.building.index(name) :], name])
            raise self.fail("struct-cycle", f"contains itself: {loop}", struct=name)
        if len(self.building) > MAX_STRUCT_DEPTH:  # the message's own fields are level 0
            raise self.fail(
                "struct-depth",
                f"nested {len(self.building)} levels deep, over the cap of {MAX_STRUCT_DEPTH}",
                struct=name,
            )
        self.building.append(name)
        try:
            fields = tuple(self.field(spec, name, versions, top_level) for spec in field_specs)
        finally:
            self.building.pop()
        self.check_struct(name, fields)
        struct = Struct(name=name, versions=versions, fields=fields, about=about, common=common)
        if not top_level:
            self.built[name] = struct
            self.order.append(struct)
        return struct

    def check_struct(self, name: str, fields: tuple[Field, ...]) -> None:
        seen: set[str] = set()
        for f in fields:
            if f.name in seen:
                raise self.fail(
                    "duplicate-field",
                    f"field name {f.name} is used twice",
                    struct=name,
                    field=f.name,
                )
            seen.add(f.name)
        attrs: dict[str, str] = {}
        for f in fields:
            if f.attr in attrs:
                raise self.fail(
                    "duplicate-field",
                    f"fields {attrs[f.attr]} and {f.name} both " f"become attribute {f.attr!r}",
                    struct=name,
                    field=f.name,
                )
            attrs[f.attr] = f.name
        tags = sorted(f.tag for f in fields if f.tag is not None)
        if len(set(tags)) != len(tags):
            duplicate = next(t for t in tags if tags.count(t) > 1)
            raise self.fail("duplicate-tag", f"tag {duplicate} is used twice", struct=name)
        if tags != list(range(len(tags))):
            raise self.fail("tag-gap", f"tags must be contiguous from 0, got {tags}", struct=name)

    def field(self, spec: dict[str, Any], struct: str, parent: Versions, top_level: bool) -> Field:
        name = spec["name"]

        def fail(rule: str, message: str) -> SpecError:
            return self.fail(rule, message, struct=struct, field=name)

        def versions(key: str, default: str = "none") -> Versions:
            return self.versions(spec.get(key, default), key, struct=struct, field=name)

        if not NAME_PATTERN.match(name):
            raise fail("name", f"field name {name!r} is not [A-Za-z][A-Za-z0-9]*")
        try:
            ftype = FieldType.parse(spec["type"])
        except ValueError as exc:
            raise fail("type", str(exc)) from None
        tagged = versions("taggedVersions")
        tag = spec.get("tag")
        if "versions" in spec:
            declared = versions("versions")
        elif "taggedVersions" in spec:
            declared = tagged
        else:
            raise fail(
                "versions",
                "a field needs versions (or taggedVersions for a tagged-only field)",
            )
        nullable = versions("nullableVersions")
        field_flexible = versions("flexibleVersions") if "flexibleVersions" in spec else None
        effective = declared.intersect(parent)

        if nullable and not (
            ftype.is_array or ftype.is_struct or ftype.text in NULLABLE_PRIMITIVES
        ):
            raise fail("nullable-type", f"type {ftype.text} cannot be nullable")
        if "fields" in spec and not ftype.struct_name:
            raise fail(
                "fields-type",
                f"only struct and struct-array fields may have fields, " f"not {ftype.text}",
            )
        if field_flexible is not None:
            if ftype.text not in ("string", "bytes"):
                raise fail(
                    "field-flexible",
                    "field-level flexibleVersions is only allowed on string and bytes fields",
                )
            if field_flexible not in self.flexible:
                raise fail(
                    "field-flexible",
                    f"field flexibleVersions {field_flexible} must be a "
                    f"subset of the message's {self.flexible}",
                )
        if spec.get("zeroCopy") and ftype.text != "bytes":
            raise fail("zero-copy", "zeroCopy is only allowed on bytes fields")
        if spec.get("mapKey") and top_level:
            raise fail("map-key", "mapKey is not allowed on top-level fields")
        if tag is not None or "taggedVersions" in spec:
            self.check_tag(spec, ftype, declared, tagged, nullable, field_flexible, fail)
        entity = spec.get("entityType")
        if entity is not None and entity != "unknown":
            wanted = ENTITY_TYPES.get(entity)
            actual = ftype.element.text if ftype.element is not None else ftype.text
            if wanted is None:
                raise fail("entity-type", f"unknown entityType {entity!r}")
            if actual != wanted:
                raise fail(
                    "entity-type",
                    f"entityType {entity} needs type {wanted} "
                    f"(or an array of it), not {ftype.text}",
                )

        struct_model = None
        if ftype.struct_name:
            struct_model = self.child_struct(spec, ftype.struct_name, effective, struct, fail)
        default = field_default(spec, ftype, declared, nullable, fail)
        return Field(
            name=name,
            attr=attribute_name(name),
            type=ftype,
            versions=effective,
            declared_versions=declared,
            nullable_versions=nullable,
            tagged_versions=tagged,
            tag=tag,
            default=default,
            ignorable=bool(spec.get("ignorable", False)),
            about=str(spec.get("about", "")),
            map_key=bool(spec.get("mapKey", False)),
            entity_type=entity,
            flexible_versions=field_flexible,
            zero_copy=bool(spec.get("zeroCopy", False)),
            struct=struct_model,
        )

    def check_tag(
        self,
        spec: dict[str, Any],
        ftype: FieldType,
        declared: Versions,
        tagged: Versions,
        nullable: Versions,
        field_flexible: Versions | None,
        fail: Any,
    ) -> None:
        tag = spec.get("tag")
        if tag is None:
            raise fail("tag", "taggedVersions is given but tag is missing")
        if "taggedVersions" not in spec:
            raise fail("tag", "tag is given but taggedVersions is missing")
        if not isinstance(tag, int) or tag < 0:
            raise fail("tag", f"tag must be a non-negative integer, not {tag!r}")
        if not tagged.open_ended:
            raise fail(
                "tagged-versions",
                f"taggedVersions must be open-ended 'N+', not {tagged}",
            )
        if tagged not in declared:
            raise fail(
                "tagged-versions",
                f"taggedVersions {tagged} must be a subset of " f"versions {declared}",
            )
        flexible = field_flexible if field_flexible is not None else self.flexible
        if tagged not in flexible:
            raise fail(
                "tagged-versions",
                f"taggedVersions {tagged} must lie inside the " f"flexible versions {flexible}",
            )
        overlap = nullable.intersect(tagged)
        if overlap and overlap != tagged:
            raise fail(
                "tagged-nullable",
                f"nullableVersions {nullable} must cover all "
                f"taggedVersions {tagged} or none of them",
            )
        if spec.get("mapKey"):
            raise fail("tagged-map-key", "a tagged field cannot be a mapKey")
        if ftype.text == "records":
            raise fail("tagged-records", "records fields cannot be tagged")

    def child_struct(
        self,
        spec: dict[str, Any],
        name: str,
        effective: Versions,
        parent: str,
        fail: Any,
    ) -> Struct:
        if name in self.common_specs:
            if "fields" in spec:
                raise fail(
                    "common-struct-redefined",
                    f"field uses common struct {name} but declares its own fields",
                )
            return self.common_struct(name)
        if "fields" not in spec:
            raise fail(
                "unknown-struct",
                f"struct type {name} has no fields and is not a common struct",
            )
        if name in self.defined_inline:
            raise fail("duplicate-struct", f"struct {name} is defined more than once")
        self.defined_inline.add(name)
        if effective.empty:
            raise fail(
                "struct-versions",
                f"struct {name} can never occur: its versions do not " f"meet those of {parent}",
            )
        return self.struct(
            name,
            effective,
            spec["fields"],
            about=str(spec.get("about", "")),
            common=False,
        )
