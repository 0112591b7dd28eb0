# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""Version negotiation: which version of each API to speak with a broker or a cluster.

Pure functions, no I/O. They follow three Kafka proposals:

- KIP-35: a broker lists the version range of every API it supports (ApiVersions); a
  client speaks, per API, the newest version both sides support, and a feature is usable
  when every API it needs has a version common to the client and *every* broker
  (``cluster_versions``, ``check_feature``, ``pick_version``).
- KIP-97: when no common version exists the client fails with a clear message naming the
  API and both ranges ("obsolete broker"), instead of sending something the other side
  cannot read (``pick_version`` raises ``NoCommonVersionError``).
- KIP-511: a broker that gets an ApiVersions request newer than it knows answers with
  error UNSUPPORTED_VERSION (35) and a *version 0* body listing its own ApiVersions range;
  the client then retries at a version the broker knows
  (``decode_api_versions_response``).

A version range is a ``(min, max)`` tuple of ints, both ends included.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Union

from .error_codes import ErrorCode
from .errors import DecodeError, UnsupportedVersionError
from .registry import API_KEYS, API_NAMES, ApiKey

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")

VersionRange = tuple[int, int]
"""``(min, max)``, both included."""


class ApiVersionRange(Protocol):
    """One entry of an ApiVersions response (``ApiVersionsResponseApiVersion`` fits)."""

    @property
    def api_key(self) -> int: ...

    @property
    def min_version(self) -> int: ...

    @property
    def max_version(self) -> int: ...


class ApiVersionsBody(Protocol):
    """What this module reads of an ApiVersions response (``ApiVersionsResponse`` fits)."""

    @property
    def api_keys(self) -> Sequence[ApiVersionRange]: ...


BrokerVersions = Union[ApiVersionsBody, Mapping[int, VersionRange]]
"""A decoded ApiVersions response, or a plain ``{api_key: (min, max)}`` mapping."""


def _label(api_key: int) -> str:
    """``Produce(0)``, or ``UNKNOWN(4242)`` for a key without a name."""
    name = API_NAMES.get(api_key)
    return f"UNKNOWN({api_key})" if name is None else f"{name}({api_key})"


def _range_text(versions: VersionRange | None) -> str:
    if versions is None:
        return "none"
    low, high = versions
    return str(low) if low == high else f"{low} to {high}"


def _check_range(versions: VersionRange, what: str) -> VersionRange:
    low, high = versions
    if low > high:
        raise ValueError(f"{what}: empty version range {low} to {high}")
    return low, high


def broker_versions(response: BrokerVersions) -> dict[int, VersionRange]:
    """``{api_key: (min, max)}`` from a decoded ApiVersions response (or such a mapping).

    Entries whose minimum exceeds their maximum say nothing usable and are left out.
    """
    if isinstance(response, Mapping):
        pairs = [(int(key), (int(lo), int(hi))) for key, (lo, hi) in response.items()]
    else:
        pairs = [(e.api_key, (e.min_version, e.max_version)) for e in response.api_keys]
    return {key: (lo, hi) for key, (lo, hi) in sorted(pairs) if lo <= hi}


def intersect(a: VersionRange | None, b: VersionRange | None) -> VersionRange | None:
    """The versions in both ranges, or None when they share none."""
    if a is None or b is None:
        return None
    low, high = max(a[0], b[0]), min(a[1], b[1])
    return (low, high) if low <= high else None


def cluster_versions(responses: Mapping[Any, BrokerVersions]) -> dict[int, VersionRange]:
    """The version range of each API that *every* broker supports (KIP-35).

    ``responses`` maps a broker (any key: node id, address, ...) to its ApiVersions
    response. For each API: the highest minimum and the lowest maximum over all brokers.
    An API that one broker lacks, or whose ranges share no version, is left out. No
    brokers give an empty result.
    """
    result: dict[int, VersionRange] | None = None
    for response in responses.values():
        versions = broker_versions(response)
        if result is None:
            result = versions
            continue
        merged: dict[int, VersionRange] = {}
        for key, versions_range in result.items():
            common = intersect(versions_range, versions.get(key))
            if common is not None:
                merged[key] = common
        result = merged
    return dict(sorted((result or {}).items()))


@dataclass(frozen=True)
class FeatureCheck:
    """Whether a feature can be used against some versions (true in a boolean test)."""

    usable: bool
    versions: dict[int, int]
    """API key -> the newest version of it the feature can use (every API when usable)."""
    reasons: tuple[str, ...]
    """Why the feature is not usable: one line per API that lacks a common version."""

    def __bool__(self) -> bool:
        return self.usable


def check_feature(
    requirements: Mapping[int, VersionRange], versions: Mapping[int, VersionRange]
) -> FeatureCheck:
    """Can a feature that needs ``requirements`` (api key -> (min, max)) be used?

    ``versions`` is what the broker or cluster supports (``cluster_versions`` gives it).
    Usable when every required API has a version inside both ranges (KIP-35).
    """
    chosen: dict[int, int] = {}
    reasons: list[str] = []
    for key in sorted(requirements):
        needed = _check_range(requirements[key], _label(key))
        offered = versions.get(key)
        common = intersect(needed, offered)
        if common is None:
            word = "version" if needed[0] == needed[1] else "versions"
            available = (
                "not available" if offered is None else (f"available: {_range_text(offered)}")
            )
            reasons.append(f"{_label(key)}: needs {word} {_range_text(needed)}, {available}")
        else:
            chosen[key] = common[1]
    return FeatureCheck(not reasons, chosen, tuple(reasons))


