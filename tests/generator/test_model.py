"""Stage 3 (kafka_specgen.model): one test per semantic rule, plus naming and defaults."""

from __future__ import annotations

import copy
import json
import uuid
from typing import Any

import pytest

from kafka_specgen.errors import SpecError
from kafka_specgen.load import parse_spec_text
from kafka_specgen.model import EMPTY_STRUCT, Message, attribute_name, snake_case
from kafka_specgen.model_builder import build_messages
from kafka_specgen.schema import validate_spec
from kafka_specgen.versions import MAX_VERSION, Versions

SOURCE = "x/FooRequest.json"
RESPONSE_SOURCE = "x/FooResponse.json"


def request(fields: list[dict[str, Any]] | None = None, **top: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "apiKey": 99,
        "type": "request",
        "name": "FooRequest",
        "validVersions": "0-3",
        "flexibleVersions": "2+",
        "fields": (
            fields
            if fields is not None
            else [
                {"name": "Bar", "type": "int32", "versions": "0+", "about": "A bar."},
            ]
        ),
    }
    spec.update(top)
    return spec


def response() -> dict[str, Any]:
    return {
        "apiKey": 99,
        "type": "response",
        "name": "FooResponse",
        "validVersions": "0-3",
        "flexibleVersions": "2+",
        "fields": [{"name": "ErrorCode", "type": "int16", "versions": "0+"}],
    }


def build(*specs: tuple[str, dict[str, Any]], validate: bool = True) -> list[Message]:
    raws = [parse_spec_text(json.dumps(data), source) for source, data in specs]
    if validate:
        for raw in raws:
            validate_spec(raw)
    return build_messages(raws)


def build_one(data: dict[str, Any], *, validate: bool = True) -> Message:
    """Build ``data`` (at SOURCE) next to a matching response if it is a request."""
    specs = [(SOURCE, data)]
    if data.get("type") == "request":
        specs.append((RESPONSE_SOURCE, response()))
    messages = build(*specs, validate=validate)
    return next(m for m in messages if m.source == SOURCE)


def reject(
    data: dict[str, Any],
    rule: str,
    phrase: str,
    *,
    struct: str | None = None,
    field: str | None = None,
    validate: bool = True,
) -> SpecError:
    with pytest.raises(SpecError) as caught:
        build_one(data, validate=validate)
    exc = caught.value
    assert exc.rule == rule, str(exc)
    assert exc.source == SOURCE
    assert exc.struct == struct, str(exc)
    assert exc.field == field, str(exc)
    text = str(exc)
    where = SOURCE
    if struct:
        where += f": struct {struct}"
    if field:
        where += f", field {field}"
    assert text.startswith(where + ": "), text
    assert text.endswith(f"[rule: {rule}]"), text
    assert phrase in text, text
    return exc


def schema_rejects(data: dict[str, Any]) -> None:
    """Some rules are caught by the schema first; the model must still enforce them."""
    with pytest.raises(SpecError):
        validate_spec(parse_spec_text(json.dumps(data), SOURCE))


def with_field(extra: dict[str, Any], **top: Any) -> dict[str, Any]:
    """The base request with one more top-level field."""
    data = request(**top)
    data["fields"].append(extra)
    return data


def in_struct(*fields: dict[str, Any]) -> dict[str, Any]:
    """The base request with a struct array ``Items`` of element struct ``Item``."""
    return with_field(
        {
            "name": "Items",
            "type": "[]Item",
            "versions": "0+",
            "about": "Items.",
            "fields": list(fields),
        }
    )


# --- the valid base -------------------------------------------------------------------


def test_base_specs_build() -> None:
    message = build_one(request())
    assert message.name == "FooRequest"
    assert message.api_key == 99
    assert message.valid_versions == Versions(0, 3)
    assert message.flexible_versions == Versions(2, MAX_VERSION)
    assert message.warnings == ()


# --- message level --------------------------------------------------------------------


def test_message_type() -> None:
    data = request(type="coordinator-record")
    schema_rejects(data)
    reject(data, "message-type", "unknown message type 'coordinator-record'", validate=False)


def test_message_name() -> None:
    data = request(name="Foo_Request")
    schema_rejects(data)
    reject(data, "name", "message name 'Foo_Request'", validate=False)


def test_reserved_message_name() -> None:
    data = {
        "type": "data",
        "name": "DecodeError",
        "validVersions": "0",
        "flexibleVersions": "none",
        "fields": [],
    }
    reject(data, "reserved-name", "message name 'DecodeError' clashes")


