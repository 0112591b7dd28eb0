"""The synthetic spec set tests/specs/all_features, generated and exercised at every version.

The expected bytes in this file are written by hand from the wire rules of
spec-language.md section 12, not produced by the encoder under test.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any
from uuid import UUID

import pytest

from tests.support.genpkg import generate_package, load_messages

SPECS = Path(__file__).resolve().parents[1] / "specs" / "all_features"
PACKAGE = "all_features_pkg"


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    out = tmp_path_factory.mktemp("all_features")
    return generate_package([SPECS], out, PACKAGE)


@pytest.fixture(scope="module")
def mod(pkg: ModuleType) -> ModuleType:
    import importlib

    return importlib.import_module(f"{PACKAGE}.all_features")


@pytest.fixture(scope="module")
def data_mod(pkg: ModuleType) -> ModuleType:
    import importlib

    return importlib.import_module(f"{PACKAGE}.all_features_data")


@pytest.fixture(scope="module")
def errors(pkg: ModuleType) -> ModuleType:
    import importlib

    return importlib.import_module(f"{PACKAGE}.errors")


@pytest.fixture(scope="module")
def wire(pkg: ModuleType) -> ModuleType:
    """The runtime module with ``RawTaggedField`` (the plan tables)."""
    import importlib

    return importlib.import_module(f"{PACKAGE}._plan")


VERSIONS = [0, 1, 2, 3]
UUID_A = UUID(bytes=bytes(range(16)))
UUID_B = UUID("fedcba98-7654-3210-0123-456789abcdef")


def populated(mod: ModuleType, v: int) -> Any:
    """A request with a non-default value in every field that exists at ``v``."""
    R = mod.AllFeaturesRequest
    topics = [
        mod.AllFeaturesRequestTopicData(
            name="t1",
            topic_id=UUID_B if v >= 1 else UUID(int=0),
            partitions=[
                mod.AllFeaturesRequestPartitionData(
                    index=0,
                    replicas=[
                        mod.AllFeaturesRequestReplica(
                            broker_id=1, info=mod.AllFeaturesRequestCommonInfo(host="h1", port=9092)
                        ),
                        mod.AllFeaturesRequestReplica(
                            broker_id=2, info=mod.AllFeaturesRequestCommonInfo(host="", port=65535)
                        ),
                    ],
                    partition_tag=5 if v >= 2 else 0,
                ),
                mod.AllFeaturesRequestPartitionData(index=1),
            ],
            topic_tag="tt" if v >= 2 else None,
        ),
        mod.AllFeaturesRequestTopicData(name="t2"),
    ]
    x = R(
        bool_field=False,
        int8_field=-128,
        int16_field=32767,
        int32_field=-(2**31),
        int64_field=2**63 - 1,
        uint16_field=8080,
        uint32_field=2**32 - 1,
        float64_field=-0.25,
        string_field="tøpic ✓",
        bytes_field=b"\x00\xff\x10",
        uuid_field=UUID_A,
        records_field=None if v == 2 else b"records",
        nullable_string=None if v >= 1 else "ns",
        nullable_bytes=None if v >= 1 else b"nb",
        int32_array=[1, -1, 2**31 - 1],
        int64_array=[-(2**63), 0],
        string_array=None if v == 2 else ["a", "", "ü"],
        uuid_array=[UUID_A, UUID_B] if v >= 1 else [],
        int8_array=[-1, 0, 127],
        removed_field=7 if v <= 1 else 0,
        ignorable_field="ign" if v <= 1 else "",
        added_field=99 if v >= 3 else -1,
        classic_string="classic",
        topics=topics,
        common=mod.AllFeaturesRequestCommonInfo(host="common", port=1),
        nullable_struct=(
            (None if v == 2 else mod.AllFeaturesRequestNullStruct(x=-3))
            if v >= 1
            else mod.AllFeaturesRequestNullStruct()
        ),
    )
    if v >= 2:
        x.tagged_int = 1
        x.tagged_string = "ts"
        x.tagged_int16 = 7
        x.tagged_uuid = UUID_B
        x.tagged_int32_array = (3, 4)  # arrays are tuples (a list would still encode)
        x.tagged_struct = mod.AllFeaturesRequestTaggedStructData(a=1, b="b")
        x.tagged_struct_array = (
            mod.AllFeaturesRequestTaggedItem(id=1, host="x"),
            mod.AllFeaturesRequestTaggedItem(id=2, host=""),
        )
        x.tagged_nullable_struct = mod.AllFeaturesRequestNullableTagged(epoch=3)
        x.tagged_nullable_struct_no_default = (
            None if v == 2 else mod.AllFeaturesRequestNullableTaggedNoDefault(epoch=8)
        )
    if v >= 3:
        x.tagged_late = 4
    return x


def response(mod: ModuleType, v: int) -> Any:
    S = mod.AllFeaturesResponse
    return S(
        throttle_time_ms=100,
        error_code=-1,
        results=[
            mod.AllFeaturesResponseResult(name="a", error_code=3, error_message="bad"),
            mod.AllFeaturesResponseResult(name="b", error_code=0, error_message=None),
        ],
        leader_epoch=9 if v >= 2 else -1,
    )


# --- the model of the spec set ----------------------------------------------------------


def test_spec_set_builds_without_warnings() -> None:
    messages = load_messages([SPECS])
    assert [(m.name, m.type, m.api_key) for m in messages] == [
        ("AllFeaturesData", "data", None),
        ("AllFeaturesRequest", "request", 900),
        ("AllFeaturesResponse", "response", 900),
    ]
    assert all(m.warnings == () for m in messages)
    request = messages[1]
    # every field has an about text
    assert all(f.about for s in (request.root, *request.structs) for f in s.fields)
    # every primitive type occurs
    kinds = {f.type.text for s in (request.root, *request.structs) for f in s.fields}
    assert {
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint16",
        "uint32",
        "float64",
        "string",
        "bytes",
        "uuid",
        "records",
        "[]int32",
        "[]int64",
        "[]string",
        "[]uuid",
        "[]int8",
    } <= kinds


def test_generated_constants(mod: ModuleType, pkg: ModuleType) -> None:
    R = mod.AllFeaturesRequest
    assert (R.API_KEY, R.MIN_VERSION, R.MAX_VERSION, R.FLEXIBLE_MIN_VERSION) == (900, 0, 3, 2)
    assert mod.AllFeaturesResponse.API_KEY == 900


# --- round trips ------------------------------------------------------------------------


@pytest.mark.parametrize("v", VERSIONS)
def test_default_round_trip(mod: ModuleType, v: int) -> None:
    for cls in (mod.AllFeaturesRequest, mod.AllFeaturesResponse):
        x = cls()
        data = x.encode(v)
        assert isinstance(data, bytes)
        assert cls.decode(data, v) == x


@pytest.mark.parametrize("v", [0, 1, 2])
def test_data_default_round_trip(data_mod: ModuleType, v: int) -> None:
    x = data_mod.AllFeaturesData()
    assert data_mod.AllFeaturesData.decode(x.encode(v), v) == x


@pytest.mark.parametrize("v", VERSIONS)
def test_populated_round_trip(mod: ModuleType, v: int) -> None:
    x = populated(mod, v)
    data = x.encode(v)
    y = mod.AllFeaturesRequest.decode(data, v)
    assert y == x
    assert y.encode(v) == data
    # decode_from at an offset returns the end offset
    z, end = mod.AllFeaturesRequest.decode_from(b"\xaa\xbb" + data + b"\xcc", 2, v)
    assert z == x and end == 2 + len(data)
    r = response(mod, v)
    assert mod.AllFeaturesResponse.decode(r.encode(v), v) == r


@pytest.mark.parametrize("v", VERSIONS)
def test_populated_differs_from_default(mod: ModuleType, v: int) -> None:
    """Guard against a vacuous round trip: populated values really reach the wire."""
    x = populated(mod, v)
    y = mod.AllFeaturesRequest.decode(x.encode(v), v)
    assert y != mod.AllFeaturesRequest()
    assert y.int64_field == 2**63 - 1 and y.uint32_field == 2**32 - 1
    assert y.string_field == "tøpic ✓"
    assert y.topics is not None
    assert y.topics[0].partitions[0].replicas[0].info.port == 9092
    if v >= 2:
        assert y.tagged_struct_array[1].id == 2
        assert y.topics[0].topic_tag == "tt"
        assert y.topics[0].partitions[0].partition_tag == 5


def test_trailing_bytes_are_an_error(mod: ModuleType, errors: ModuleType) -> None:
    data = populated(mod, 3).encode(3)
    with pytest.raises(errors.DecodeError):
        mod.AllFeaturesRequest.decode(data + b"\x00", 3)


def test_unsupported_version(mod: ModuleType, errors: ModuleType) -> None:
    with pytest.raises(errors.EncodeError):
        mod.AllFeaturesRequest().encode(4)
    with pytest.raises(errors.DecodeError):
        mod.AllFeaturesRequest.decode(b"", 4)


# --- hand-written bytes -----------------------------------------------------------------


def small(data_mod: ModuleType, v: int) -> Any:
    D = data_mod.AllFeaturesData
    return D(
        flag=True,
        small=-2,
        port=8080,
        crc=0xDEADBEEF,
        ratio=0.5,
        id=UUID_A,
        name="ab",
        note=None if v == 1 else "n",
        blob=b"\x01\x02",
        nums=[1, 2],
        legacy="xy",
        entries=[data_mod.AllFeaturesDataEntry(key="k", value=7)],
        removed=3 if v <= 1 else 0,
        tag_a=5 if v == 2 else 0,
        tag_b="t" if v == 2 else None,
    )


FIXED = bytes.fromhex(
    "01"  # Flag: bool true
    "fe"  # Small: int8 -2
    "1f90"  # Port: uint16 8080
    "deadbeef"  # Crc: uint32 0xDEADBEEF
    "3fe0000000000000"  # Ratio: float64 0.5
    "000102030405060708090a0b0c0d0e0f"  # Id: uuid, 16 raw bytes
)

V0 = FIXED + bytes.fromhex(
    "0002 6162"  # Name: int16 length 2, "ab"
    "0001 6e"  # Note: int16 length 1, "n"
    "00000002 0102"  # Blob: int32 length 2
    "00000002 00000001 00000002"  # Nums: int32 count 2, [1, 2]
    "0002 7879"  # Legacy: int16 length 2, "xy"
    "00000001"  # Entries: int32 count 1
    "0001 6b"  #   Key: "k"
    "0000000000000007"  #   Value: int64 7
    "0003"  # Removed: int16 3
)

V1 = FIXED + bytes.fromhex(
    "0002 6162"  # Name
    "ffff"  # Note: null, int16 length -1
    "00000002 0102"  # Blob
    "00000002 00000001 00000002"  # Nums
    "0002 7879"  # Legacy
    "00000001 0001 6b 0000000000000007"  # Entries
    "0003"  # Removed
)

V2 = FIXED + bytes.fromhex(
    "03 6162"  # Name: uvarint length+1 = 3
    "02 6e"  # Note: uvarint 2
    "03 0102"  # Blob: uvarint 3
    "03 00000001 00000002"  # Nums: uvarint count+1 = 3
    "0002 7879"  # Legacy: still int16 (flexibleVersions none)
    "02"  # Entries: uvarint count+1 = 2
    "02 6b"  #   Key: compact "k"
    "0000000000000007"  #   Value
    "00"  #   Entry's tagged fields: none
    # (Removed is gone in version 2)
    "02"  # tagged fields: 2
    "00 04 00000005"  #   tag 0 (TagA), size 4, int32 5
    "01 02 0274"  #   tag 1 (TagB), size 2, compact "t"
)


@pytest.mark.parametrize(("v", "expected"), [(0, V0), (1, V1), (2, V2)])
def test_hand_written_bytes(data_mod: ModuleType, v: int, expected: bytes) -> None:
    x = small(data_mod, v)
    assert x.encode(v).hex() == expected.hex()
    assert data_mod.AllFeaturesData.decode(expected, v) == x


def test_hand_written_default_bytes_v2(data_mod: ModuleType) -> None:
    expected = bytes(32) + bytes.fromhex(
        "01"  # Name: empty compact string
        "01"  # Note: empty compact string (not null)
        "01"  # Blob: empty
        "01"  # Nums: empty
        "0000"  # Legacy: classic empty string
        "01"  # Entries: empty
        "00"  # no tagged fields (all at their defaults)
    )
    assert data_mod.AllFeaturesData().encode(2).hex() == expected.hex()
    assert (
        data_mod.AllFeaturesData().encode(0).hex()
        == (bytes(32) + bytes.fromhex("0000 0000 00000000 00000000 0000 00000000 0000")).hex()
    )


def test_field_level_flexible_none_in_request(mod: ModuleType) -> None:
    x = mod.AllFeaturesRequest(classic_string="xyz")
    for v in (2, 3):
        data = x.encode(v)
        assert b"\x00\x03xyz" in data
        assert b"\x04xyz" not in data
        assert mod.AllFeaturesRequest.decode(data, v).classic_string == "xyz"
    # and the flexible neighbour really is compact
    y = mod.AllFeaturesRequest(string_field="q" * 5)
    assert b"\x06qqqqq" in y.encode(2) and b"\x00\x05qqqqq" in y.encode(1)


# --- tagged fields ----------------------------------------------------------------------

DEFAULTS_V2 = bytes(32) + bytes.fromhex("01 01 01 01 0000 01")


def test_unknown_tags_kept_and_reemitted_in_order(data_mod: ModuleType, wire: ModuleType) -> None:
    D = data_mod.AllFeaturesData
    data = DEFAULTS_V2 + bytes.fromhex(
        "04 00 04 00000005"  # known tag 0
        "01 02 0274"  # known tag 1
        "03 01 aa"  # unknown tag 3
        "07 02 bbcc"  # unknown tag 7
    )
    x = D.decode(data, 2)
    assert (x.tag_a, x.tag_b) == (5, "t")
    assert x.unknown_tagged_fields == (
        wire.RawTaggedField(3, b"\xaa"),
        wire.RawTaggedField(7, b"\xbb\xcc"),
    )
    assert x.encode(2) == data
    # built by hand, unknown tags given out of order: written merged in tag order
    y = D(
        tag_a=5,
        tag_b="t",
        unknown_tagged_fields=(
            wire.RawTaggedField(7, b"\xbb\xcc"),
            wire.RawTaggedField(3, b"\xaa"),
        ),
    )
    assert y.encode(2).hex() == data.hex()
    # unknown tag 1 (a known tag not set) sorts between the known tag 0 and tag 3
    z = D(
        tag_a=5,
        unknown_tagged_fields=(
            wire.RawTaggedField(3, b"\xaa"),
            wire.RawTaggedField(1, b"\x01\x00"),
        ),
    )
    assert (
        z.encode(2).hex()
        == (DEFAULTS_V2 + bytes.fromhex("03 00 04 00000005 01 02 0100 03 01 aa")).hex()
    )


def test_unknown_tags_in_nested_struct(data_mod: ModuleType, wire: ModuleType) -> None:
    data = bytes(32) + bytes.fromhex(
        "01 01 01 01 0000 02"  # one entry
        "02 6b 0000000000000001"  #   Key "k", Value 1
        "01 05 03 616263"  #   tagged: tag 5, size 3, "abc"
        "00"
    )
    x = data_mod.AllFeaturesData.decode(data, 2)
    assert x.entries[0].unknown_tagged_fields == (wire.RawTaggedField(5, b"abc"),)
    assert x.encode(2) == data


def test_unknown_tags_in_non_flexible_version(
    data_mod: ModuleType, wire: ModuleType, errors: ModuleType
) -> None:
    x = data_mod.AllFeaturesData(unknown_tagged_fields=(wire.RawTaggedField(3, b""),))
    assert x.encode(2).endswith(bytes.fromhex("01 03 00"))
    with pytest.raises(errors.EncodeError):
        x.encode(1)


def test_unknown_tag_repeating_a_known_tag(
    data_mod: ModuleType, wire: ModuleType, errors: ModuleType
) -> None:
    x = data_mod.AllFeaturesData(tag_a=1, unknown_tagged_fields=(wire.RawTaggedField(0, b""),))
    with pytest.raises(errors.EncodeError):
        x.encode(2)


def test_default_valued_tag_omitted_but_kept_when_decoded(
    data_mod: ModuleType, mod: ModuleType
) -> None:
    D = data_mod.AllFeaturesData
    assert D(tag_a=0, tag_b=None).encode(2) == DEFAULTS_V2 + b"\x00"
    # a decoded tag holding its default is written back, so bytes survive a round trip
    data = DEFAULTS_V2 + bytes.fromhex("01 00 04 00000000")
    x = D.decode(data, 2)
    assert x.tag_a == 0
    assert x == D()
    assert x.encode(2) == data
    # request: TaggedInt16 defaults to 42, TaggedUuid to AAAAAAAAAAAAAAAAAAAAAQ
    R = mod.AllFeaturesRequest
    assert R(tagged_int16=42).encode(2) == R().encode(2)
    assert R(tagged_uuid=UUID(int=1)).encode(2) == R().encode(2)
    assert R(tagged_int16=43).encode(2) != R().encode(2)
    plain = R().encode(2)
    assert plain[-1] == 0
    with_42 = plain[:-1] + bytes.fromhex("01 02 02 002a")  # tag 2, size 2, int16 42
    y = R.decode(with_42, 2)
    assert y.tagged_int16 == 42 and y == R()
    assert y.encode(2) == with_42


def test_request_tagged_section_by_hand(mod: ModuleType) -> None:
    R = mod.AllFeaturesRequest
    plain = R().encode(2)
    x = R(
        tagged_int=1,
        tagged_string="ts",
        tagged_int32_array=[3],
        tagged_struct=mod.AllFeaturesRequestTaggedStructData(a=1, b="b"),
        tagged_nullable_struct=mod.AllFeaturesRequestNullableTagged(epoch=2),
    )
    tail = bytes.fromhex(
        "05 00 04 00000001"  # tag 0: int32 1
        "01 03 037473"  # tag 1: compact string "ts"
        "04 05 02 00000003"  # tag 4: compact array of 1 int32
        "05 07 00000001 0262 00"  # tag 5: struct (A=1, B="b", no tags)
        "07 06 01 00000002 00"  # tag 7: nullable struct: 1 = present, Epoch, no tags
    )
    assert x.encode(2).hex() == (plain[:-1] + tail).hex()
    assert R.decode(plain[:-1] + tail, 2) == x


def test_nullable_tagged_struct_without_null_default(mod: ModuleType) -> None:
    R = mod.AllFeaturesRequest
    plain = R().encode(2)
    assert (
        R(tagged_nullable_struct_no_default=mod.AllFeaturesRequestNullableTaggedNoDefault()).encode(
            2
        )
        == plain
    )
    # null differs from the (empty struct) default, so it is written: tag 9, size 1, and a
    # uvarint 0 marker, as Kafka's generated writer does for a null tagged struct.
    data = R(tagged_nullable_struct_no_default=None).encode(2)
    assert data[: len(plain) - 1] == plain[:-1]
    assert data[len(plain) - 1 :] == bytes.fromhex("01 09 01 00")
    assert R.decode(data, 2).tagged_nullable_struct_no_default is None
    present = R(
        tagged_nullable_struct_no_default=mod.AllFeaturesRequestNullableTaggedNoDefault(epoch=1)
    )
    assert present.encode(2)[len(plain) - 1 :].hex() == (
        "01" "09" "06" "01" "00000001" "00"
    )  # size 6: present marker 1, Epoch, no tags


def test_absent_tagged_struct_is_none(mod: ModuleType) -> None:
    """A tagged struct that is not on the wire is None; one on the wire is an instance,
    even when it equals the struct's default, and is written back byte for byte."""
    R, TS = mod.AllFeaturesRequest, mod.AllFeaturesRequestTaggedStructData
    assert R().tagged_struct is None and R().tagged_nullable_struct is None
    plain = R().encode(2)
    assert R.decode(plain, 2).tagged_struct is None
    # the constructor takes a struct equal to the default for absent: omitted, and None
    assert R(tagged_struct=TS()).tagged_struct is None
    assert R(tagged_struct=TS()).encode(2) == plain
    present = plain[:-1] + bytes.fromhex("01 05 06 00000000 01 00")  # tag 5: A=0, B="", no tags
    y = R.decode(present, 2)
    assert y.tagged_struct == TS() and 5 in y.tags_on_wire
    assert y.encode(2) == present
    x = R(tagged_struct=TS(a=1, b="b"))
    assert R.decode(x.encode(2), 2) == x


