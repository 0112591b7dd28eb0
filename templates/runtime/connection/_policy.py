"""Protocol facts a connection applies: api keys, the version policy, KIP-219's throttle
versions, and the release guess."""

from __future__ import annotations

import importlib
import re
import struct
from collections.abc import Mapping, Sequence
from typing import Protocol, cast

from .. import negotiation
from ..errors import UnsupportedVersionError
from ..negotiation import NoCommonVersionError, VersionRange
from ..registry import API_KEYS, ApiKey
from ._errors import ProtocolFailure
from ._events import FailureCause, Features, ReleaseGuess, Request

INT16 = struct.Struct(">h")
INT32 = struct.Struct(">i")

DEFAULT_POLICY: Mapping[int, VersionRange] = {
    # Versions 4+ are for brokers only (KIP-890); the spec says so in a comment alone.
    ApiKey.ADD_PARTITIONS_TO_TXN: (0, 3),
    # SaslHandshake v2+ would mean something new; Kafka stopped at v1 (KAFKA-9577).
    ApiKey.SASL_HANDSHAKE: (0, 1),
}
"""Api key -> the versions a client may send, on top of the package's and the broker's
ranges. Replace it with ``ClientConnection(policy=...)``."""

CLIENT_THROTTLE_FROM: Mapping[int, int] = {
    0: 6, 1: 8, 2: 3, 3: 6, 8: 4, 9: 4, 10: 2, 11: 3, 12: 2, 13: 2, 14: 2, 15: 2, 16: 2,
    18: 2, 19: 3, 20: 2, 21: 1, 22: 1, 23: 2, 24: 1, 25: 1, 26: 1, 28: 1, 29: 1, 30: 1,
    31: 1, 32: 2, 33: 1, 34: 1, 35: 1, 37: 1, 38: 1, 39: 1, 40: 1, 41: 1, 42: 1,
}  # fmt: skip
"""Api key -> the first version whose response comes *before* the broker throttles (KIP-219;
the spec comments say "Starting in version N, on quota violation, brokers send out responses
before throttling"). Below it the broker already held the response back for
``throttle_time_ms``, so the client must not wait again. APIs not listed are newer than
KIP-219: the client throttles at every version."""

MAX_API_VERSIONS_ATTEMPTS = 3
"""ApiVersions requests per connection at most (the first and two KIP-511 retries)."""

UNSOLICITED_MEMORY = 1024
"""How many acks=0 Produce correlation ids are remembered, so that a broker answering them
anyway (Azure Event Hubs does) is ignored instead of failing the connection."""

ANY_VERSION: VersionRange = (0, 0x7FFF)

# Kafka refuses ApiVersions v3+ with INVALID_REQUEST when the software name or version does
# not match this (ApiVersionsRequest.isValid); checking here names the culprit.
SOFTWARE_PATTERN = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")

# --- release guess ------------------------------------------------------------------------


def guess_release(
    versions: Mapping[int, VersionRange], table: Mapping[str, Mapping[int, VersionRange]]
) -> ReleaseGuess:
    """Which release of ``table`` (name -> api key -> (min, max), oldest first) a broker
    advertising ``versions`` is, in the forms of franz-go's ``kversion.VersionGuess``.

    Releases are compared in turn. Against each, every API the broker advertises differently
    says *newer* (it matches a later release, or has a higher max or min, or is a key no
    release has), *older* (it matches an earlier release, or is lower, or is missing while
    the release has it) or *either* (a key missing here that a later release dropped: the
    broker predates its addition or follows its removal). Newer or either: go on to the next
    release; older: the broker is older than this one; both newer and older: a mix no
    release has ("not exact"); all equal: this release.
    """
    names = list(table)
    if not names:
        return ReleaseGuess("unknown")
    rows = [table[name] for name in names]
    keys = set(versions).union(*rows)
    last: str | None = None
    for position, name in enumerate(names):
        under = over = vague = False
        for key in keys:
            have = versions.get(key)
            if have == rows[position].get(key):
                continue
            older, newer = _direction(have, [row.get(key) for row in rows], position)
            under, over = under or (older and not newer), over or (newer and not older)
            vague = vague or (older and newer)
        if under and over:
            return ReleaseGuess("unknown" if last is None else "not exact, between", last, name)
        if under:
            return ReleaseGuess("older than" if last is None else "between", last, name)
        if not over and not vague:
            return ReleaseGuess("exact", name)
        last = name
    return ReleaseGuess("at least", last)