def test_class_names_are_prefixed_with_the_message_name() -> None:
    data = request(
        fields=[
            {"name": "Topics", "type": "[]Topic", "versions": "0+", "fields": []},
            {"name": "Parts", "type": "[]FooRequestPart", "versions": "0+", "fields": []},
            # Names the module imports are harmless once prefixed.
            {"name": "Id", "type": "UUID", "versions": "0+", "fields": []},
        ]
    )
    message = build_one(data)
    names = {s.name: message.class_name(s) for s in (message.root, *message.structs)}
    assert names == {
        "FooRequest": "FooRequest",
        "Topic": "FooRequestTopic",
        "FooRequestPart": "FooRequestPart",
        "UUID": "FooRequestUUID",
    }


def test_two_structs_cannot_make_one_class_name() -> None:
    data = request(
        fields=[
            {"name": "A", "type": "[]Topic", "versions": "0+", "fields": []},
            {"name": "B", "type": "[]FooRequestTopic", "versions": "0+", "fields": []},
        ]
    )
    reject(
        data,
        "class-name",
        "structs Topic and FooRequestTopic would both be class FooRequestTopic",
        struct="FooRequestTopic",
    )


def test_valid_versions_open_ended() -> None:
    reject(request(validVersions="0+"), "valid-versions", "has no upper bound")


def test_removed_api_keeps_only_its_name_and_key() -> None:
    """Kafka 4.0's placeholders: validVersions none, no fields, flexibleVersions or
    listeners; whatever else they declare is ignored, as Kafka's generator does."""
    bare = {"apiKey": 99, "type": "request", "name": "FooRequest", "validVersions": "none"}
    removed_response = {**bare, "type": "response", "name": "FooResponse"}
    noisy = request(validVersions="none", listeners=["broker"], flexibleVersions="0+")
    for data in (bare, noisy):
        messages = build((SOURCE, data), (RESPONSE_SOURCE, removed_response))
        message = next(m for m in messages if m.source == SOURCE)
        assert message.removed and message.valid_versions.empty
        assert (message.api_key, message.api_name) == (99, "Foo")
        assert message.root.fields == () and message.structs == ()
        assert message.flexible_versions.empty and message.listeners == ()


def test_removed_api_needs_fields_only_when_it_has_versions() -> None:
    data = request()
    del data["fields"]
    with pytest.raises(SpecError) as caught:
        build_one(data)
    assert caught.value.rule == "missing-key" and "'fields'" in str(caught.value)


def test_only_an_api_can_be_removed() -> None:
    data = {"type": "data", "name": "FooData", "validVersions": "none"}
    with pytest.raises(SpecError) as caught:
        build(("x/FooData.json", data))
    assert caught.value.rule == "valid-versions"
    assert "validVersions of a data must not be 'none'" in str(caught.value)


def coordinator_record(kind: str, name: str, api_key: int = 1, **top: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "apiKey": api_key,
        "type": f"coordinator-{kind}",
        "name": name,
        "validVersions": "0" if kind == "key" else "0-2",
        "flexibleVersions": "none" if kind == "key" else "1+",
        "fields": [{"name": "Group", "type": "string", "versions": "0+"}],
    }
    spec.update(top)
    return spec


def test_coordinator_records_build_and_pair() -> None:
    messages = build(
        ("group-coordinator/AKey.json", coordinator_record("key", "AKey")),
        ("group-coordinator/AValue.json", coordinator_record("value", "AValue")),
        # Record type ids are numbered per coordinator: the same id in another folder.
        ("share-coordinator/BKey.json", coordinator_record("key", "BKey")),
        ("share-coordinator/BValue.json", coordinator_record("value", "BValue")),
    )
    assert [(m.name, m.type, m.api_key, m.scope) for m in messages] == [
        ("AKey", "coordinator-key", 1, "group-coordinator"),
        ("AValue", "coordinator-value", 1, "group-coordinator"),
        ("BKey", "coordinator-key", 1, "share-coordinator"),
        ("BValue", "coordinator-value", 1, "share-coordinator"),
    ]


@pytest.mark.parametrize(
    "top",
    [{"validVersions": "0-1"}, {"validVersions": "1"}, {"flexibleVersions": "0+"}],
)
def test_coordinator_key_has_version_0_only(top: dict[str, Any]) -> None:
    data = coordinator_record("key", "AKey", **top)
    with pytest.raises(SpecError) as caught:
        build(("g/AKey.json", data), ("g/AValue.json", coordinator_record("value", "AValue")))
    assert caught.value.rule == "coordinator-key"
    assert "validVersions 0 and flexibleVersions none" in str(caught.value)