def test_known_tag_outside_tagged_versions(mod: ModuleType, errors: ModuleType) -> None:
    R = mod.AllFeaturesRequest
    tag8 = bytes.fromhex("01 08 04 00000001")
    v3 = R().encode(3)
    assert R.decode(v3[:-1] + tag8, 3).tagged_late == 1
    v2 = R().encode(2)
    with pytest.raises(errors.DecodeError, match="tag 8"):
        R.decode(v2[:-1] + tag8, 2)


def test_tags_must_ascend(data_mod: ModuleType, errors: ModuleType) -> None:
    data = DEFAULTS_V2 + bytes.fromhex("02 01 02 0274 00 04 00000005")
    with pytest.raises(errors.DecodeError):
        data_mod.AllFeaturesData.decode(data, 2)


def test_known_tag_with_wrong_size(data_mod: ModuleType, errors: ModuleType) -> None:
    data = DEFAULTS_V2 + bytes.fromhex("01 00 05 0000000500")
    with pytest.raises(errors.DecodeError):
        data_mod.AllFeaturesData.decode(data, 2)


# --- version guards, nullability ------------------------------------------------------


@pytest.mark.parametrize(
    ("attr", "value", "v"),
    [
        ("removed_field", 1, 2),
        ("removed_field", -1, 3),
        ("added_field", 0, 2),
        ("uuid_array", [UUID_A], 0),
        ("tagged_int", 1, 1),
        ("tagged_late", 1, 2),
        ("nullable_struct", None, 0),
    ],
)
def test_non_ignorable_field_missing_in_version(
    mod: ModuleType, errors: ModuleType, attr: str, value: Any, v: int
) -> None:
    x = mod.AllFeaturesRequest()
    setattr(x, attr, value)
    with pytest.raises(errors.EncodeError) as caught:
        x.encode(v)
    text = str(caught.value)
    assert attr in text
    assert f"version {v}" in text
    assert caught.value.version == v