def _direction(
    have: VersionRange | None, history: list[VersionRange | None], position: int
) -> tuple[bool, bool]:
    """(older, newer): how a broker's range of one API, ``have`` (None: not advertised),
    compares with release ``position`` of ``history`` (that API's range in each release).
    Both True: it cannot tell (both values are seen, before and after)."""
    earlier, later = history[:position], history[position + 1 :]
    # "Not advertised" always matches the past: every API was absent before it was added,
    # if not in an earlier release of the table then in one before the table starts.
    matches_earlier = have is None or have in earlier
    matches_later = have in later
    if matches_earlier or matches_later:
        return matches_earlier, matches_later
    assert have is not None
    want = history[position]
    if want is None:  # a range no release has, of an API this release lacks
        removed = any(h is not None for h in earlier) and all(h is None for h in later)
        return removed, not removed
    older = have[1] < want[1] or have[0] < want[0]
    newer = have[1] > want[1] or have[0] > want[0]
    return older, newer


class BrokerRow(Protocol):
    """What the guess reads of a release table's row (``releases.BrokerRow``)."""

    @property
    def kraft(self) -> bool: ...
    @property
    def label(self) -> str: ...
    @property
    def advertised(self) -> Mapping[int, VersionRange]: ...
    @property
    def telemetry(self) -> Mapping[int, VersionRange]: ...
    @property
    def supported_features(self) -> Mapping[str, VersionRange]: ...


# ZooKeeper brokers advertise the controller-to-broker APIs (LeaderAndIsr, StopReplica,
# UpdateMetadata, ControlledShutdown); KRaft brokers never do.
_ZOOKEEPER_ONLY = frozenset({4, 5, 6, 7})


def guess_broker_release(
    versions: Mapping[int, VersionRange],
    features: Features | None = None,
    rows: Sequence[BrokerRow] | None = None,
) -> ReleaseGuess:
    """Which row of a release table (``releases.BROKER_ROWS``: the package's own when
    ``rows`` is None) a broker advertising ``versions`` is, both broker kinds included.

    A row whose ranges, with or without its telemetry APIs (advertised only when a
    telemetry receiver is configured), equal ``versions`` is a candidate. Where several are,
    the ``features`` of an ApiVersions v3+ answer pick among them: a candidate supports each
    feature the answer lists at the same levels, and the answer lists each feature the
    candidate supports from level 1 (an answer below v4 leaves out those from level 0). One
    candidate: ``exact``; several: ``one of``. No candidate: ``guess_release`` against the
    rows of the broker's kind, oldest first.
    """
    table = list(package_release_rows() if rows is None else rows)
    if not table:
        return ReleaseGuess("unknown")
    wanted = dict(versions)
    candidates = [
        row
        for row in table
        if wanted in (dict(row.advertised), {**row.advertised, **row.telemetry})
    ]
    if len(candidates) > 1 and features is not None:
        fitting = [row for row in candidates if _features_fit(row, features.supported)]
        candidates = fitting or candidates
    if len(candidates) == 1:
        return ReleaseGuess("exact", candidates[0].label)
    if candidates:
        return ReleaseGuess("one of", candidates=tuple(row.label for row in candidates))
    kraft = not _ZOOKEEPER_ONLY & set(versions)
    same_kind = {row.label: row.advertised for row in table if row.kraft == kraft}
    return guess_release(versions, same_kind or {row.label: row.advertised for row in table})


def ready_release_guess(
    versions: Mapping[int, VersionRange],
    features: Features,
    table: Mapping[str, Mapping[int, VersionRange]] | None,
) -> ReleaseGuess | None:
    """``Ready.release_guess``: the package's rows when ``table`` is None (None without
    any), else ``guess_release`` on ``table``; ``{}`` turns the guess off."""
    if table is None:
        rows = package_release_rows()
        return guess_broker_release(versions, features, rows) if rows else None
    return guess_release(versions, table) if table else None