def test_coordinator_record_needs_api_key_and_pair() -> None:
    key = coordinator_record("key", "AKey")
    del key["apiKey"]
    with pytest.raises(SpecError) as caught:
        build(("g/AKey.json", key))
    assert caught.value.rule == "api-key" and "coordinator-key message needs an apiKey" in str(
        caught.value
    )
    with pytest.raises(SpecError) as caught:
        build(("g/AKey.json", coordinator_record("key", "AKey")))
    assert caught.value.rule == "unpaired-api"
    assert "has a coordinator-key (AKey) but no coordinator-value" in str(caught.value)
    with pytest.raises(SpecError) as caught:
        build(
            ("g/AKey.json", coordinator_record("key", "AKey")),
            ("g/AValue.json", coordinator_record("value", "AValue")),
            ("g/BKey.json", coordinator_record("key", "BKey")),
        )
    assert caught.value.rule == "duplicate-api-key"


def test_flexible_versions_must_be_open_ended() -> None:
    reject(
        request(flexibleVersions="2-3"),
        "flexible-versions",
        "must be 'none' or open-ended 'N+', not 2-3",
    )


def test_missing_flexible_versions_is_a_warning() -> None:
    data = request()
    del data["flexibleVersions"]
    message = build_one(data)
    assert message.flexible_versions.empty
    assert len(message.warnings) == 1
    warning = message.warnings[0]
    assert warning.startswith(SOURCE + ": ")
    assert "flexibleVersions is missing" in warning
    assert "[rule: flexible-versions]" in warning


@pytest.mark.parametrize(
    ("kind", "key", "value"),
    [
        ("response", "listeners", ["broker"]),
        ("response", "latestVersionUnstable", True),
        ("data", "latestVersionUnstable", False),
    ],
)
def test_request_only_key(kind: str, key: str, value: Any) -> None:
    data = request(type=kind, name="FooData" if kind == "data" else "FooResponse")
    if kind == "data":
        del data["apiKey"]
    data[key] = value
    specs: list[tuple[str, dict[str, Any]]] = [(SOURCE, data)]
    if kind == "response":
        req = request()
        specs.append(("x/Other.json", req))
    with pytest.raises(SpecError) as caught:
        build(*specs)
    exc = caught.value
    assert (exc.rule, exc.source, exc.struct, exc.field) == ("request-only-key", SOURCE, None, None)
    assert f"{key} is only allowed on requests" in str(exc)


def test_listeners_allowed_on_requests() -> None:
    build_one(request(listeners=["broker"], latestVersionUnstable=True))


def test_api_key_missing() -> None:
    data = request()
    del data["apiKey"]
    reject(data, "api-key", "a request message needs an apiKey")


def test_api_key_on_data() -> None:
    data = request(type="data", name="FooData")
    reject(data, "api-key", "a data message has no apiKey")


def test_common_struct_name_capitalised() -> None:
    data = request(commonStructs=[{"name": "thing", "versions": "0+", "fields": []}])
    reject(data, "struct-name", "common struct name 'thing' must be capitalised", struct="thing")


def test_struct_named_like_its_message() -> None:
    data = with_field({"name": "Sub", "type": "FooRequest", "versions": "0+", "fields": []})
    reject(
        data, "struct-name", "struct FooRequest has the name of its message", struct="FooRequest"
    )


def test_duplicate_common_struct() -> None:
    common = {"name": "Thing", "versions": "0+", "fields": []}
    data = request(commonStructs=[common, copy.deepcopy(common)])
    reject(data, "duplicate-struct", "common struct Thing is defined twice", struct="Thing")


def test_duplicate_inline_struct() -> None:
    item = {"name": "A", "type": "int8", "versions": "0+"}
    data = request(
        fields=[
            {"name": "First", "type": "[]Item", "versions": "0+", "fields": [item]},
            {"name": "Second", "type": "Item", "versions": "0+", "fields": [item]},
        ]
    )
    reject(
        data,
        "duplicate-struct",
        "struct Item is defined more than once",
        struct="FooRequest",
        field="Second",
    )


# --- struct level ---------------------------------------------------------------------


def test_duplicate_field_name() -> None:
    data = in_struct(
        {"name": "A", "type": "int8", "versions": "0+"},
        {"name": "A", "type": "int16", "versions": "0+"},
    )
    reject(data, "duplicate-field", "field name A is used twice", struct="Item", field="A")


def test_duplicate_field_attribute() -> None:
    data = in_struct(
        {"name": "ABC", "type": "int8", "versions": "0+"},
        {"name": "Abc", "type": "int16", "versions": "0+"},
    )
    reject(
        data,
        "duplicate-field",
        "fields ABC and Abc both become attribute 'abc'",
        struct="Item",
        field="Abc",
    )