class NoCommonVersionError(UnsupportedVersionError):
    """No version of an API is spoken by both sides (KIP-97).

    ``api_key``, ``client_range`` and ``broker_range`` (None when the broker lacks the API
    altogether) say which; ``broker_too_old`` tells an obsolete broker from an obsolete
    client.
    """

    def __init__(
        self, api_key: int, client_range: VersionRange, broker_range: VersionRange | None
    ) -> None:
        self.api_key = api_key
        self.client_range = client_range
        self.broker_range = broker_range
        self.broker_too_old = broker_range is None or broker_range[1] < client_range[0]
        client = f"this client supports versions {_range_text(client_range)}"
        if broker_range is None:
            reason = f"the broker does not support this API; {client} (obsolete broker)"
        else:
            verdict = "obsolete broker" if self.broker_too_old else "obsolete client"
            reason = (
                f"no common version: {client}, the broker supports "
                f"{_range_text(broker_range)} ({verdict})"
            )
        super().__init__(reason, _label(api_key))


def pick_version(
    api_key: int, client_range: VersionRange, broker_range: VersionRange | None
) -> int:
    """The newest version both the client and the broker support.

    Raises ``NoCommonVersionError`` (an ``UnsupportedVersionError``) naming the API and
    both ranges when there is none, or when the broker lacks the API (``None``).
    """
    client_range = _check_range(client_range, _label(api_key))
    common = intersect(client_range, broker_range)
    if common is None:
        raise NoCommonVersionError(api_key, client_range, broker_range)
    return common[1]


@dataclass(frozen=True)
class ApiVersionsOutcome:
    """A decoded ApiVersions response and what to do next."""

    response: Any
    """The decoded ``ApiVersionsResponse``."""
    version: int
    """The version the body was decoded at (0 for a KIP-511 downgrade answer)."""
    correlation_id: int | None
    """From the response header; None when only a body was given."""
    retry_version: int | None
    """Set when the broker refused the requested version (error 35): the version to send
    the ApiVersions request again with. None when no retry is needed, or when the broker
    and this package share no ApiVersions version below the one requested."""

    @property
    def ok(self) -> bool:
        """True when the broker answered without error."""
        return bool(self.response.error_code == ErrorCode.NONE)

    @property
    def versions(self) -> dict[int, VersionRange]:
        """``{api_key: (min, max)}`` as the broker listed them."""
        return broker_versions(self.response)


def decode_api_versions_response(
    data: bytes | bytearray | memoryview, requested_version: int, *, header: bool = True
) -> ApiVersionsOutcome:
    """Decode an ApiVersions response, following the KIP-511 downgrade.

    ``data`` is a response frame without its size prefix (header v0, i.e. the correlation
    id, then the body; ApiVersions responses always use header v0) or, with
    ``header=False``, the body alone. ``requested_version`` is the version the request
    was sent with.

    A broker that does not know ``requested_version`` answers error UNSUPPORTED_VERSION
    with a version 0 body listing its ApiVersions range; this function then decodes the
    body at version 0 and sets ``retry_version`` to the newest version below the
    requested one that both sides support (0 if the broker listed no range). Raises
    ``DecodeError`` when the bytes read at neither version, ``UnsupportedVersionError``
    when ``requested_version`` is not a version of ApiVersions in this package.
    """
    response_class = _api_versions_response()
    low, high = response_class.MIN_VERSION, response_class.MAX_VERSION
    if not low <= requested_version <= high:
        raise UnsupportedVersionError(
            f"ApiVersions has no version {requested_version} in this package "
            f"(versions: {low}-{high})"
        )
    view = memoryview(data)
    correlation_id: int | None = None
    pos = 0
    if header:
        if len(view) < 4:
            raise DecodeError(
                f"{len(view)} bytes cannot hold a response header", 0, "ResponseHeader"
            )
        correlation_id = _INT32.unpack_from(view, 0)[0]
        pos = 4
    body = view[pos:]
    if len(body) < 2:
        raise DecodeError(
            f"{len(body)} bytes cannot hold an error code", pos, "ApiVersionsResponse.error_code"
        )
    # The error code comes first at every version, so it can be read before the version
    # of the body is known: error 35 means the broker wrote a version 0 body (KIP-511).
    error_code: int = _INT16.unpack_from(body, 0)[0]
    # A broker that answers error 35 with a body of the requested version (not KIP-511's
    # version 0) is read too.
    attempts = [requested_version]
    if error_code == ErrorCode.UNSUPPORTED_VERSION and requested_version != 0:
        attempts = [0, requested_version]
    first_error: DecodeError | None = None
    for version in attempts:
        try:
            response = response_class.decode(body, version)
        except DecodeError as exc:
            if first_error is None:
                first_error = DecodeError(exc.reason, exc.offset + pos, exc.path)
            continue
        retry: int | None = None
        if response.error_code == ErrorCode.UNSUPPORTED_VERSION:
            retry = _retry_version(response, requested_version)
        return ApiVersionsOutcome(response, version, correlation_id, retry)
    assert first_error is not None
    raise first_error


def _retry_version(response: Any, requested_version: int) -> int | None:
    response_class = type(response)
    listed = broker_versions(response).get(ApiKey.API_VERSIONS, (0, 0))
    ours = (
        response_class.MIN_VERSION,
        min(response_class.MAX_VERSION, requested_version - 1),
    )
    common = intersect(listed, ours)
    return None if common is None else common[1]


def _api_versions_response() -> Any:
    """The package's ``ApiVersionsResponse`` (imported on first use)."""
    entry = API_KEYS.get(ApiKey.API_VERSIONS)
    if entry is None:
        raise UnsupportedVersionError("this package was generated without ApiVersions")
    return entry.response