def test_nested_field_missing_in_version(mod: ModuleType, errors: ModuleType) -> None:
    R = mod.AllFeaturesRequest
    x = R(
        topics=[
            mod.AllFeaturesRequestTopicData(name="a"),
            mod.AllFeaturesRequestTopicData(name="b", topic_id=UUID_A),
        ]
    )
    with pytest.raises(errors.EncodeError) as caught:
        x.encode(0)
    text = str(caught.value)
    assert "topics[1]" in text and "topic_id" in text and "version 0" in text
    assert x.encode(1)


@pytest.mark.parametrize("v", [2, 3])
def test_ignorable_field_dropped(mod: ModuleType, v: int) -> None:
    R = mod.AllFeaturesRequest
    assert R(ignorable_field="gone").encode(v) == R().encode(v)
    r = mod.AllFeaturesResponse
    # ThrottleTimeMs is 0+ so never dropped; the ignorable tagged LeaderEpoch is dropped in v0-1
    assert r(leader_epoch=5).encode(1) == r().encode(1)
    assert r(leader_epoch=5).encode(v) != r().encode(v)


@pytest.mark.parametrize(
    ("attr", "v"),
    [
        ("nullable_string", 1),
        ("nullable_bytes", 1),
        ("records_field", 1),
        ("string_array", 2),
        ("nullable_struct", 2),
        ("topics", 3),
        ("tagged_string", 2),
        ("tagged_nullable_struct", 3),
    ],
)
def test_null_round_trip(mod: ModuleType, attr: str, v: int) -> None:
    x = mod.AllFeaturesRequest()
    setattr(x, attr, None)
    y = mod.AllFeaturesRequest.decode(x.encode(v), v)
    assert getattr(y, attr) is None
    assert y == x