def test_duplicate_tag() -> None:
    data = in_struct(
        {"name": "A", "type": "int8", "versions": "2+", "taggedVersions": "2+", "tag": 0},
        {"name": "B", "type": "int8", "versions": "2+", "taggedVersions": "2+", "tag": 0},
    )
    reject(data, "duplicate-tag", "tag 0 is used twice", struct="Item")


def test_tag_gap() -> None:
    data = in_struct(
        {"name": "A", "type": "int8", "versions": "2+", "taggedVersions": "2+", "tag": 0},
        {"name": "B", "type": "int8", "versions": "2+", "taggedVersions": "2+", "tag": 2},
    )
    reject(data, "tag-gap", "tags must be contiguous from 0, got [0, 2]", struct="Item")


def test_tags_must_start_at_zero() -> None:
    data = with_field({"name": "T", "type": "int8", "taggedVersions": "2+", "tag": 1})
    reject(data, "tag-gap", "got [1]", struct="FooRequest")


# --- field level ----------------------------------------------------------------------


def test_field_name() -> None:
    data = in_struct({"name": "9Lives", "type": "int8", "versions": "0+"})
    schema_rejects(data)
    reject(data, "name", "field name '9Lives'", struct="Item", field="9Lives", validate=False)


@pytest.mark.parametrize(
    ("type_text", "phrase"),
    [
        ("[][]int32", "arrays of arrays"),
        ("lowercaseThing", "unknown type 'lowercaseThing'"),
        ("[]", "unknown type ''"),
    ],
)
def test_field_type(type_text: str, phrase: str) -> None:
    data = in_struct({"name": "A", "type": type_text, "versions": "0+"})
    schema_rejects(data)
    reject(data, "type", phrase, struct="Item", field="A", validate=False)


def test_field_needs_versions() -> None:
    data = in_struct({"name": "A", "type": "int8"})
    reject(data, "versions", "a field needs versions", struct="Item", field="A")


def test_nullable_type() -> None:
    data = in_struct({"name": "A", "type": "int32", "versions": "0+", "nullableVersions": "0+"})
    reject(data, "nullable-type", "type int32 cannot be nullable", struct="Item", field="A")


@pytest.mark.parametrize("type_text", ["string", "bytes", "records", "[]int32", "[]X", "X"])
def test_nullable_types_allowed(type_text: str) -> None:
    spec: dict[str, Any] = {
        "name": "A",
        "type": type_text,
        "versions": "0+",
        "nullableVersions": "1+",
    }
    if "X" in type_text:
        spec["fields"] = [{"name": "B", "type": "int8", "versions": "0+"}]
    build_one(in_struct(spec))


def test_fields_type() -> None:
    data = in_struct(
        {
            "name": "A",
            "type": "[]int32",
            "versions": "0+",
            "fields": [{"name": "B", "type": "int8", "versions": "0+"}],
        }
    )
    reject(data, "fields-type", "not []int32", struct="Item", field="A")


def test_field_flexible_type() -> None:
    data = in_struct({"name": "A", "type": "int32", "versions": "0+", "flexibleVersions": "none"})
    reject(data, "field-flexible", "only allowed on string and bytes", struct="Item", field="A")


def test_field_flexible_subset() -> None:
    data = in_struct({"name": "A", "type": "string", "versions": "0+", "flexibleVersions": "1+"})
    reject(data, "field-flexible", "must be a subset of the message's 2+", struct="Item", field="A")


def test_zero_copy() -> None:
    data = in_struct({"name": "A", "type": "string", "versions": "0+", "zeroCopy": True})
    reject(data, "zero-copy", "zeroCopy is only allowed on bytes", struct="Item", field="A")


def test_map_key_top_level() -> None:
    data = with_field({"name": "A", "type": "string", "versions": "0+", "mapKey": True})
    reject(data, "map-key", "mapKey is not allowed on top-level", struct="FooRequest", field="A")


def test_map_key_nested_allowed() -> None:
    message = build_one(
        in_struct({"name": "A", "type": "string", "versions": "0+", "mapKey": True})
    )
    item = next(s for s in message.structs if s.name == "Item")
    assert item.fields[0].map_key


def test_tag_without_tagged_versions() -> None:
    data = in_struct({"name": "A", "type": "int8", "versions": "2+", "tag": 0})
    reject(data, "tag", "tag is given but taggedVersions is missing", struct="Item", field="A")


def test_tagged_versions_without_tag() -> None:
    data = in_struct({"name": "A", "type": "int8", "versions": "2+", "taggedVersions": "2+"})
    reject(data, "tag", "taggedVersions is given but tag is missing", struct="Item", field="A")


