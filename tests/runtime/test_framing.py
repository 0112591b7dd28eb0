"""Frames, headers and the registry of the committed package, against hand-written bytes.

Every expected byte string here was written by hand from the wire rules (spec-language.md
section 12), field by field, not produced by running our encoder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.genpkg import GENERATED, generate_package

import sys

sys.path.insert(0, str(GENERATED))

from kafka_messages import framing, registry  # noqa: E402
from kafka_messages.api_versions import (  # noqa: E402
    ApiVersionsRequest,
    ApiVersionsResponse,
    ApiVersionsResponseApiVersion,
)
from kafka_messages.errors import DecodeError, EncodeError, UnsupportedVersionError  # noqa: E402
from kafka_messages.headers import RequestHeader, ResponseHeader  # noqa: E402
from kafka_messages.metadata import (
    MetadataRequest,
    MetadataRequestTopic,
    MetadataResponse,
)  # noqa: E402

# ApiVersionsRequest v3 as librdkafka sends it: request header v2, client id "rdkafka".
API_VERSIONS_REQUEST_V3 = bytes.fromhex(
    "0012"  # api key 18
    "0003"  # api version 3
    "00000001"  # correlation id 1
    "0007"
    + b"rdkafka".hex()  # client id: classic int16-length string even in header v2
    + "00"  # header tagged fields: none
    "0b"
    + b"librdkafka".hex()  # client software name: compact string, length 10 + 1
    + "07"
    + b"2.16.1".hex()  # client software version: compact string, length 6 + 1
    + "00"  # body tagged fields: none
)

# ApiVersionsResponse v3: header v0 (correlation id only, KIP-511), one api, and a
# SupportedFeatures tag (0) holding an empty array, as Tansu writes it.
API_VERSIONS_RESPONSE_V3_DEFAULT_TAG = bytes.fromhex(
    "00000001"  # correlation id (response header v0: no tagged fields)
    "0000"  # error code 0
    "02"  # api keys: compact array, 1 entry
    "0012"
    "0000"
    "0004"
    "00"  # ApiVersions 0-4, no tagged fields
    "00000000"  # throttle time 0
    "01"  # one tagged field
    "00"
    "01"
    "01"  # tag 0 (SupportedFeatures), size 1, compact array of 0 entries
)

# MetadataRequest v0: header v1 (client id "c"), topics ["t"] as a classic array.
METADATA_REQUEST_V0 = bytes.fromhex(
    "0003"
    "0000"
    "0000002a"  # api key 3, version 0, correlation id 42
    "0001" + b"c".hex() + "00000001"  # client id  # one topic
    "0001" + b"t".hex()  # name "t"
)


def test_decode_request_reads_librdkafka_api_versions_v3() -> None:
    header, body = framing.decode_request(API_VERSIONS_REQUEST_V3)
    assert (header.request_api_key, header.request_api_version) == (18, 3)
    assert header.correlation_id == 1
    assert header.client_id == "rdkafka"
    assert body == ApiVersionsRequest(
        client_software_name="librdkafka", client_software_version="2.16.1"
    )
    assert framing.encode_request(header, body) == API_VERSIONS_REQUEST_V3


def test_api_versions_response_uses_header_v0_and_keeps_default_valued_tag() -> None:
    header, body = framing.decode_response(API_VERSIONS_RESPONSE_V3_DEFAULT_TAG, 18, 3)
    assert header.correlation_id == 1
    assert body.api_keys == (ApiVersionsResponseApiVersion(18, 0, 4),)
    assert body.supported_features == ()
    assert body.tags_on_wire == frozenset({0})
    # Decoded: the default-valued tag was on the wire, so it is written back.
    assert framing.encode_response(header, body, 18, 3) == API_VERSIONS_RESPONSE_V3_DEFAULT_TAG
    # Built in code: Kafka's rule omits a tagged field equal to its default.
    built = ApiVersionsResponse(api_keys=[ApiVersionsResponseApiVersion(18, 0, 4)])
    assert built == body  # wire presence does not take part in equality
    expected = API_VERSIONS_RESPONSE_V3_DEFAULT_TAG[:-4] + bytes.fromhex("00")
    assert framing.encode_response(ResponseHeader(correlation_id=1), built, 18, 3) == expected


def test_metadata_v0_request_frame() -> None:
    header, body = framing.decode_request(METADATA_REQUEST_V0)
    assert header.client_id == "c"
    assert body.topics == (MetadataRequestTopic(name="t"),)
    assert framing.encode_request(header, body) == METADATA_REQUEST_V0


def test_size_prefix_round_trip_and_checks() -> None:
    wire = framing.add_size_prefix(METADATA_REQUEST_V0)
    assert wire[:4] == len(METADATA_REQUEST_V0).to_bytes(4, "big")
    assert framing.strip_size_prefix(wire) == METADATA_REQUEST_V0
    with pytest.raises(DecodeError, match="size prefix says"):
        framing.strip_size_prefix(wire + b"\x00")
    with pytest.raises(DecodeError):
        framing.strip_size_prefix(b"\x00\x00")


def test_trailing_bytes_after_body_are_an_error() -> None:
    with pytest.raises(DecodeError, match="1 trailing bytes") as info:
        framing.decode_request(METADATA_REQUEST_V0 + b"\x00")
    assert info.value.offset == len(METADATA_REQUEST_V0)


def test_unknown_api_key_and_version_are_decode_errors() -> None:
    with pytest.raises(DecodeError, match="unknown api key 999"):
        framing.decode_request(bytes.fromhex("03e7 0000 00000001 0000"))
    with pytest.raises(DecodeError, match="has no version 99"):
        framing.decode_request(bytes.fromhex("0012 0063 00000001 0000"))
    with pytest.raises(DecodeError):
        framing.decode_request(b"\x00")


def test_truncated_frames_raise_only_decode_error() -> None:
    for cut in range(len(API_VERSIONS_REQUEST_V3)):
        with pytest.raises(DecodeError):
            framing.decode_request(API_VERSIONS_REQUEST_V3[:cut])


def test_decode_error_names_offset_and_field_path() -> None:
    # Metadata v0 request whose topic name claims 5 bytes but has 1.
    bad = METADATA_REQUEST_V0[:-3] + bytes.fromhex("0005") + b"t"
    with pytest.raises(DecodeError) as info:
        framing.decode_request(bad)
    assert info.value.path == "MetadataRequest.topics[0].name"
    assert info.value.offset == len(bad) - 1


def test_encode_request_rejects_mismatched_body() -> None:
    header = RequestHeader(request_api_key=3, request_api_version=0)
    with pytest.raises(EncodeError, match="api key 3"):
        framing.encode_request(header, ApiVersionsRequest())


def test_header_versions_follow_flexible_versions() -> None:
    assert registry.request_header_version(3, 8) == 1  # Metadata: flexible from 9
    assert registry.request_header_version(3, 9) == 2
    assert registry.response_header_version(3, 8) == 0
    assert registry.response_header_version(3, 9) == 1
    assert registry.request_header_version(18, 3) == 2
    # KIP-511: ApiVersionsResponse keeps header v0 even at its flexible versions.
    assert registry.response_header_version(18, 3) == 0
    assert registry.response_header_version(18, 4) == 0
    with pytest.raises(UnsupportedVersionError):
        registry.request_header_version(3, 13)
    with pytest.raises(UnsupportedVersionError):
        registry.response_header_version(12345, 0)


def test_registry_entries_resolve_classes() -> None:
    entry = registry.API_KEYS[3]
    assert entry.name == "Metadata"
    assert entry.request is MetadataRequest and entry.response is MetadataResponse
    assert (entry.min_version, entry.max_version) == (0, 12)
    assert entry.flexible_versions == range(9, 13)
    assert sorted(registry.API_KEYS) == [3, 18, 57]


def test_controlled_shutdown_v0_uses_request_header_v0(tmp_path: Path) -> None:
    """The other exception, on a minimal ControlledShutdown pair written for this test."""
    specs = tmp_path / "specs"
    specs.mkdir()
    for kind in ("Request", "Response"):
        spec = {
            "apiKey": 7,
            "type": kind.lower(),
            "name": f"ControlledShutdown{kind}",
            "validVersions": "0-3",
            "flexibleVersions": "3+",
            "fields": [{"name": "BrokerId", "type": "int32", "versions": "0+"}],
        }
        (specs / f"ControlledShutdown{kind}.json").write_text(json.dumps(spec))
    for name in ("RequestHeader", "ResponseHeader"):
        source = Path(__file__).resolve().parents[2] / "specs" / f"{name}.json"
        (specs / f"{name}.json").write_text(source.read_text())
    pkg = generate_package([specs], tmp_path / "out", "cs_messages")
    reg = __import__("cs_messages.registry", fromlist=["registry"])
    assert reg.request_header_version(7, 0) == 0
    assert reg.request_header_version(7, 1) == 1
    assert reg.request_header_version(7, 3) == 2
    frm = __import__("cs_messages.framing", fromlist=["framing"])
    hdr = __import__("cs_messages.headers", fromlist=["headers"])
    body_cls = reg.API_KEYS[7].request
    frame = frm.encode_request(
        hdr.RequestHeader(request_api_key=7, request_api_version=0, correlation_id=5),
        body_cls(broker_id=3),
    )
    # Header v0: api key, version, correlation id; no client id. Then BrokerId.
    assert frame == bytes.fromhex("0007" "0000" "00000005" "00000003")
    assert pkg.__name__ == "cs_messages"