@pytest.mark.parametrize(
    ("attr", "v"),
    [
        ("nullable_string", 0),
        ("nullable_bytes", 0),
        ("records_field", 0),
        ("string_array", 1),
        ("nullable_struct", 1),
        ("topics", 2),
        ("string_field", 3),
        ("int32_array", 3),
        ("common", 2),
        ("uuid_field", 1),
        ("int32_field", 0),
    ],
)
def test_none_in_non_nullable_field(mod: ModuleType, errors: ModuleType, attr: str, v: int) -> None:
    x = mod.AllFeaturesRequest()
    setattr(x, attr, None)
    with pytest.raises(errors.EncodeError) as caught:
        x.encode(v)
    assert attr in str(caught.value)


def test_none_in_nested_non_nullable_field(mod: ModuleType, errors: ModuleType) -> None:
    R = mod.AllFeaturesRequest
    x = R(
        topics=[
            mod.AllFeaturesRequestTopicData(
                name="a",
                partitions=[
                    mod.AllFeaturesRequestPartitionData(
                        index=0,
                        replicas=[
                            mod.AllFeaturesRequestReplica(
                                info=mod.AllFeaturesRequestCommonInfo(host=None)
                            )
                        ],
                    )
                ],
            )
        ]
    )
    for v in VERSIONS:
        with pytest.raises(errors.EncodeError) as caught:
            x.encode(v)
        path = str(caught.value)
        assert "topics[0].partitions[0].replicas[0].info.host" in path, path