def test_negative_tag() -> None:
    data = in_struct({"name": "A", "type": "int8", "taggedVersions": "2+", "tag": -1})
    schema_rejects(data)
    reject(data, "tag", "non-negative integer, not -1", struct="Item", field="A", validate=False)


def test_tagged_versions_open_ended() -> None:
    data = in_struct(
        {"name": "A", "type": "int8", "versions": "2+", "taggedVersions": "2-3", "tag": 0}
    )
    reject(data, "tagged-versions", "must be open-ended 'N+', not 2-3", struct="Item", field="A")


def test_tagged_versions_subset_of_versions() -> None:
    data = in_struct(
        {"name": "A", "type": "int8", "versions": "3+", "taggedVersions": "2+", "tag": 0}
    )
    reject(data, "tagged-versions", "must be a subset of versions 3+", struct="Item", field="A")


def test_tagged_versions_inside_flexible() -> None:
    data = in_struct(
        {"name": "A", "type": "int8", "versions": "0+", "taggedVersions": "1+", "tag": 0}
    )
    reject(data, "tagged-versions", "inside the flexible versions 2+", struct="Item", field="A")


def test_tagged_nullable_partial() -> None:
    data = in_struct(
        {
            "name": "A",
            "type": "string",
            "versions": "2+",
            "taggedVersions": "2+",
            "tag": 0,
            "nullableVersions": "3+",
        }
    )
    reject(
        data,
        "tagged-nullable",
        "must cover all taggedVersions 2+ or none",
        struct="Item",
        field="A",
    )


def test_tagged_map_key() -> None:
    data = in_struct(
        {
            "name": "A",
            "type": "string",
            "versions": "2+",
            "taggedVersions": "2+",
            "tag": 0,
            "mapKey": True,
        }
    )
    reject(data, "tagged-map-key", "cannot be a mapKey", struct="Item", field="A")


def test_tagged_records() -> None:
    data = in_struct(
        {"name": "A", "type": "records", "versions": "2+", "taggedVersions": "2+", "tag": 0}
    )
    reject(data, "tagged-records", "records fields cannot be tagged", struct="Item", field="A")


def test_entity_type_unknown_value() -> None:
    data = in_struct({"name": "A", "type": "string", "versions": "0+", "entityType": "clientId"})
    schema_rejects(data)
    reject(
        data,
        "entity-type",
        "unknown entityType 'clientId'",
        struct="Item",
        field="A",
        validate=False,
    )


@pytest.mark.parametrize(
    ("entity", "type_text"),
    [
        ("topicName", "int32"),
        ("brokerId", "int64"),
        ("producerId", "[]int32"),
        ("groupId", "[]uuid"),
    ],
)
def test_entity_type_mismatch(entity: str, type_text: str) -> None:
    data = in_struct({"name": "A", "type": type_text, "versions": "0+", "entityType": entity})
    reject(data, "entity-type", f"entityType {entity} needs type", struct="Item", field="A")


@pytest.mark.parametrize(
    ("entity", "type_text"),
    [
        ("topicName", "string"),
        ("brokerId", "[]int32"),
        ("producerId", "int64"),
        ("transactionalId", "[]string"),
        ("unknown", "uuid"),
    ],
)
def test_entity_type_match(entity: str, type_text: str) -> None:
    message = build_one(
        in_struct({"name": "A", "type": type_text, "versions": "0+", "entityType": entity})
    )
    item = next(s for s in message.structs if s.name == "Item")
    assert item.fields[0].entity_type == entity


def test_common_struct_redefined() -> None:
    data = with_field(
        {
            "name": "C",
            "type": "Thing",
            "versions": "0+",
            "fields": [{"name": "B", "type": "int8", "versions": "0+"}],
        },
        commonStructs=[
            {
                "name": "Thing",
                "versions": "0+",
                "fields": [{"name": "B", "type": "int8", "versions": "0+"}],
            }
        ],
    )
    reject(
        data,
        "common-struct-redefined",
        "uses common struct Thing but declares",
        struct="FooRequest",
        field="C",
    )


def test_unknown_struct() -> None:
    data = in_struct({"name": "A", "type": "[]Missing", "versions": "0+"})
    reject(data, "unknown-struct", "struct type Missing has no fields", struct="Item", field="A")


def test_struct_versions_never_meet() -> None:
    data = with_field(
        {
            "name": "Late",
            "type": "Later",
            "versions": "5+",
            "fields": [{"name": "B", "type": "int8", "versions": "0+"}],
        }
    )
    reject(
        data, "struct-versions", "struct Later can never occur", struct="FooRequest", field="Late"
    )


