"""``kafka_messages.negotiation``: KIP-35's own examples, KIP-97's errors, KIP-511's downgrade.

Byte strings are written by hand from the wire rules, field by field.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.genpkg import GENERATED, SPECS, generate_package

sys.path.insert(0, str(GENERATED))

from kafka_messages import negotiation, registry  # noqa: E402
from kafka_messages.api_versions import (  # noqa: E402
    ApiVersionsResponse,
    ApiVersionsResponseApiVersion,
)
from kafka_messages.error_codes import ErrorCode  # noqa: E402
from kafka_messages.errors import DecodeError, UnsupportedVersionError  # noqa: E402

# KIP-35's example cluster: two brokers, api key -> (min, max).
B1 = {0: (0, 3), 1: (2, 3)}
B2 = {0: (1, 2), 1: (0, 3), 2: (0, 0)}


def response(versions: dict[int, tuple[int, int]], error_code: int = 0) -> ApiVersionsResponse:
    return ApiVersionsResponse(
        error_code=error_code,
        api_keys=[ApiVersionsResponseApiVersion(k, lo, hi) for k, (lo, hi) in versions.items()],
    )


# --- KIP-35 ------------------------------------------------------------------------------


def test_kip35_cluster_versions_example() -> None:
    assert negotiation.cluster_versions({"B1": B1, "B2": B2}) == {0: (1, 2), 1: (2, 3)}


def test_cluster_versions_reads_decoded_responses_too() -> None:
    responses = {1: response(B1), 2: response(B2)}
    assert negotiation.cluster_versions(responses) == {0: (1, 2), 1: (2, 3)}


def test_cluster_versions_drops_empty_intersections_and_handles_edges() -> None:
    assert negotiation.cluster_versions({}) == {}
    assert negotiation.cluster_versions({"only": B2}) == B2
    assert negotiation.cluster_versions({"a": {5: (0, 1)}, "b": {5: (2, 3)}}) == {}
    # an entry whose min exceeds its max says nothing usable
    assert negotiation.cluster_versions({"a": {5: (3, 1), 6: (0, 0)}}) == {6: (0, 0)}
    # order of brokers does not matter
    assert negotiation.cluster_versions({"B2": B2, "B1": B1}) == {0: (1, 2), 1: (2, 3)}


def test_kip35_feature_examples() -> None:
    cluster = negotiation.cluster_versions({"B1": B1, "B2": B2})
    feature1 = negotiation.check_feature({0: (3, 3), 1: (2, 3)}, cluster)
    assert not feature1
    assert feature1.usable is False
    assert feature1.reasons == ("Produce(0): needs version 3, available: 1 to 2",)
    feature2 = negotiation.check_feature({0: (0, 1), 1: (2, 3)}, cluster)
    assert feature2
    assert feature2.versions == {0: 1, 1: 3}
    assert feature2.reasons == ()


def test_check_feature_names_a_missing_api() -> None:
    check = negotiation.check_feature({2: (0, 0), 9999: (1, 4)}, {0: (0, 3)})
    assert check.reasons == (
        "ListOffsets(2): needs version 0, not available",
        "UNKNOWN(9999): needs versions 1 to 4, not available",
    )


# --- KIP-97 ------------------------------------------------------------------------------


def test_pick_version_is_the_newest_common_version() -> None:
    assert negotiation.pick_version(0, (3, 13), (0, 11)) == 11
    assert negotiation.pick_version(0, (3, 9), (0, 11)) == 9
    assert negotiation.pick_version(18, (0, 4), (4, 4)) == 4


def test_pick_version_obsolete_broker_names_api_and_both_ranges() -> None:
    with pytest.raises(UnsupportedVersionError) as info:
        negotiation.pick_version(0, (3, 13), (0, 2))
    error = info.value
    assert isinstance(error, negotiation.NoCommonVersionError)
    assert str(error) == (
        "Produce(0): no common version: this client supports versions 3 to 13, "
        "the broker supports 0 to 2 (obsolete broker)"
    )
    assert (error.api_key, error.client_range, error.broker_range) == (0, (3, 13), (0, 2))
    assert error.broker_too_old


def test_pick_version_obsolete_client_and_missing_api() -> None:
    with pytest.raises(negotiation.NoCommonVersionError, match=r"obsolete client") as info:
        negotiation.pick_version(1, (0, 3), (4, 17))
    assert not info.value.broker_too_old
    with pytest.raises(
        UnsupportedVersionError,
        match=r"^UpdateFeatures\(57\): the broker does "
        r"not support this API; this client supports versions 0 to 2",
    ):
        negotiation.pick_version(57, (0, 2), None)
    with pytest.raises(UnsupportedVersionError, match=r"^UNKNOWN\(4242\): "):
        negotiation.pick_version(4242, (0, 0), (1, 1))
    with pytest.raises(ValueError, match="empty version range"):
        negotiation.pick_version(0, (5, 1), (0, 9))


# --- KIP-511 -----------------------------------------------------------------------------

# A KIP-511 answer to an ApiVersions v4 request from a broker that knows only v0-v2:
# response header v0, then a *version 0* body.
DOWNGRADE_V0 = bytes.fromhex(
    "0000002a"  # correlation id 42
    "0023"  # error code 35 UNSUPPORTED_VERSION
    "00000001"  # api keys: classic array, 1 entry
    "0012"
    "0000"
    "0002"  # ApiVersions 0-2
)

# An ApiVersions v3 success: header v0, flexible body (compact array, tagged fields).
SUCCESS_V3 = bytes.fromhex(
    "00000007"  # correlation id 7
    "0000"  # error code 0
    "03"  # compact array, 2 entries
    "0003"
    "0000"
    "000c"
    "00"  # Metadata 0-12
    "0012"
    "0000"
    "0004"
    "00"  # ApiVersions 0-4
    "00000000"  # throttle time
    "00"  # no tagged fields
)


def test_downgrade_answer_is_read_at_v0_with_a_retry_version() -> None:
    outcome = negotiation.decode_api_versions_response(DOWNGRADE_V0, 4)
    assert outcome.correlation_id == 42
    assert outcome.version == 0
    assert outcome.response.error_code == ErrorCode.UNSUPPORTED_VERSION
    assert not outcome.ok
    assert outcome.versions == {18: (0, 2)}
    assert outcome.retry_version == 2


def test_downgrade_body_alone_and_clamped_below_the_requested_version() -> None:
    body = DOWNGRADE_V0[4:]
    outcome = negotiation.decode_api_versions_response(body, 1, header=False)
    assert outcome.correlation_id is None
    # the broker claims 0-2 but refused v1: retry strictly below what was refused
    assert outcome.retry_version == 0


def test_downgrade_without_an_api_versions_entry_retries_at_v0() -> None:
    body = bytes.fromhex("0023" "00000000")  # error 35, no api keys
    assert negotiation.decode_api_versions_response(body, 3, header=False).retry_version == 0
    # refused even v0: nothing left to try
    assert negotiation.decode_api_versions_response(body, 0, header=False).retry_version is None


def test_error_35_with_a_body_of_the_requested_version_is_read_too() -> None:
    body = response({18: (0, 2)}, error_code=35).encode(3)
    outcome = negotiation.decode_api_versions_response(body, 3, header=False)
    assert outcome.version == 3
    assert outcome.retry_version == 2


def test_success_needs_no_retry() -> None:
    outcome = negotiation.decode_api_versions_response(SUCCESS_V3, 3)
    assert outcome.ok and outcome.retry_version is None
    assert outcome.correlation_id == 7
    assert outcome.versions == {3: (0, 12), 18: (0, 4)}
    assert negotiation.pick_version(3, (0, 12), outcome.versions[3]) == 12


def test_garbage_raises_decode_error_and_bad_versions_raise() -> None:
    with pytest.raises(DecodeError):
        negotiation.decode_api_versions_response(b"\x00\x00", 3)
    with pytest.raises(DecodeError):
        negotiation.decode_api_versions_response(SUCCESS_V3 + b"\x00", 3)
    with pytest.raises(DecodeError):  # error 35 but neither v0 nor v3 fits
        negotiation.decode_api_versions_response(b"\x00\x00\x00\x01\x00\x23\xff", 3)
    with pytest.raises(UnsupportedVersionError, match="no version 9"):
        negotiation.decode_api_versions_response(SUCCESS_V3, 9)


# --- registry names ------------------------------------------------------------------------


def test_registry_names_every_key_up_to_the_newest() -> None:
    assert set(registry.API_NAMES) == set(range(93))
    assert registry.api_name(0) == "Produce"
    assert registry.api_name(18) == "ApiVersions"
    assert registry.api_name(92) == "DeleteShareGroupOffsets"
    assert registry.api_name(93) == "UNKNOWN(93)"
    assert registry.api_name(-1) == "UNKNOWN(-1)"
    for key, entry in registry.API_KEYS.items():
        assert registry.API_NAMES[key] == entry.name


def test_package_without_facts_still_negotiates(tmp_path: Path) -> None:
    """Generated from message specs only (``--facts none``): names come from the specs, the
    error codes are only those the runtime spells."""
    specs = sorted(SPECS.glob("*.json"))
    package = generate_package(specs, tmp_path, "nofacts_pkg", facts=None)
    from nofacts_pkg import errors  # type: ignore[import-not-found]
    from nofacts_pkg import negotiation as neg  # type: ignore[import-not-found]
    from nofacts_pkg import registry as reg  # type: ignore[import-not-found]

    assert package.__name__ == "nofacts_pkg"
    assert reg.API_NAMES == {3: "Metadata", 18: "ApiVersions", 57: "UpdateFeatures"}
    assert reg.api_name(0) == "UNKNOWN(0)"
    assert not hasattr(errors, "ErrorCode")
    from nofacts_pkg import error_codes  # type: ignore[import-not-found]

    assert error_codes.ErrorCode.UNSUPPORTED_VERSION == 35
    assert 0 < len(error_codes.ErrorCode) < 10
    assert neg.cluster_versions({"B1": B1, "B2": B2}) == {0: (1, 2), 1: (2, 3)}
    assert neg.decode_api_versions_response(DOWNGRADE_V0, 4).retry_version == 2
    with pytest.raises(errors.UnsupportedVersionError, match=r"^UNKNOWN\(0\): "):
        neg.pick_version(0, (3, 13), (0, 2))
