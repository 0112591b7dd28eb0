"""Encoders refuse bad values with an ``EncodeError`` naming the field path and version.

Out-of-range integers (every integer wire type, at both ends, in plain fields, arrays and
nested structs), wrong types, ``None`` in a non-nullable field (also where the field turns
nullable only in later versions), strings longer than 32767 UTF-8 bytes (classic and
compact), strings that are not UTF-8 encodable. Each case checks the exception class, the
dotted path (with list indexes), ``.version`` and the message text.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType
from typing import Any, Callable
from uuid import UUID

import pytest

from tests.support.genpkg import generate_package

ALL_FEATURES = Path(__file__).resolve().parents[1] / "specs" / "all_features"
PACKAGE = "encode_errors_pkg"


@pytest.fixture(scope="module")
def af(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    generate_package([ALL_FEATURES], tmp_path_factory.mktemp("encode_errors"), PACKAGE)
    return importlib.import_module(f"{PACKAGE}.all_features")


@pytest.fixture(scope="module")
def af_errors(af: ModuleType) -> ModuleType:
    return importlib.import_module(f"{PACKAGE}.errors")


@pytest.fixture(scope="module")
def km() -> ModuleType:
    import sys

    generated = str(Path(__file__).resolve().parents[2] / "generated")
    if generated not in sys.path:
        sys.path.insert(0, generated)
    return importlib.import_module("kafka_messages")


#: Set by ``KAFKA_MESSAGES_COMPILED=1`` (see conftest.py): the committed package is mypyc's build.
COMPILED = os.environ.get("KAFKA_MESSAGES_COMPILED") == "1"


def expect(
    errors: ModuleType,
    build: Callable[[], Any],
    version: int,
    path: str,
    reason: str,
    *,
    wrong_type: bool = False,
) -> Any:
    if wrong_type and COMPILED:
        # mypyc's native classes check each attribute's declared type when it is set, so
        # a wrongly typed value fails on construction, before any encode.
        with pytest.raises(TypeError):
            build()
        return None
    obj = build()
    with pytest.raises(errors.EncodeError) as info:
        obj.encode(version)
    exc = info.value
    assert type(exc) is errors.EncodeError
    assert exc.path == path, str(exc)
    assert exc.version == version
    assert reason in exc.reason, str(exc)
    assert str(exc).startswith(f"{path} at version {version}: ")
    return exc


# --- the all-features spec: every wire type -------------------------------------------

R = "AllFeaturesRequest"

INT_CASES = [
    # (attr, too small, too big, type)
    ("int8_field", -129, 128, "int8"),
    ("int16_field", -(2**15) - 1, 2**15, "int16"),
    ("int32_field", -(2**31) - 1, 2**31, "int32"),
    ("int64_field", -(2**63) - 1, 2**63, "int64"),
    ("uint16_field", -1, 2**16, "uint16"),
    ("uint32_field", -1, 2**32, "uint32"),
]


@pytest.mark.parametrize("version", [0, 2, 3])
@pytest.mark.parametrize("attr,low,high,kind", INT_CASES, ids=[c[0] for c in INT_CASES])
def test_int_out_of_range(
    af: ModuleType, af_errors: ModuleType, version: int, attr: str, low: int, high: int, kind: str
) -> None:
    for value in (low, high):
        expect(
            af_errors,
            lambda: af.AllFeaturesRequest(**{attr: value}),
            version,
            f"{R}.{attr}",
            f"{value} is out of range for {kind}",
        )


def test_int_out_of_range_in_arrays_and_nested_structs(
    af: ModuleType, af_errors: ModuleType
) -> None:
    A = af.AllFeaturesRequest
    expect(
        af_errors,
        lambda: A(int32_array=[1, 2, 2**31]),
        1,
        f"{R}.int32_array",
        "item 2: 2147483648 is out of range for int32",
    )
    expect(af_errors, lambda: A(int64_array=[-(2**63) - 1]), 3, f"{R}.int64_array", "item 0: ")
    expect(
        af_errors,
        lambda: A(int8_array=[0, 300]),
        2,
        f"{R}.int8_array",
        "item 1: 300 is out of range for int8",
    )

    def deep() -> Any:
        replica = af.AllFeaturesRequestReplica(
            broker_id=1, info=af.AllFeaturesRequestCommonInfo(host="h", port=70000)
        )
        return A(
            topics=[
                af.AllFeaturesRequestTopicData(name="a"),
                af.AllFeaturesRequestTopicData(
                    partitions=[af.AllFeaturesRequestPartitionData(replicas=[replica])]
                ),
            ]
        )

    # CommonInfo.Port: look the type up rather than assume it.
    exc = expect(
        af_errors,
        deep,
        2,
        f"{R}.topics[1].partitions[0].replicas[0].info.port",
        "70000 is out of range",
    )
    assert "uint16" in exc.reason or "int32" in exc.reason or "int16" in exc.reason


WRONG_TYPES = [
    ("int16_field", "7", "expected an int for int16, got str"),
    ("int32_field", 1.5, "expected an int for int32, got float"),
    ("float64_field", "x", "expected float64, got str"),
    ("string_field", b"bytes", "expected string, got bytes"),
    ("bytes_field", "text", "expected bytes, got str"),
    ("uuid_field", "0123", "expected uuid, got str"),
    ("records_field", 12, "expected records, got int"),
    ("string_array", ["a", 3], "item 1: expected string, got int"),
    ("int32_array", "ab", "expected a tuple or a list, got str"),
    ("int64_array", "ab", "expected a tuple or a list, got str"),
]


def assigned(cls: Any, attr: str, value: Any) -> Any:
    """``cls()`` with ``value`` set after construction: the encoder sees it as it is (a
    constructor makes any iterable given for an array into a tuple)."""
    obj = cls()
    setattr(obj, attr, value)
    return obj


#: The two ways a value reaches the encoder: through the constructor, or set afterwards.
BUILDS = ["constructor", "assigned"]


def build(cls: Any, how: str, attr: str, value: Any) -> Callable[[], Any]:
    if how == "constructor":
        return lambda: cls(**{attr: value})
    return lambda: assigned(cls, attr, value)


@pytest.mark.parametrize("how", BUILDS)
@pytest.mark.parametrize("attr,value,reason", WRONG_TYPES, ids=[c[0] for c in WRONG_TYPES])
def test_wrong_types(
    af: ModuleType, af_errors: ModuleType, attr: str, value: Any, reason: str, how: str
) -> None:
    for version in (0, 3):
        expect(
            af_errors,
            build(af.AllFeaturesRequest, how, attr, value),
            version,
            f"{R}.{attr}",
            reason,
        )


@pytest.mark.parametrize(
    "value,reason",
    [
        (None, "None in a field that is not nullable"),
        ("no", "expected bool, got str"),
        (2, "expected bool, got int"),
    ],
)
def test_bool_fields_refuse_non_bools(
    af: ModuleType, af_errors: ModuleType, value: Any, reason: str
) -> None:
    """``struct.pack('>?', x)`` would accept every object (truthiness): bool fields must
    refuse None, "no" and 2 rather than write them as 0/1."""
    expect(af_errors, lambda: af.AllFeaturesRequest(bool_field=value), 0, f"{R}.bool_field", reason)


@pytest.mark.parametrize("how", BUILDS)
@pytest.mark.parametrize(
    "attr,value",
    [("topics", "abc"), ("topics", b"ab"), ("topics", {"a": 1}), ("string_array", "ab")],
)
def test_non_list_for_an_array(
    af: ModuleType, af_errors: ModuleType, attr: str, value: Any, how: str
) -> None:
    """A str, bytes or dict where a list belongs is named as such, not blamed on the
    element struct, and a str is never written as a list of its characters (whether it
    was given to the constructor or set afterwards)."""
    expect(
        af_errors,
        build(af.AllFeaturesRequest, how, attr, value),
        1,
        f"{R}.{attr}",
        "expected a tuple or a list",
    )


def test_wrong_struct_in_list(af: ModuleType, af_errors: ModuleType) -> None:
    A = af.AllFeaturesRequest
    expect(
        af_errors,
        lambda: A(topics=[af.AllFeaturesRequestTopicData(), None]),
        1,
        f"{R}.topics[1]",
        "None in a field that is not nullable",
    )


NULLS = [
    # attr, version where None is refused (nullable only later or never)
    ("string_field", 3),
    ("bytes_field", 2),
    ("uuid_field", 1),
    ("int32_field", 0),
    ("float64_field", 3),
    ("nullable_string", 0),  # nullable from v1
    ("nullable_bytes", 0),  # nullable from v1
    ("records_field", 0),  # nullable from v1
    ("string_array", 1),  # nullable from v2
    ("topics", 2),  # nullable from v3
    ("int32_array", 3),
]


@pytest.mark.parametrize("attr,version", NULLS, ids=[f"{a}-v{v}" for a, v in NULLS])
def test_none_in_non_nullable(
    af: ModuleType, af_errors: ModuleType, attr: str, version: int
) -> None:
    A = af.AllFeaturesRequest
    # Given to the constructor or set afterwards, the encoder names the field (the
    # constructor leaves None in an array field as it is).
    expect(af_errors, build(A, "assigned", attr, None), version, f"{R}.{attr}", "None in a")
    expect(af_errors, build(A, "constructor", attr, None), version, f"{R}.{attr}", "None in a")


def test_none_is_fine_where_nullable(af: ModuleType) -> None:
    A = af.AllFeaturesRequest
    for attr, version in (
        ("nullable_string", 1),
        ("records_field", 1),
        ("topics", 3),
        ("string_array", 2),
    ):
        obj = A(**{attr: None})
        assert getattr(A.decode(obj.encode(version), version), attr) is None


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_strings_over_32767_utf8_bytes(af: ModuleType, af_errors: ModuleType, version: int) -> None:
    A = af.AllFeaturesRequest
    assert A(string_field="x" * 32767).encode(version)  # the limit itself is fine
    expect(
        af_errors,
        lambda: A(string_field="x" * 32768),
        version,
        f"{R}.string_field",
        "string of 32768 UTF-8 bytes is longer than 32767",
    )
    # 16,384 characters, 32,768 bytes: the limit counts UTF-8 bytes, not characters.
    expect(
        af_errors,
        lambda: A(nullable_string="é" * 16384),
        version,
        f"{R}.nullable_string",
        "32768 UTF-8 bytes",
    )
    expect(
        af_errors,
        lambda: A(classic_string="✓" * 11000),
        version,
        f"{R}.classic_string",
        "33000 UTF-8 bytes",
    )
    expect(
        af_errors,
        lambda: A(string_array=["ok", "y" * 40000]),
        version,
        f"{R}.string_array",
        "item 1: string of 40000 UTF-8 bytes",
    )
    expect(
        af_errors,
        lambda: A(topics=[af.AllFeaturesRequestTopicData(name="z" * 32768)]),
        version,
        f"{R}.topics[0].name",
        "longer than 32767",
    )


def test_unencodable_text(af: ModuleType, af_errors: ModuleType) -> None:
    expect(
        af_errors,
        lambda: af.AllFeaturesRequest(string_field="\ud800"),
        2,
        f"{R}.string_field",
        "not encodable as UTF-8",
    )


def test_value_missing_from_a_version(af: ModuleType, af_errors: ModuleType) -> None:
    """Not ignorable: a non-default value in a field the version lacks is refused."""
    A = af.AllFeaturesRequest
    expect(af_errors, lambda: A(removed_field=5), 2, f"{R}.removed_field", "must hold its default")
    expect(af_errors, lambda: A(added_field=5), 2, f"{R}.added_field", "must hold its default")
    assert A(ignorable_field="dropped").encode(2)  # ignorable: silently dropped


def test_unknown_version(af: ModuleType, af_errors: ModuleType) -> None:
    with pytest.raises(af_errors.UnsupportedVersionError) as info:
        af.AllFeaturesRequest().encode(4)
    assert isinstance(info.value, af_errors.EncodeError)
    assert "no version 4" in str(info.value)


# --- the committed package -------------------------------------------------------------


def test_committed_package(km: ModuleType) -> None:
    metadata = importlib.import_module("kafka_messages.metadata")
    api = importlib.import_module("kafka_messages.api_versions")
    errors = importlib.import_module("kafka_messages.errors")
    M = metadata.MetadataRequest
    expect(errors, lambda: M(topics=None), 0, "MetadataRequest.topics", "None in a field")
    expect(
        errors,
        lambda: M(topics=[metadata.MetadataRequestTopic(name=None)]),
        9,
        "MetadataRequest.topics[0].name",
        "not nullable",
    )
    expect(
        errors,
        lambda: M(topics=[metadata.MetadataRequestTopic(topic_id="x")]),
        12,
        "MetadataRequest.topics[0].topic_id",
        "expected uuid",
    )
    A = api.ApiVersionsResponse
    expect(
        errors,
        lambda: A(
            api_keys=[
                api.ApiVersionsResponseApiVersion(),
                api.ApiVersionsResponseApiVersion(max_version=1 << 15),
            ]
        ),
        3,
        "ApiVersionsResponse.api_keys[1].max_version",
        "out of range for int16",
    )
    expect(
        errors,
        lambda: A(throttle_time_ms="0"),
        1,
        "ApiVersionsResponse.throttle_time_ms",
        "expected an int",
        wrong_type=True,
    )
    R2 = metadata.MetadataResponse
    expect(
        errors,
        lambda: R2(
            topics=[
                metadata.MetadataResponseTopic(
                    partitions=[metadata.MetadataResponsePartition(isr_nodes=[1, 2**31])]
                )
            ]
        ),
        12,
        "MetadataResponse.topics[0].partitions[0].isr_nodes",
        "item 1",
    )
    # UUID values are checked by type, not by their text.
    assert M(topics=[metadata.MetadataRequestTopic(topic_id=UUID(int=1))]).encode(12)