def test_struct_versions_nested() -> None:
    data = with_field(
        {
            "name": "Outer",
            "type": "[]OuterItem",
            "versions": "0-1",
            "fields": [
                {
                    "name": "Inner",
                    "type": "InnerItem",
                    "versions": "2+",
                    "fields": [{"name": "B", "type": "int8", "versions": "0+"}],
                },
            ],
        }
    )
    reject(data, "struct-versions", "those of OuterItem", struct="OuterItem", field="Inner")


def test_null_default_needs_nullable_everywhere() -> None:
    data = in_struct(
        {
            "name": "A",
            "type": "string",
            "versions": "0+",
            "nullableVersions": "1+",
            "default": "null",
        }
    )
    reject(data, "null-default", "default 'null' needs nullableVersions", struct="Item", field="A")


def test_null_default_on_non_nullable() -> None:
    data = in_struct({"name": "A", "type": "[]int32", "versions": "0+", "default": "null"})
    reject(
        data, "null-default", "every version of the field (0+), not none", struct="Item", field="A"
    )


@pytest.mark.parametrize(
    ("type_text", "default", "phrase"),
    [
        ("int8", "128", "int8 default 128 is outside -128..127"),
        ("int8", "-129", "outside"),
        ("int16", "32768", "outside"),
        ("int32", "2147483648", "outside"),
        ("int32", "0x80000000", "outside"),
        ("int64", "9223372036854775808", "outside"),
        ("uint16", "-1", "outside 0..65535"),
        ("uint16", "65536", "outside"),
        ("uint32", "4294967296", "outside 0..4294967295"),
        ("int32", "abc", "int32 default 'abc' is not a number"),
        ("int32", "1.5", "is not a number"),
        ("int32", "0xZZ", "is not a number"),
        ("int32", "0x", "is not a number"),
        ("int16", "--5", "is not a number"),
        ("int16", "+-5", "is not a number"),
        ("bool", "yes", "bool default must be true or false"),
        ("bool", "1", "bool default must be true or false"),
        ("float64", "abc", "float64 default 'abc' is not a number"),
        ("uuid", "abc", "is not base64 of 16 bytes"),
        ("uuid", "AAAAAAAAAAAAAAAAAAAA", "is not base64 of 16 bytes"),
        ("uuid", "AAAAAAAAAAAAAAAAAAAAAA!!", "is not base64 of 16 bytes"),
        # '+' and '/' are not in the base64url alphabet Kafka's Uuid.fromString decodes
        ("uuid", "AAAAAAAAAAAAAAAAAAAA+/", "is not base64 of 16 bytes"),
        ("bytes", "abc", "only takes an empty or 'null' default"),
        ("records", "x", "only takes an empty or 'null' default"),
        ("[]int32", "[1]", "only takes an empty or 'null' default"),
        ("[]int32", "1", "only takes an empty or 'null' default"),
    ],
)
def test_bad_default(type_text: str, default: str, phrase: str) -> None:
    data = in_struct({"name": "A", "type": type_text, "versions": "0+", "default": default})
    reject(data, "bad-default", phrase, struct="Item", field="A")


def test_bad_default_struct() -> None:
    data = in_struct(
        {
            "name": "A",
            "type": "Sub",
            "versions": "0+",
            "default": "x",
            "fields": [{"name": "B", "type": "int8", "versions": "0+"}],
        }
    )
    reject(data, "bad-default", "only takes an empty or 'null' default", struct="Item", field="A")


@pytest.mark.parametrize(
    ("source", "text", "phrase"),
    [
        ("field", "99999", "above 32767"),
        ("field", "3-1", "3 is above 1"),
        ("nullable", "40000+", "above 32767"),
    ],
)
def test_bad_versions_on_field(source: str, text: str, phrase: str) -> None:
    key = "versions" if source == "field" else "nullableVersions"
    spec: dict[str, Any] = {"name": "A", "type": "string", "versions": "0+"}
    spec[key] = text
    reject(in_struct(spec), "bad-versions", phrase, struct="Item", field="A")


def test_bad_valid_versions() -> None:
    reject(request(validVersions="5-2"), "bad-versions", "validVersions")


def test_bad_common_struct_versions() -> None:
    data = with_field(
        {"name": "C", "type": "Thing", "versions": "0+"},
        commonStructs=[{"name": "Thing", "versions": "7-1", "fields": []}],
    )
    reject(data, "bad-versions", "7 is above 1", struct="Thing")


# --- across files ---------------------------------------------------------------------


def test_duplicate_message() -> None:
    other = request(type="data", name="FooRequest")
    del other["apiKey"]
    with pytest.raises(SpecError) as caught:
        build((SOURCE, request()), (RESPONSE_SOURCE, response()), ("y/FooRequest.json", other))
    exc = caught.value
    assert exc.rule == "duplicate-message"
    assert {exc.source} <= {SOURCE, "y/FooRequest.json"}
    assert "message FooRequest is also defined in" in str(exc)
    assert str(exc).endswith("[rule: duplicate-message]")