def test_none_in_nested_non_nullable_struct(mod: ModuleType, errors: ModuleType) -> None:
    R = mod.AllFeaturesRequest
    x = R(
        topics=[
            mod.AllFeaturesRequestTopicData(
                name="a",
                partitions=[
                    mod.AllFeaturesRequestPartitionData(
                        index=0, replicas=[mod.AllFeaturesRequestReplica(info=None)]
                    )
                ],
            )
        ]
    )
    with pytest.raises(errors.EncodeError) as caught:
        x.encode(1)
    path = str(caught.value)
    assert "topics[0].partitions[0].replicas[0].info" in path, path


def test_nested_null_decoded_as_error(data_mod: ModuleType, errors: ModuleType) -> None:
    # Name null (int16 -1) in a non-nullable string
    data = bytes(32) + bytes.fromhex("ffff")
    with pytest.raises(errors.DecodeError):
        data_mod.AllFeaturesData.decode(data + V0[36:], 0)


# --- robustness -------------------------------------------------------------------------


@pytest.mark.parametrize("v", VERSIONS)
def test_truncated_input_is_a_decode_error(mod: ModuleType, errors: ModuleType, v: int) -> None:
    data = populated(mod, v).encode(v)
    for n in range(len(data)):
        with pytest.raises(errors.DecodeError):
            mod.AllFeaturesRequest.decode(data[:n], v)
    rdata = response(mod, v).encode(v)
    for n in range(len(rdata)):
        with pytest.raises(errors.DecodeError):
            mod.AllFeaturesResponse.decode(rdata[:n], v)


