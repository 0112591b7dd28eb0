"""Stage 2 (kafka_specgen.schema): the JSON Schema of the spec format and its error messages."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped, unused-ignore]

from kafka_specgen.errors import SpecError
from kafka_specgen.load import RawSpec, parse_spec_text
from kafka_specgen.schema import SCHEMA_PATH, validate_spec
from kafka_specgen import history

SOURCE = "message/FooRequest.json"

#: Every spec set of the tool's bundle: Kafka 2.4.0 ... 4.3.1, trunk-2024-10, kafka-python's.
CORPUS_REFS = history.set_names()


def foo_request() -> dict[str, Any]:
    """A small valid spec using most keys; tests break one thing in a copy of it."""
    return {
        "apiKey": 99,
        "type": "request",
        "listeners": ["zkBroker", "broker", "controller"],
        "name": "FooRequest",
        "validVersions": "0-3",
        "flexibleVersions": "2+",
        "deprecatedVersions": "0",
        "latestVersionUnstable": False,
        "fields": [
            {"name": "Bar", "type": "string", "versions": "0+", "nullableVersions": "1+",
             "default": "null", "about": "A bar.", "entityType": "topicName"},
            {"name": "Topics", "type": "[]TopicData", "versions": "0+", "fields": [
                {"name": "Name", "type": "string", "versions": "0+", "mapKey": True},
                {"name": "Partitions", "type": "[]int32", "versions": "1-3", "ignorable": True},
                {"name": "Data", "type": "bytes", "versions": "0+", "zeroCopy": True,
                 "flexibleVersions": "none"},
            ]},
            {"name": "Common", "type": "CommonThing", "versions": "0+"},
            {"name": "Tagged", "type": "int64", "taggedVersions": "2+", "tag": 0},
        ],
        "commonStructs": [
            {"name": "CommonThing", "versions": "0+", "fields": [
                {"name": "Id", "type": "uuid", "versions": "0+"},
            ]},
        ],
    }  # fmt: skip


def rejection(data: dict[str, Any]) -> SpecError:
    with pytest.raises(SpecError) as caught:
        validate_spec(RawSpec(SOURCE, data, ()))
    assert caught.value.source == SOURCE
    return caught.value


def test_schema_file_is_a_valid_draft_2020_12_schema() -> None:
    Draft202012Validator.check_schema(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))


def test_the_example_spec_is_valid() -> None:
    validate_spec(RawSpec(SOURCE, foo_request(), ()))


def test_optional_keys_may_be_left_out() -> None:
    # No flexibleVersions (Kafka 2.4/2.8), no apiKey, and a tagged-only field without versions.
    data = {
        "type": "data",
        "name": "Foo",
        "validVersions": "0",
        "fields": [{"name": "X", "type": "int8", "taggedVersions": "0+", "tag": 0}],
    }
    validate_spec(RawSpec(SOURCE, data, ()))


# --- unknown keys -----------------------------------------------------------------------


def test_unknown_key_at_top_level() -> None:
    data = foo_request()
    data["flexibleVersion"] = "0+"
    error = rejection(data)
    assert (error.rule, error.struct, error.field) == (
        "unknown-key",
        "FooRequest",
        None,
    )
    assert str(error) == (
        f"{SOURCE}: struct FooRequest: unknown key 'flexibleVersion' "
        "(did you mean 'flexibleVersions'?) [rule: unknown-key]"
    )


def test_unknown_key_in_a_field() -> None:
    data = foo_request()
    data["fields"][0]["nulableVersions"] = "0+"
    error = rejection(data)
    assert (error.rule, error.struct, error.field) == (
        "unknown-key",
        "FooRequest",
        "Bar",
    )
    assert str(error) == (
        f"{SOURCE}: struct FooRequest, field Bar: unknown key 'nulableVersions' "
        "(did you mean 'nullableVersions'?) [rule: unknown-key]"
    )


def test_unknown_key_in_a_nested_field_names_the_nested_struct() -> None:
    data = foo_request()
    data["fields"][1]["fields"][1]["colour"] = "blue"
    error = rejection(data)
    assert (error.rule, error.struct, error.field) == (
        "unknown-key",
        "TopicData",
        "Partitions",
    )
    assert error.message == "unknown key 'colour'"


def test_unknown_key_in_a_common_struct_field() -> None:
    data = foo_request()
    data["commonStructs"][0]["fields"][0]["about2"] = "x"
    data["commonStructs"][0]["fields"][0]["extra"] = "y"
    error = rejection(data)
    assert (error.rule, error.struct, error.field) == (
        "unknown-key",
        "CommonThing",
        "Id",
    )
    assert error.message == "unknown keys 'about2', 'extra'"


def test_unknown_key_on_a_common_struct_itself() -> None:
    data = foo_request()
    data["commonStructs"][0]["about"] = "x"
    error = rejection(data)
    assert (error.rule, error.struct, error.field) == (
        "unknown-key",
        "CommonThing",
        None,
    )


# --- missing keys -----------------------------------------------------------------------


def test_missing_top_level_key() -> None:
    data = foo_request()
    del data["validVersions"]
    error = rejection(data)
    assert (error.rule, error.struct, error.field) == (
        "missing-key",
        "FooRequest",
        None,
    )
    assert error.message == "missing required key 'validVersions'"


def test_missing_field_type() -> None:
    data = foo_request()
    del data["fields"][1]["fields"][0]["type"]
    error = rejection(data)
    assert (error.rule, error.struct, error.field) == (
        "missing-key",
        "TopicData",
        "Name",
    )
    assert error.message == "missing required key 'type'"


def test_a_field_without_a_name_is_pointed_at_by_position() -> None:
    data = foo_request()
    del data["fields"][1]["fields"][2]["name"]
    error = rejection(data)
    assert (error.rule, error.struct, error.field) == ("missing-key", "TopicData", None)
    assert str(error) == (
        f"{SOURCE}: struct TopicData: fields[2]: missing required key 'name' [rule: missing-key]"
    )


def test_a_common_struct_needs_versions() -> None:
    data = foo_request()
    del data["commonStructs"][0]["versions"]
    error = rejection(data)
    assert (error.rule, error.struct, error.message) == (
        "missing-key",
        "CommonThing",
        "missing required key 'versions'",
    )


def test_a_misspelt_key_is_reported_as_unknown_rather_than_missing() -> None:
    data = foo_request()
    data["fields"][0]["nmae"] = data["fields"][0].pop("name")
    error = rejection(data)
    assert error.rule == "unknown-key"
    assert error.message == "fields[0]: unknown key 'nmae' (did you mean 'name'?)"


# --- bad values -------------------------------------------------------------------------


@pytest.mark.parametrize("versions", ["0-", "1.0", "all", "+3", "3-1-2", "", "None"])
def test_bad_version_strings(versions: str) -> None:
    data = foo_request()
    data["fields"][0]["nullableVersions"] = versions
    error = rejection(data)
    assert (error.rule, error.struct, error.field) == ("bad-value", "FooRequest", "Bar")
    assert error.message == (
        f"bad value {versions!r} for 'nullableVersions': "
        "expected a version string: none, N, A-B or N+"
    )


@pytest.mark.parametrize("versions", ["none", "7", "0-17", "12+", " 3+ "])
def test_good_version_strings(versions: str) -> None:
    data = foo_request()
    data["validVersions"] = versions
    validate_spec(RawSpec(SOURCE, data, ()))


@pytest.mark.parametrize("name", ["Foo-Request", "1Foo", "Foo Request", "", "Foo\n", "Fóo"])
def test_bad_message_names(name: str) -> None:
    data = foo_request()
    data["name"] = name
    error = rejection(data)
    assert error.rule == "bad-value"
    assert error.message == (
        f"bad value {name!r} for 'name': expected a name of letters and digits starting with a letter"
    )


def test_bad_field_name() -> None:
    data = foo_request()
    data["fields"][1]["fields"][0]["name"] = "topic_name"
    error = rejection(data)
    assert (error.rule, error.struct, error.field) == (
        "bad-value",
        "TopicData",
        "topic_name",
    )


def test_bad_message_type() -> None:
    data = foo_request()
    data["type"] = "coordinator-record"
    error = rejection(data)
    assert (error.rule, error.struct) == ("bad-value", "FooRequest")
    assert error.message == (
        "bad value 'coordinator-record' for 'type': expected one of request, response, "
        "header, metadata, data, coordinator-key, coordinator-value"
    )


def test_fields_are_required_unless_the_api_was_removed() -> None:
    data = foo_request()
    del data["fields"]
    error = rejection(data)
    assert (error.rule, error.message) == ("missing-key", "missing required key 'fields'")
    data["validVersions"] = "none"
    validate_spec(parse_spec_text(json.dumps(data), "FooRequest.json"))


def test_bad_listener_names_the_position() -> None:
    data = foo_request()
    data["listeners"] = ["broker", "zookeeper"]
    error = rejection(data)
    assert error.message == (
        "bad value 'zookeeper' for 'listeners[1]': expected one of zkBroker, broker, controller"
    )


def test_bad_entity_type() -> None:
    data = foo_request()
    data["fields"][0]["entityType"] = "topic"
    error = rejection(data)
    assert (error.rule, error.field) == ("bad-value", "Bar")
    assert "bad value 'topic' for 'entityType': expected one of brokerId," in error.message


@pytest.mark.parametrize("field_type", ["int23", "[][]int8", "[]", "lowerStruct", "Int32 "])
def test_bad_field_types(field_type: str) -> None:
    data = foo_request()
    data["fields"][0]["type"] = field_type
    error = rejection(data)
    assert (error.rule, error.field) == ("bad-value", "Bar")
    assert error.message == (
        f"bad value {field_type!r} for 'type': "
        "expected a primitive type, []Type or a capitalised struct name"
    )


@pytest.mark.parametrize("tag", [-1, 1.0, "0", True])
def test_tag_must_be_a_non_negative_int(tag: Any) -> None:
    data = foo_request()
    data["fields"][3]["tag"] = tag
    error = rejection(data)
    assert (error.rule, error.field) == ("bad-value", "Tagged")
    assert error.message == f"bad value {tag!r} for 'tag': expected a non-negative integer"


@pytest.mark.parametrize("api_key", [-1, 32768, "3"])
def test_api_key_range(api_key: Any) -> None:
    data = foo_request()
    data["apiKey"] = api_key
    assert rejection(data).message == (
        f"bad value {api_key!r} for 'apiKey': expected an integer API key from 0 to 32767"
    )


def test_flags_must_be_booleans() -> None:
    data = foo_request()
    data["fields"][1]["fields"][0]["mapKey"] = "yes"
    error = rejection(data)
    assert (error.struct, error.field) == ("TopicData", "Name")
    assert error.message == "bad value 'yes' for 'mapKey': expected true or false"


def test_default_must_be_a_string_after_loading() -> None:
    data = foo_request()
    data["fields"][0]["default"] = {"value": 1}
    assert rejection(data).message == (
        "bad value {'value': 1} for 'default': expected a string, number or boolean"
    )


def test_fields_must_be_a_list_of_objects() -> None:
    data = foo_request()
    data["fields"][1]["fields"] = {"name": "Oops"}
    error = rejection(data)
    assert (error.struct, error.field) == ("FooRequest", "Topics")
    assert (
        error.message
        == "bad value {'name': 'Oops'} for 'fields': expected an array of field objects"
    )
    data["fields"][1]["fields"] = ["Oops"]
    assert rejection(data).message == "bad value 'Oops' for 'fields[0]': expected a field object"


def test_long_values_are_shortened_in_messages() -> None:
    data = foo_request()
    data["fields"][0]["about"] = ["x" * 200]
    message = rejection(data).message
    assert message.startswith("bad value ['xxx")
    assert "..." in message and len(message) < 120


# --- which error is reported ------------------------------------------------------------


def test_the_first_error_by_position_is_reported() -> None:
    data = foo_request()
    data["fields"] = [copy.deepcopy(data["fields"][0]) for _ in range(11)]
    for index, field in enumerate(data["fields"]):
        field["name"] = f"F{index}"
    data["fields"][10]["versions"] = "bad"
    data["fields"][2]["versions"] = "bad"
    assert rejection(data).field == "F2"


def test_the_reported_error_does_not_depend_on_key_order() -> None:
    data = foo_request()
    data["fields"][0]["versions"] = "bad"
    data["zzz"] = 1
    reordered = dict(reversed(list(data.items())))
    assert str(rejection(data)) == str(rejection(reordered))


# --- the real corpus --------------------------------------------------------------------


@pytest.mark.parametrize("ref", CORPUS_REFS)
def test_every_corpus_spec_loads_and_passes_the_schema(ref: str) -> None:
    specs = history.set_specs(ref)
    assert len(specs) >= 98
    for raw in specs:
        validate_spec(raw)
    warned = [raw.source for raw in specs if raw.warnings]
    # Only 2.8.0's DescribeProducersRequest.json has trailing tokens.
    assert warned == (["2.8.0/message/DescribeProducersRequest.json"] if ref == "2.8.0" else [])