def test_duplicate_api_key() -> None:
    second = request(name="BarRequest")
    with pytest.raises(SpecError) as caught:
        build((SOURCE, request()), (RESPONSE_SOURCE, response()), ("x/BarRequest.json", second))
    exc = caught.value
    assert exc.rule == "duplicate-api-key"
    assert "request api key 99 is also used by" in str(exc)
    assert exc.source in (SOURCE, "x/BarRequest.json")


def test_metadata_api_keys_are_per_folder() -> None:
    record = {
        "apiKey": 1,
        "type": "metadata",
        "name": "ARecord",
        "validVersions": "0",
        "flexibleVersions": "0+",
        "fields": [],
    }
    other = dict(record, name="BRecord")
    build(("metadata/ARecord.json", record), ("storage/BRecord.json", other))
    with pytest.raises(SpecError) as caught:
        build(("metadata/ARecord.json", record), ("metadata/BRecord.json", other))
    assert caught.value.rule == "duplicate-api-key"


def test_unpaired_api() -> None:
    with pytest.raises(SpecError) as caught:
        build((SOURCE, request()))
    exc = caught.value
    assert (exc.rule, exc.source) == ("unpaired-api", SOURCE)
    assert "api key 99 has a request (FooRequest) but no response" in str(exc)


# --- positive: names, defaults, versions ----------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ThrottleTimeMs", "throttle_time_ms"),
        ("V3AndBelowTopics", "v3_and_below_topics"),
        ("validateOnly", "validate_only"),
        ("ABCDef", "abc_def"),
        ("ErrorCode", "error_code"),
        ("Id", "id"),
        ("UUID", "uuid"),
        ("TopicId2", "topic_id2"),
    ],
)
def test_snake_case(name: str, expected: str) -> None:
    assert snake_case(name) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Class", "class_"),
        ("Encode", "encode_"),
        ("Decode", "decode_"),
        ("ToDict", "to_dict_"),
        ("Version", "version_"),
        ("Data", "data_"),
        ("Offset", "offset_"),
        ("Self", "self_"),
        ("Import", "import_"),
        ("Match", "match_"),
        ("None", "none"),
        ("Topics", "topics"),
    ],
)
def test_attribute_name_escaping(name: str, expected: str) -> None:
    assert attribute_name(name) == expected


def test_escaped_attributes_in_model() -> None:
    message = build_one(
        in_struct(
            {"name": "Class", "type": "int8", "versions": "0+"},
            {"name": "Encode", "type": "int8", "versions": "0+"},
        )
    )
    item = next(s for s in message.structs if s.name == "Item")
    assert [f.attr for f in item.fields] == ["class_", "encode_"]


def default_of(spec: dict[str, Any]) -> Any:
    message = build_one(in_struct(dict({"name": "A", "versions": "0+"}, **spec)))
    item = next(s for s in message.structs if s.name == "Item")
    return item.fields[0].default


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"type": "int32", "default": "0x7fffffff"}, 2147483647),
        ({"type": "int32", "default": "0X10"}, 16),
        ({"type": "int64", "default": "-1"}, -1),
        ({"type": "int32", "default": "-2147483648"}, -(2**31)),
        ({"type": "int8", "default": -1}, -1),  # a JSON number
        ({"type": "uint16", "default": "65535"}, 65535),
        ({"type": "uint32", "default": "4294967295"}, 4294967295),
        ({"type": "int32"}, 0),
        ({"type": "bool", "default": "true"}, True),
        ({"type": "bool", "default": "FALSE"}, False),
        ({"type": "bool", "default": True}, True),  # a JSON boolean
        ({"type": "bool"}, False),
        ({"type": "float64", "default": "1.5"}, 1.5),
        ({"type": "float64", "default": "-2e3"}, -2000.0),
        ({"type": "float64"}, 0.0),
        ({"type": "string", "default": "abc"}, "abc"),
        ({"type": "string", "default": ""}, ""),
        ({"type": "string"}, ""),
        ({"type": "string", "nullableVersions": "0+", "default": "null"}, None),
        ({"type": "bytes", "nullableVersions": "0+", "default": "null"}, None),
        ({"type": "[]int32", "nullableVersions": "0+", "default": "null"}, None),
        ({"type": "bytes"}, b""),
        ({"type": "[]string"}, []),
        ({"type": "uuid"}, uuid.UUID(int=0)),
        ({"type": "uuid", "default": "AAAAAAAAAAAAAAAAAAAAAQ"}, uuid.UUID(int=1)),
        ({"type": "uuid", "default": "_____________________w"}, uuid.UUID(int=2**128 - 1)),
        ({"type": "records", "nullableVersions": "0+"}, None),
        ({"type": "records"}, b""),
    ],
)
def test_defaults_normalised(spec: dict[str, Any], expected: Any) -> None:
    value = default_of(spec)
    assert value == expected
    assert type(value) is type(expected)