@pytest.mark.parametrize("v", VERSIONS)
def test_corrupted_input_raises_only_decode_error(
    mod: ModuleType, errors: ModuleType, v: int
) -> None:
    data = populated(mod, v).encode(v)
    for i in range(len(data)):
        for byte in (0x00, 0x7F, 0x80, 0xFF):
            bad = bytearray(data)
            bad[i] = byte
            try:
                mod.AllFeaturesRequest.decode(bytes(bad), v)
            except errors.DecodeError:
                pass


# --- dict conversion --------------------------------------------------------------------


@pytest.mark.parametrize("v", VERSIONS)
def test_dict_round_trip(mod: ModuleType, v: int) -> None:
    x = populated(mod, v)
    d = x.to_dict()
    text = json.dumps(d)
    back = mod.AllFeaturesRequest.from_dict(json.loads(text))
    assert back == x
    assert back.encode(v) == x.encode(v)
    assert d["uuid_field"] == "AAECAwQFBgcICQoLDA0ODw"  # Kafka's base64url, no padding
    r = response(mod, v)
    assert mod.AllFeaturesResponse.from_dict(json.loads(json.dumps(r.to_dict()))) == r


def test_dict_round_trip_with_unknown_tags(data_mod: ModuleType, wire: ModuleType) -> None:
    x = data_mod.AllFeaturesData(unknown_tagged_fields=(wire.RawTaggedField(4, b"\x00\x01"),))
    back = data_mod.AllFeaturesData.from_dict(json.loads(json.dumps(x.to_dict())))
    assert back == x