def _features_fit(row: BrokerRow, supported: Mapping[str, VersionRange]) -> bool:
    theirs = row.supported_features
    if any(theirs.get(name) != tuple(levels) for name, levels in supported.items()):
        return False
    return all(name in supported for name, (low, _) in theirs.items() if low > 0)


def expects_response(request: Request) -> bool:
    """False for the one request Kafka never answers: a Produce with acks=0."""
    return not (request.API_KEY == ApiKey.PRODUCE and getattr(request, "acks", None) == 0)


def package_release_rows() -> Sequence[BrokerRow]:
    """The package's release table rows (``releases.BROKER_ROWS``), or () without one."""
    try:
        module = importlib.import_module("..releases", __package__)
    except ImportError:
        return ()
    return cast("Sequence[BrokerRow]", getattr(module, "BROKER_ROWS", ()))


def error_name(code: int) -> str:
    try:
        module = importlib.import_module("..error_codes", __package__)
        return str(module.error_name(code))
    except (ImportError, AttributeError):
        return f"error {code}"


def split_frames(buffer: bytearray, max_frame_size: int, sender: str) -> list[bytes]:
    """The whole size-prefixed frames at the front of ``buffer``, taken out of it. A size
    over ``max_frame_size`` fails from its 4-byte prefix alone: nothing of a huge frame is
    buffered first. ``sender`` names the peer in that failure."""
    frames: list[bytes] = []
    pos = 0
    try:
        while len(buffer) - pos >= 4:
            (size,) = INT32.unpack_from(buffer, pos)
            if size < 0 or size > max_frame_size:
                raise ProtocolFailure(
                    FailureCause.FRAME_TOO_LARGE,
                    f"the {sender} announced a frame of {size} bytes "
                    f"(the limit is {max_frame_size})",
                )
            if len(buffer) - pos - 4 < size:
                break
            frames.append(bytes(buffer[pos + 4 : pos + 4 + size]))
            pos += 4 + size
    finally:
        del buffer[:pos]
    return frames


def choose_version(
    api_key: int, policy: Mapping[int, VersionRange], broker: Mapping[int, VersionRange]
) -> int:
    """The newest version of ``api_key`` in the package's range, the policy's and the
    broker's. Raises ``NoCommonVersionError`` (an ``UnsupportedVersionError``, KIP-97) when
    there is none."""
    entry = API_KEYS.get(api_key)
    if entry is None:
        raise UnsupportedVersionError(f"this package has no API with key {api_key}")
    # A version still under development (latestVersionUnstable) may change shape before
    # it is released: only ``version=`` sends it.
    high = entry.max_version - (1 if entry.latest_version_unstable else 0)
    if high < entry.min_version:
        raise UnsupportedVersionError(
            f"{entry.name}: this package has only the unstable version {entry.max_version} "
            "(send it with version=)"
        )
    ours = negotiation.intersect((entry.min_version, high), policy.get(api_key, ANY_VERSION))
    if ours is None:
        raise UnsupportedVersionError(
            f"{entry.name}: the policy allows {policy.get(api_key)}, this package has "
            f"{entry.min_version}-{high}"
        )
    return negotiation.pick_version(api_key, ours, broker.get(api_key))


def check_version(api_key: int, version: int, broker: Mapping[int, VersionRange]) -> None:
    """Refuse an explicit ``version=`` that the package or the broker lacks, before anything
    is queued: the broker would close the connection on it."""
    entry = API_KEYS[api_key]
    if not entry.min_version <= version <= entry.max_version:
        raise UnsupportedVersionError(
            f"{entry.name} has no version {version} in this package "
            f"(versions: {entry.min_version}-{entry.max_version})"
        )
    offered = broker.get(api_key)
    if offered is None or not offered[0] <= version <= offered[1]:
        raise NoCommonVersionError(api_key, (version, version), offered)