def test_struct_default_is_empty_struct() -> None:
    value = default_of({"type": "Sub", "fields": [{"name": "B", "type": "int8", "versions": "0+"}]})
    assert value is EMPTY_STRUCT


def test_effective_versions_intersect_parent() -> None:
    data = request(
        fields=[
            {
                "name": "Outer",
                "type": "[]OuterItem",
                "versions": "1-2",
                "fields": [
                    {"name": "A", "type": "int8", "versions": "0+"},
                    {"name": "B", "type": "int8", "versions": "2+"},
                    {
                        "name": "Inner",
                        "type": "InnerItem",
                        "versions": "0+",
                        "fields": [
                            {"name": "C", "type": "int8", "versions": "0-1"},
                        ],
                    },
                ],
            },
            {"name": "Late", "type": "int8", "versions": "3+"},
            {"name": "Gone", "type": "int8", "versions": "0-1"},
        ]
    )
    message = build_one(data)
    top = {f.name: f.versions for f in message.root.fields}
    # top-level fields are clipped to validVersions 0-3
    assert top == {"Outer": Versions(1, 2), "Late": Versions(3, 3), "Gone": Versions(0, 1)}
    structs = {s.name: s for s in message.structs}
    assert structs["OuterItem"].versions == Versions(1, 2)
    outer = {f.name: f.versions for f in structs["OuterItem"].fields}
    assert outer == {"A": Versions(1, 2), "B": Versions(2, 2), "Inner": Versions(1, 2)}
    assert structs["InnerItem"].versions == Versions(1, 2)
    assert structs["InnerItem"].fields[0].versions == Versions(1, 1)
    # children come before their parents
    assert [s.name for s in message.structs] == ["InnerItem", "OuterItem"]


def test_tagged_only_field_takes_tagged_versions() -> None:
    message = build_one(
        with_field({"name": "T", "type": "int64", "taggedVersions": "2+", "tag": 0})
    )
    field = message.root.fields[-1]
    assert field.tag == 0
    assert field.versions == Versions(2, 3)  # taggedVersions, clipped to validVersions
    assert field.tagged_versions == Versions(2, MAX_VERSION)


def test_common_struct_versions_and_sharing() -> None:
    data = request(
        fields=[
            {"name": "A", "type": "Thing", "versions": "0+"},
            {
                "name": "Bs",
                "type": "[]Holder",
                "versions": "1+",
                "fields": [
                    {"name": "B", "type": "[]Thing", "versions": "0+"},
                ],
            },
        ],
        commonStructs=[
            {
                "name": "Thing",
                "versions": "0+",
                "fields": [{"name": "X", "type": "int8", "versions": "0+"}],
            },
            {"name": "Unused", "versions": "1+", "fields": []},
        ],
    )
    message = build_one(data)
    structs = {s.name: s for s in message.structs}
    assert structs["Thing"].common and not structs["Holder"].common
    assert structs["Thing"].versions == Versions(0, 3)
    assert structs["Unused"].versions == Versions(1, 3)
    a = message.root.fields[0]
    b = structs["Holder"].fields[0]
    assert a.struct is b.struct is structs["Thing"]


def test_kafka_4_x_field_forms() -> None:
    """Forms first seen in Kafka 4.x specs: a JSON null default on an array (4.2's
    StreamsGroupMetadataValue, "no default": the empty array), also on a tagged field
    without versions; nullableVersions starting below validVersions (4.1's
    ShareFetchResponse records: "0" in a 1+ message)."""
    fields = [
        {"name": "Epochs", "type": "[]int32", "versions": "0+", "default": None},
        {
            "name": "Configs",
            "type": "[]int32",
            "taggedVersions": "2+",
            "tag": 0,
            "default": None,
        },
        {"name": "Records", "type": "records", "versions": "1+", "nullableVersions": "0+"},
    ]
    message = build_one(request(fields=fields, validVersions="1-3"))
    epochs, configs, records = message.root.fields
    assert epochs.default == [] and configs.default == []
    assert configs.versions == Versions(2, MAX_VERSION).intersect(Versions(1, 3))
    assert records.nullable_versions == Versions(0, MAX_VERSION)
    assert records.nullable_everywhere and records.default is None