def test_from_dict_defaults_and_unknown_keys(mod: ModuleType) -> None:
    assert mod.AllFeaturesRequest.from_dict({}) == mod.AllFeaturesRequest()
    with pytest.raises(ValueError):
        mod.AllFeaturesRequest.from_dict({"no_such_field": 1})


@pytest.mark.parametrize("v", [0, 2])
@pytest.mark.parametrize("count", [0, 1, 64, 65, 300])
def test_int_arrays_of_any_length(
    data_mod: ModuleType, errors: ModuleType, v: int, count: int
) -> None:
    """Counts up to 64 use kept struct formats, longer ones their own: both read and write
    the same items, and a count one too high for the bytes is refused, not allocated."""
    nums = [(i * 7919) % 2**31 - 2**30 for i in range(count)]
    x = data_mod.AllFeaturesData(nums=nums)
    data = x.encode(v)
    assert data_mod.AllFeaturesData.decode(data, v).nums == tuple(nums)
    # One item more than the bytes that follow hold: the count is refused before any read.
    y = data_mod.AllFeaturesData(nums=[*nums, 0x12345678])  # a value found nowhere else
    longer = y.encode(v)
    start = longer.index(b"".join(i.to_bytes(4, "big", signed=True) for i in y.nums))
    with pytest.raises(errors.DecodeError) as info:
        data_mod.AllFeaturesData.decode(longer[: start + 4 * count], v)
    assert "does not fit" in info.value.reason
    assert info.value.path.endswith("nums")


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
def test_decode_takes_any_buffer(data_mod: ModuleType, kind: type, wire: ModuleType) -> None:
    x = small(data_mod, 2)
    data = x.encode(2)
    assert data_mod.AllFeaturesData.decode(kind(data), 2) == x
    framed = b"\xaa" + data
    assert data_mod.AllFeaturesData.decode_from(kind(framed), 1, 2) == (x, len(framed))
