"""A Kafka connection without I/O: bytes and time in, events out (h11 and aioquic style).

The caller owns the socket and the clock; this module owns the protocol::

    conn = ClientConnection(client_id="app", client_software=("app", "1.0"))
    conn.start(now)                               # queues ApiVersions
    sock.sendall(conn.data_to_send())
    for event in conn.receive_data(sock.recv(65536), now):   # b"" = the peer closed
        ...                                       # Ready, Response, Throttled, ...
    cid = conn.send(MetadataRequest(topics=None), now)       # the newest common version
    # wake up at conn.next_deadline() and call conn.handle_timer(now)

After every call, write out ``data_to_send()``: a paused request is released by
``receive_data`` or ``handle_timer``, not by ``send``.

``ClientConnection`` runs the ApiVersions handshake (KIP-35) with the KIP-511 downgrade,
the optional SASL exchange (KIP-43, KIP-152), version choice per request (KIP-97's local
"obsolete broker" error), correlation ids, the in-flight limit, KIP-219 throttling and
per-request deadlines. ``ServerConnection`` is the broker side, for proxies and test brokers.

Anything the peer sends that breaks the protocol ends the connection with one
``ConnectionFailed`` event; ``receive_data`` never raises on what the peer sends. Misuse by
the caller (sending before ``Ready`` or after the end) raises ``LocalProtocolError``.

Sending while paused queues: ``send`` always takes the request (it has a correlation id at
once) and writes it when the in-flight limit and the throttle allow. A request's deadline
starts when it is written, as Java's ``request.timeout.ms`` does.
"""

from __future__ import annotations

import importlib
import re
import struct
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Generic, Protocol, TypeVar, cast

from . import framing, negotiation
from .errors import DecodeError, UnsupportedVersionError
from .headers import RequestHeader, ResponseHeader
from .negotiation import NoCommonVersionError, VersionRange
from .registry import API_KEYS, api_name
from .sasl import SaslError, SaslExchange, SaslMechanism

__all__ = [
    "CLIENT_THROTTLE_FROM",
    "DEFAULT_POLICY",
    "ClientConnection",
    "ConnectionClosed",
    "ConnectionFailed",
    "ConnectionFailedError",
    "ConnectionState",
    "Event",
    "FailureCause",
    "Features",
    "LocalProtocolError",
    "NoCommonVersionError",
    "Ready",
    "ReleaseGuess",
    "Request",
    "RequestReceived",
    "RequestTimedOut",
    "RequestTimedOutError",
    "Response",
    "SaslTokenReceived",
    "ServerConnection",
    "Throttled",
    "TypedRequest",
    "UnsupportedVersionError",
    "expects_response",
    "guess_release",
]

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")

PRODUCE = 0
SASL_HANDSHAKE = 17
API_VERSIONS = 18
SASL_AUTHENTICATE = 36
UNSUPPORTED_VERSION = 35

DEFAULT_POLICY: Mapping[int, VersionRange] = {
    # Versions 4+ are for brokers only (KIP-890); the spec says so in a comment alone.
    24: (0, 3),
    # SaslHandshake v2+ would mean something new; Kafka stopped at v1 (KAFKA-9577).
    17: (0, 1),
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

_ANY: VersionRange = (0, 0x7FFF)

# Kafka refuses ApiVersions v3+ with INVALID_REQUEST when the software name or version does
# not match this (ApiVersionsRequest.isValid); checking here names the culprit.
_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")

R = TypeVar("R")
T = TypeVar("T")
R_co = TypeVar("R_co", covariant=True)


class Request(Protocol):
    """What ``send`` needs of a request: every generated request class fits."""

    @property
    def API_KEY(self) -> int | None: ...

    def encode(self, version: int) -> bytes: ...


class TypedRequest(Request, Protocol[R_co]):
    """A request class that names its response class (``MetadataRequest.Response``), so
    ``Response.response_for`` and the adapters' ``request`` return that type."""

    @property
    def Response(self) -> type[R_co]: ...


# --- events -------------------------------------------------------------------------------


class Event:
    """Base of everything ``receive_data`` and ``handle_timer`` return."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Features:
    """The feature part of an ApiVersions response (v3+; empty before)."""

    supported: dict[str, VersionRange] = field(default_factory=dict)
    """Feature name -> the (min, max) version this broker supports."""
    finalized: dict[str, VersionRange] = field(default_factory=dict)
    """Feature name -> the (min, max) level finalized for the cluster; empty when ``epoch``
    is -1, since the broker then does not know them."""
    epoch: int = -1
    """The epoch of the finalized features, -1 when unknown."""


@dataclass(frozen=True, slots=True)
class ReleaseGuess:
    """Which Kafka release a broker looks like, in franz-go's kversion forms.

    ``kind`` is ``exact``, ``at least``, ``between``, ``not exact, between`` (a mix of
    older and newer ranges, e.g. a vendor build), ``older than`` or ``unknown``; ``low`` and
    ``high`` are release names from the table. ``str()`` gives the sentence.
    """

    kind: str
    low: str | None = None
    high: str | None = None

    def __str__(self) -> str:
        if self.kind == "exact":
            return str(self.low)
        if self.kind == "at least":
            return f"at least {self.low}"
        if self.kind == "older than":
            return f"older than {self.high}"
        if self.kind == "unknown":
            return "unknown"
        return f"{self.kind} {self.low} and {self.high}"


@dataclass(frozen=True, slots=True)
class Ready(Event):
    """The handshake is over (and SASL, when configured): requests may be sent."""

    versions: dict[int, VersionRange]
    """Api key -> the (min, max) the broker supports."""
    features: Features
    api_versions_version: int | None
    """The ApiVersions version the broker answered; None when ``broker_versions`` was given."""
    release_guess: ReleaseGuess | None
    """``guess_release`` on ``versions``; None without a release table."""
    sasl_mechanism: str | None = None
    session_lifetime_ms: int = 0
    api_versions_refused: tuple[int, ...] = ()
    """The ApiVersions versions the broker refused (KIP-511) before the one it answered."""
    """From SaslAuthenticate v1+ (KIP-368): re-authenticate before it ends; 0 = no limit."""


class Response(Event, Generic[R]):
    """The answer to a request; ``response`` was decoded at the version the request used.

    (A plain class, not a dataclass like the other events: the compiled build of this
    package cannot make a generic dataclass.)
    """

    __slots__ = ("correlation_id", "request", "response", "api_version", "latency")
    __match_args__ = ("correlation_id", "request", "response", "api_version", "latency")

    def __init__(
        self, correlation_id: int, request: Any, response: R, api_version: int, latency: float
    ) -> None:
        self.correlation_id = correlation_id
        self.request = request
        """The request object given to ``send``."""
        self.response = response
        self.api_version = api_version
        self.latency = latency
        """Seconds from writing the request to reading the response."""

    @property
    def api_key(self) -> int:
        return int(getattr(self.request, "API_KEY"))

    def response_for(self, request_class: type[TypedRequest[T]]) -> T | None:
        """The response, typed, if it answers a ``request_class`` request; else None::

        metadata = event.response_for(MetadataRequest)   # MetadataResponse | None
        """
        if isinstance(self.request, request_class):
            return cast(T, self.response)
        return None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Response) and (
            self.correlation_id,
            self.request,
            self.response,
            self.api_version,
            self.latency,
        ) == (other.correlation_id, other.request, other.response, other.api_version, other.latency)

    def __repr__(self) -> str:
        return (
            f"Response(correlation_id={self.correlation_id}, request={self.request!r}, "
            f"response={self.response!r}, api_version={self.api_version}, "
            f"latency={self.latency!r})"
        )


@dataclass(frozen=True, slots=True)
class Throttled(Event):
    """The broker throttled this client (KIP-219): requests wait until ``until``."""

    correlation_id: int
    throttle_time_ms: int
    until: float


@dataclass(frozen=True, slots=True)
class RequestTimedOut(Event):
    """No response before the request's deadline. The connection is then closed (a
    ``ConnectionFailed`` follows), as Java's client does: a late answer cannot be told
    from the answer to a later request."""

    correlation_id: int
    request: Any
    api_version: int
    elapsed: float


class FailureCause(Enum):
    """Why a connection failed (``ConnectionFailed.cause``)."""

    CLOSED = "closed"
    """The peer closed the connection while requests were unanswered."""
    CLOSED_DURING_API_VERSIONS = "closed during ApiVersions"
    HANDSHAKE_FAILED = "handshake failed"
    AUTHENTICATION_FAILED = "authentication failed"
    FRAME_TOO_LARGE = "frame too large"
    UNKNOWN_CORRELATION_ID = "unknown correlation id"
    UNDECODABLE = "undecodable"
    TIMED_OUT = "timed out"
    INTERNAL_ERROR = "internal error"
    """A bug of this package met remote input; the reason names the exception."""


@dataclass(frozen=True, slots=True)
class ConnectionFailed(Event):
    """The connection is over (the peer broke the protocol, closed, or timed out)."""

    cause: FailureCause
    reason: str
    unanswered: tuple[int, ...] = ()
    """Correlation ids of requests sent or queued that will never be answered."""


@dataclass(frozen=True, slots=True)
class ConnectionClosed(Event):
    """The peer closed the connection with nothing outstanding."""


@dataclass(frozen=True, slots=True)
class RequestReceived(Event):
    """A request, on the broker side (``ServerConnection``)."""

    correlation_id: int
    api_key: int
    api_version: int
    header: RequestHeader
    request: Any
    """The decoded request; None for an ApiVersions request newer than this package, which
    a broker answers the KIP-511 way (``ServerConnection.send_api_versions``)."""
    expects_response: bool
    """False for an acks=0 Produce."""
    frame: bytes
    """The frame as received (without size prefix), for a proxy to pass on unchanged."""


@dataclass(frozen=True, slots=True)
class SaslTokenReceived(Event):
    """A raw SASL token after a SaslHandshake v0 (broker side; KIP-43, before KIP-152)."""

    token: bytes


class LocalProtocolError(Exception):
    """The caller used a connection wrongly: sending before ``Ready``, after the end, ..."""


# The adapters' errors derive from Exception, not ConnectionError/TimeoutError: the compiled
# (mypyc) build of this package cannot subclass OSError.
class ConnectionFailedError(Exception):
    """Raised by the adapters when the connection ends; ``event`` says why (None when it
    was closed cleanly, by either side)."""

    def __init__(self, message: str, event: ConnectionFailed | None = None) -> None:
        super().__init__(message)
        self.event = event


class RequestTimedOutError(ConnectionFailedError):
    """Raised by the adapters when a request gets no response in time (the connection is
    then closed too)."""


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


def expects_response(request: Request) -> bool:
    """False for the one request Kafka never answers: a Produce with acks=0."""
    return not (request.API_KEY == PRODUCE and getattr(request, "acks", None) == 0)


def _package_release_table() -> Mapping[str, Mapping[int, VersionRange]]:
    """The package's own release table (``releases.BROKER_RELEASES``), or {} without one."""
    try:
        module = importlib.import_module(".releases", __package__)
    except ImportError:
        return {}
    table = getattr(module, "BROKER_RELEASES", {})
    return cast("Mapping[str, Mapping[int, VersionRange]]", table)


def _error_name(code: int) -> str:
    try:
        module = importlib.import_module(".error_codes", __package__)
        return str(module.error_name(code))
    except (ImportError, AttributeError):
        return f"error {code}"


# --- the client ---------------------------------------------------------------------------


class ConnectionState(Enum):
    IDLE = "idle"
    """Before ``start``."""
    NEGOTIATING = "negotiating"
    """ApiVersions sent, no answer yet."""
    AUTHENTICATING = "authenticating"
    READY = "ready"
    CLOSED = "closed"


# Internal requests are told apart from the caller's by their purpose.
_USER = "user"
_API_VERSIONS = "ApiVersions"
_SASL_HANDSHAKE = "SaslHandshake"
_SASL_AUTHENTICATE = "SaslAuthenticate"


class _Pending:
    """A request written or queued, until its response."""

    __slots__ = (
        "correlation_id",
        "api_key",
        "api_version",
        "request",
        "data",
        "purpose",
        "timeout",
        "expects_response",
        "sent_at",
        "deadline",
    )

    def __init__(
        self,
        correlation_id: int,
        api_key: int,
        api_version: int,
        request: Any,
        data: bytes,
        purpose: str,
        timeout: float,
        expects_response: bool = True,
    ) -> None:
        self.correlation_id = correlation_id
        self.api_key = api_key
        self.api_version = api_version
        self.request = request
        self.data = data
        """The size-prefixed frame."""
        self.purpose = purpose
        self.timeout = timeout
        self.expects_response = expects_response
        self.sent_at = 0.0
        self.deadline = 0.0


class _Failure(Exception):
    """Internal: ends frame processing with a ``ConnectionFailed``."""

    def __init__(self, cause: FailureCause, reason: str) -> None:
        super().__init__(reason)
        self.cause = cause
        self.reason = reason


class ClientConnection:
    """The client side of one Kafka connection, without I/O.

    ``broker_versions`` (``{api_key: (min, max)}`` or a decoded ApiVersionsResponse) skips
    the ApiVersions request, as KIP-35 allows for a configured broker. ``sasl`` is a mechanism
    from ``sasl`` (``Plain``, ``ScramSha256``, ``ScramSha512``). ``policy`` overlays the
    package's version ranges (``DEFAULT_POLICY``). ``release_table`` (release -> api key ->
    (min, max), oldest first) feeds ``Ready.release_guess``; None uses the package's
    ``releases`` table when it has one, ``{}`` turns the guess off.
    """

    def __init__(
        self,
        *,
        client_id: str | None = "kafka-messages",
        client_software: tuple[str, str] = ("kafka-messages", "1"),
        max_in_flight: int = 5,
        request_timeout: float = 30.0,
        max_frame_size: int = framing.DEFAULT_MAX_FRAME_SIZE,
        broker_versions: negotiation.BrokerVersions | None = None,
        sasl: SaslMechanism | None = None,
        policy: Mapping[int, VersionRange] = DEFAULT_POLICY,
        release_table: Mapping[str, Mapping[int, VersionRange]] | None = None,
    ) -> None:
        for part in client_software:
            if not _SOFTWARE.fullmatch(part):
                raise ValueError(
                    f"client software {part!r}: Kafka accepts letters, digits, '-' and '.', "
                    "starting and ending with a letter or digit"
                )
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        if request_timeout <= 0 or max_frame_size < 4:
            raise ValueError("request_timeout must be positive, max_frame_size at least 4")
        self.client_id = client_id
        self.client_software = client_software
        self.max_in_flight = max_in_flight
        self.request_timeout = request_timeout
        self.max_frame_size = max_frame_size
        self.policy = dict(policy)
        self._configured = (
            None if broker_versions is None else negotiation.broker_versions(broker_versions)
        )
        self._sasl = sasl
        self._release_table = release_table
        self._state = ConnectionState.IDLE
        self._buffer = bytearray()
        self._out = bytearray()
        self._next_id = 0
        self._in_flight: dict[int, _Pending] = {}
        self._queue: deque[_Pending] = deque()
        self._unsolicited: dict[int, None] = {}
        self._throttled_until: float | None = None
        self._raw_deadline: float | None = None
        self._versions: dict[int, VersionRange] = {}
        self._features = Features()
        self._api_versions_version: int | None = None
        self._api_versions_refused: list[int] = []
        self._api_versions_attempts = 0
        self._exchange: SaslExchange | None = None
        self._raw_sasl = False
        self._session_lifetime_ms = 0
        self.ready: Ready | None = None
        """The ``Ready`` event, once there was one."""

    # --- what the caller reads --------------------------------------------------------

    @property
    def state(self) -> ConnectionState:
        return self._state

    @property
    def versions(self) -> dict[int, VersionRange]:
        """The broker's ranges (empty before the handshake)."""
        return dict(self._versions)

    @property
    def in_flight(self) -> int:
        """Requests written and waiting for their response."""
        # Handshake requests are the only ones before Ready, the caller's the only ones after.
        return len(self._in_flight) if self._state is ConnectionState.READY else 0

    @property
    def queued(self) -> int:
        """Requests sent while paused, not written yet."""
        return len(self._queue)

    @property
    def throttled_until(self) -> float | None:
        """While throttled (KIP-219), when sending resumes; else None."""
        return self._throttled_until

    @property
    def buffered(self) -> int:
        """Bytes held of an incomplete frame (at most ``max_frame_size + 3``)."""
        return len(self._buffer)

    def awaiting(self, correlation_id: int) -> bool:
        """True while a response to ``correlation_id`` is expected (queued or in flight)."""
        pending = self._in_flight.get(correlation_id)
        if pending is not None:
            return pending.purpose == _USER
        return any(p.correlation_id == correlation_id and p.expects_response for p in self._queue)

    def data_to_send(self) -> bytes:
        """The bytes to write to the socket now (b"" when none); the caller must write all."""
        data = bytes(self._out)
        self._out.clear()
        return data

    def next_deadline(self) -> float | None:
        """When to call ``handle_timer`` next (None: no timer needed)."""
        deadlines = [p.deadline for p in self._in_flight.values()]
        if self._raw_deadline is not None:
            deadlines.append(self._raw_deadline)
        if self._queue and self._throttled_until is not None:
            deadlines.append(self._throttled_until)
        return min(deadlines) if deadlines else None

    def version_for(self, api_key: int) -> int:
        """The version ``send`` picks for ``api_key``: the newest in the package's range, the
        broker's and the policy's. Raises ``NoCommonVersionError`` (an
        ``UnsupportedVersionError``, KIP-97) when there is none."""
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
        ours = negotiation.intersect((entry.min_version, high), self.policy.get(api_key, _ANY))
        if ours is None:
            raise UnsupportedVersionError(
                f"{entry.name}: the policy allows {self.policy.get(api_key)}, this package has "
                f"{entry.min_version}-{high}"
            )
        return negotiation.pick_version(api_key, ours, self._versions.get(api_key))

    # --- what the caller does ---------------------------------------------------------

    def start(self, now: float) -> list[Event]:
        """Begin: queue ApiVersions (or, with ``broker_versions``, go on to SASL or Ready,
        whose event is returned here)."""
        if self._state is not ConnectionState.IDLE:
            raise LocalProtocolError(f"start() on a connection that is {self._state.value}")
        events: list[Event] = []
        if self._configured is None:
            entry = API_KEYS.get(API_VERSIONS)
            if entry is None:
                raise LocalProtocolError(
                    "this package has no ApiVersions: pass broker_versions= instead"
                )
            self._state = ConnectionState.NEGOTIATING
            policy = self.policy.get(API_VERSIONS, (0, entry.max_version))
            self._send_api_versions(min(entry.max_version, policy[1]), now)
        else:
            self._versions = dict(self._configured)
            try:
                self._after_versions(now, events)
            except _Failure as failure:
                self._fail(events, failure.cause, failure.reason)
        return events

    def send(
        self,
        request: Request,
        now: float,
        *,
        version: int | None = None,
        timeout: float | None = None,
    ) -> int:
        """Send ``request`` at ``version`` (default: ``version_for``); returns its correlation
        id. ``timeout`` overrides ``request_timeout`` for this request.

        Raises locally, queuing nothing: ``NoCommonVersionError`` when the broker and this
        package share no version (KIP-97), ``EncodeError`` for a value the version cannot
        carry, ``LocalProtocolError`` before ``Ready`` or after the end. While paused (the
        in-flight limit, a throttle) the request waits in a queue, and ``receive_data`` or
        ``handle_timer`` writes it later.
        """
        if self._state is not ConnectionState.READY:
            raise LocalProtocolError(f"cannot send on a connection that is {self._state.value}")
        api_key = request.API_KEY
        entry = API_KEYS.get(api_key) if isinstance(api_key, int) else None
        if entry is None or not isinstance(request, entry.request):
            raise UnsupportedVersionError(f"{type(request).__name__} is not a request class")
        assert isinstance(api_key, int)
        if version is None:
            version = self.version_for(api_key)
        # Produce with acks=0 gets no response at all: waiting for one would time out.
        pending = self._encode(request, api_key, version, _USER, timeout, expects_response(request))
        self._queue.append(pending)
        self._flush(now)
        return pending.correlation_id

    def receive_data(self, data: bytes, now: float) -> list[Event]:
        """Feed bytes read from the socket (b"" when the peer closed); returns the events.
        Never raises on what the peer sent."""
        events: list[Event] = []
        if self._state is ConnectionState.CLOSED:
            return events
        try:
            if data:
                self._buffer += data
                self._read_frames(now, events)
            else:
                self._eof(events)
            self._flush(now)  # a response may have made room for queued requests
        except _Failure as failure:
            self._fail(events, failure.cause, failure.reason)
        except Exception as exc:  # noqa: BLE001 - a bug here must not crash the caller's loop
            self._fail(events, FailureCause.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
        return events

    def handle_timer(self, now: float) -> list[Event]:
        """Expire deadlines and end throttles that are due at ``now``."""
        events: list[Event] = []
        if self._state is ConnectionState.CLOSED:
            return events
        if self._raw_deadline is not None and now >= self._raw_deadline:
            self._fail(events, FailureCause.TIMED_OUT, "no answer to a SASL token in time")
            return events
        expired = sorted(
            (p for p in self._in_flight.values() if now >= p.deadline),
            key=lambda p: p.correlation_id,
        )
        for pending in expired:
            del self._in_flight[pending.correlation_id]
            if pending.purpose == _USER:
                elapsed = now - pending.sent_at
                events.append(
                    RequestTimedOut(
                        pending.correlation_id, pending.request, pending.api_version, elapsed
                    )
                )
        if expired:
            names = ", ".join(
                f"{api_name(p.api_key)} (correlation id {p.correlation_id})" for p in expired
            )
            self._fail(events, FailureCause.TIMED_OUT, f"no response in time to {names}")
            return events
        self._flush(now)
        return events

    def close(self) -> None:
        """End the connection from this side (the caller closes the socket)."""
        self._close()

    # --- internals --------------------------------------------------------------------

    def _next_correlation_id(self) -> int:
        cid = self._next_id
        self._next_id = (cid + 1) & 0x7FFFFFFF
        return cid

    def _encode(
        self,
        request: Any,
        api_key: int,
        version: int,
        purpose: str,
        timeout: float | None,
        expects_response: bool = True,
    ) -> _Pending:
        cid = self._next_correlation_id()
        header = RequestHeader(api_key, version, cid, self.client_id)
        data = framing.add_size_prefix(framing.encode_request(header, request))
        return _Pending(
            cid,
            api_key,
            version,
            request,
            data,
            purpose,
            self.request_timeout if timeout is None else timeout,
            expects_response,
        )

    def _write(self, pending: _Pending, now: float) -> None:
        self._out += pending.data
        pending.sent_at = now
        pending.deadline = now + pending.timeout
        if pending.expects_response:
            self._in_flight[pending.correlation_id] = pending
        else:
            self._unsolicited[pending.correlation_id] = None
            if len(self._unsolicited) > UNSOLICITED_MEMORY:
                del self._unsolicited[next(iter(self._unsolicited))]

    def _send_internal(self, request: Any, api_key: int, version: int, now: float) -> None:
        # Handshake requests go out at once: nothing else is in flight before Ready.
        purpose = {
            API_VERSIONS: _API_VERSIONS,
            SASL_HANDSHAKE: _SASL_HANDSHAKE,
            SASL_AUTHENTICATE: _SASL_AUTHENTICATE,
        }[api_key]
        self._write(self._encode(request, api_key, version, purpose, None), now)

    def _flush(self, now: float) -> None:
        """Write queued requests while neither pause holds."""
        if self._throttled_until is not None and now >= self._throttled_until:
            self._throttled_until = None
        if self._state is not ConnectionState.READY or self._throttled_until is not None:
            return
        while self._queue and self.in_flight < self.max_in_flight:
            self._write(self._queue.popleft(), now)

    def _read_frames(self, now: float, events: list[Event]) -> None:
        buffer = self._buffer
        pos = 0
        try:
            while len(buffer) - pos >= 4:
                (size,) = _INT32.unpack_from(buffer, pos)
                # Judged from the 4-byte prefix alone: nothing of a huge frame is buffered.
                if size < 0 or size > self.max_frame_size:
                    raise _Failure(
                        FailureCause.FRAME_TOO_LARGE,
                        f"the peer announced a frame of {size} bytes "
                        f"(the limit is {self.max_frame_size})",
                    )
                if len(buffer) - pos - 4 < size:
                    break
                frame = bytes(buffer[pos + 4 : pos + 4 + size])
                pos += 4 + size
                self._frame(frame, now, events)
        finally:
            del buffer[:pos]

    def _frame(self, frame: bytes, now: float, events: list[Event]) -> None:
        if self._raw_sasl:
            self._raw_token(frame, now, events)
            return
        if len(frame) < 4:
            raise _Failure(
                FailureCause.UNDECODABLE, f"a {len(frame)}-byte frame has no correlation id"
            )
        (cid,) = _INT32.unpack_from(frame, 0)
        pending = self._in_flight.pop(cid, None)
        if pending is None:
            if cid in self._unsolicited:
                del self._unsolicited[cid]  # an answer to acks=0: nobody waits for it
                return
            raise _Failure(
                FailureCause.UNKNOWN_CORRELATION_ID,
                f"a response with correlation id {cid}, which no request in flight has",
            )
        if pending.purpose == _API_VERSIONS:
            self._api_versions_response(frame, pending, now, events)
            return
        try:
            _, body = framing.decode_response(frame, pending.api_key, pending.api_version)
        except DecodeError as exc:
            raise _Failure(
                FailureCause.UNDECODABLE,
                f"{api_name(pending.api_key)} v{pending.api_version} response "
                f"(correlation id {cid}) does not decode: {exc}",
            ) from None
        if pending.purpose == _USER:
            latency = now - pending.sent_at
            events.append(Response(cid, pending.request, body, pending.api_version, latency))
            self._throttle(pending, body, now, events)
        elif pending.purpose == _SASL_HANDSHAKE:
            self._sasl_handshake_response(body, pending, now, events)
        else:
            self._sasl_authenticate_response(body, now, events)

    def _throttle(self, pending: _Pending, body: Any, now: float, events: list[Event]) -> None:
        ms = getattr(body, "throttle_time_ms", 0)
        if not isinstance(ms, int) or ms <= 0:
            return
        if pending.api_version < CLIENT_THROTTLE_FROM.get(pending.api_key, 0):
            return  # the broker already delayed this response by ms (before KIP-219)
        until = now + ms / 1000.0
        if self._throttled_until is None or until > self._throttled_until:
            self._throttled_until = until
        events.append(Throttled(pending.correlation_id, ms, until))

    # --- handshake ----------------------------------------------------------------------

    def _send_api_versions(self, version: int, now: float) -> None:
        self._api_versions_attempts += 1
        name, version_text = self.client_software
        request = API_KEYS[API_VERSIONS].request(
            client_software_name=name, client_software_version=version_text
        )
        self._send_internal(request, API_VERSIONS, version, now)

    def _api_versions_response(
        self, frame: bytes, pending: _Pending, now: float, events: list[Event]
    ) -> None:
        sent = pending.api_version
        try:
            outcome = negotiation.decode_api_versions_response(frame, sent)
        except DecodeError as exc:
            raise _Failure(
                FailureCause.UNDECODABLE, f"ApiVersions v{sent} response does not decode: {exc}"
            ) from None
        response = outcome.response
        if response.error_code == UNSUPPORTED_VERSION:
            # KIP-511: the body is v0 and lists the broker's ApiVersions range. Retry at its
            # newest if that is strictly lower than what was sent; else at v0 (a broker
            # listing nothing, or a range that does not explain the refusal).
            listed = outcome.versions.get(API_VERSIONS)
            retry = listed[1] if listed is not None and listed[1] < sent else 0
            if sent == 0 or self._api_versions_attempts >= MAX_API_VERSIONS_ATTEMPTS:
                raise _Failure(
                    FailureCause.HANDSHAKE_FAILED,
                    f"the broker refused ApiVersions v{sent} (UNSUPPORTED_VERSION) after "
                    f"{self._api_versions_attempts} attempts",
                )
            self._api_versions_refused.append(sent)
            self._send_api_versions(retry, now)
            return
        if response.error_code != 0:
            raise _Failure(
                FailureCause.HANDSHAKE_FAILED,
                f"ApiVersions v{sent} answered {_error_name(response.error_code)}",
            )
        self._versions = outcome.versions
        self._api_versions_version = outcome.version
        epoch = getattr(response, "finalized_features_epoch", -1)
        supported = getattr(response, "supported_features", ())
        finalized = getattr(response, "finalized_features", ()) if epoch != -1 else ()
        self._features = Features(
            {f.name: (f.min_version, f.max_version) for f in supported},
            {f.name: (f.min_version_level, f.max_version_level) for f in finalized},
            epoch,
        )
        self._throttle(pending, response, now, events)
        self._after_versions(now, events)

    def _after_versions(self, now: float, events: list[Event]) -> None:
        if self._sasl is None:
            self._become_ready(events)
            return
        self._state = ConnectionState.AUTHENTICATING
        entry = API_KEYS.get(SASL_HANDSHAKE)
        if entry is None:
            raise _Failure(
                FailureCause.AUTHENTICATION_FAILED,
                "SASL is configured but this package was generated without SaslHandshake",
            )
        try:
            version = self.version_for(SASL_HANDSHAKE)
        except UnsupportedVersionError as exc:
            raise _Failure(FailureCause.AUTHENTICATION_FAILED, str(exc)) from None
        request = entry.request(mechanism=self._sasl.name)
        self._send_internal(request, SASL_HANDSHAKE, version, now)

    def _sasl_handshake_response(
        self, body: Any, pending: _Pending, now: float, events: list[Event]
    ) -> None:
        assert self._sasl is not None
        if body.error_code != 0:
            offered = ", ".join(getattr(body, "mechanisms", ())) or "none"
            raise _Failure(
                FailureCause.AUTHENTICATION_FAILED,
                f"SaslHandshake for {self._sasl.name} answered {_error_name(body.error_code)} "
                f"(the broker offers: {offered})",
            )
        token, self._exchange = self._sasl.start()
        if pending.api_version == 0:
            # Before KIP-152 the tokens travel bare: a size prefix and nothing else.
            self._raw_sasl = True
            self._out += framing.add_size_prefix(token)
            self._raw_deadline = now + self.request_timeout
        else:
            self._send_token(token, now)

    def _send_token(self, token: bytes, now: float) -> None:
        entry = API_KEYS.get(SASL_AUTHENTICATE)
        if entry is None:
            raise _Failure(
                FailureCause.AUTHENTICATION_FAILED,
                "this package was generated without SaslAuthenticate",
            )
        try:
            version = self.version_for(SASL_AUTHENTICATE)
        except UnsupportedVersionError as exc:
            raise _Failure(FailureCause.AUTHENTICATION_FAILED, str(exc)) from None
        self._send_internal(entry.request(auth_bytes=token), SASL_AUTHENTICATE, version, now)

    def _sasl_step(self, challenge: bytes) -> bytes | None:
        assert self._exchange is not None and self._sasl is not None
        try:
            return self._exchange.respond(challenge)
        except SaslError as exc:
            raise _Failure(FailureCause.AUTHENTICATION_FAILED, str(exc)) from None

    def _sasl_authenticate_response(self, body: Any, now: float, events: list[Event]) -> None:
        if body.error_code != 0:
            message = body.error_message or "no message"
            raise _Failure(
                FailureCause.AUTHENTICATION_FAILED,
                f"SaslAuthenticate answered {_error_name(body.error_code)}: {message}",
            )
        self._session_lifetime_ms = getattr(body, "session_lifetime_ms", 0)
        reply = self._sasl_step(body.auth_bytes)
        if reply is None:
            self._become_ready(events)
        else:
            self._send_token(reply, now)

    def _raw_token(self, token: bytes, now: float, events: list[Event]) -> None:
        reply = self._sasl_step(token)
        if reply is None:
            self._raw_sasl = False
            self._raw_deadline = None
            self._become_ready(events)
        else:
            self._out += framing.add_size_prefix(reply)
            self._raw_deadline = now + self.request_timeout

    def _become_ready(self, events: list[Event]) -> None:
        self._state = ConnectionState.READY
        self._exchange = None
        table = self._release_table
        if table is None:
            table = _package_release_table()
        guess = guess_release(self._versions, table) if table else None
        self.ready = Ready(
            dict(self._versions),
            self._features,
            self._api_versions_version,
            guess,
            None if self._sasl is None else self._sasl.name,
            self._session_lifetime_ms,
            tuple(self._api_versions_refused),
        )
        events.append(self.ready)

    # --- the end ------------------------------------------------------------------------

    def _eof(self, events: list[Event]) -> None:
        state = self._state
        if state is ConnectionState.NEGOTIATING:
            self._fail(
                events,
                FailureCause.CLOSED_DURING_API_VERSIONS,
                "the broker closed the connection during ApiVersions: it may predate Kafka "
                "0.10 and KIP-35, or the listener expects TLS or SASL",
            )
        elif state is ConnectionState.AUTHENTICATING:
            self._fail(
                events,
                FailureCause.AUTHENTICATION_FAILED,
                "the broker closed the connection during SASL authentication (wrong "
                "credentials or mechanism?)",
            )
        elif self._in_flight or self._queue or self._buffer:
            partial = f", {len(self._buffer)} bytes of a frame unread" if self._buffer else ""
            self._fail(
                events,
                FailureCause.CLOSED,
                f"the peer closed the connection with {self.in_flight} requests "
                f"unanswered{partial}",
            )
        else:
            self._close()
            events.append(ConnectionClosed())

    def _fail(self, events: list[Event], cause: FailureCause, reason: str) -> None:
        unanswered = sorted(
            [p.correlation_id for p in self._in_flight.values() if p.purpose == _USER]
            + [p.correlation_id for p in self._queue if p.expects_response]
        )
        self._close()
        events.append(ConnectionFailed(cause, reason, tuple(unanswered)))

    def _close(self) -> None:
        self._state = ConnectionState.CLOSED
        self._buffer.clear()
        self._out.clear()
        self._in_flight.clear()
        self._queue.clear()
        self._exchange = None
        self._raw_sasl = False
        self._raw_deadline = None


# --- the server ---------------------------------------------------------------------------


class ServerConnection:
    """The broker side of one connection, for proxies and test brokers.

    Request bytes in, ``RequestReceived`` events out; answer with ``send_response`` (or
    ``send_api_versions``, which also does KIP-511's downgrade answer). After a successful
    SaslHandshake v0 response the client sends raw SASL tokens (``SaslTokenReceived``),
    answered with ``send_sasl_token(..., last=True)`` for the final one.
    """

    def __init__(self, *, max_frame_size: int = framing.DEFAULT_MAX_FRAME_SIZE) -> None:
        self.max_frame_size = max_frame_size
        self._buffer = bytearray()
        self._out = bytearray()
        self._pending: dict[int, tuple[int, int]] = {}
        self._raw_sasl = False
        self.closed = False

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def data_to_send(self) -> bytes:
        data = bytes(self._out)
        self._out.clear()
        return data

    def receive_data(self, data: bytes, now: float = 0.0) -> list[Event]:
        """Feed bytes from the client (b"" when it closed); never raises on them."""
        events: list[Event] = []
        if self.closed:
            return events
        try:
            if not data:
                if self._buffer:
                    raise _Failure(
                        FailureCause.CLOSED, "the client closed in the middle of a frame"
                    )
                self.close()
                events.append(ConnectionClosed())
                return events
            self._buffer += data
            self._read_frames(events)
        except _Failure as failure:
            self.close()
            events.append(ConnectionFailed(failure.cause, failure.reason))
        except Exception as exc:  # noqa: BLE001 - a bug here must not crash the caller's loop
            self.close()
            events.append(
                ConnectionFailed(FailureCause.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
            )
        return events

    def _read_frames(self, events: list[Event]) -> None:
        buffer = self._buffer
        pos = 0
        try:
            while len(buffer) - pos >= 4:
                (size,) = _INT32.unpack_from(buffer, pos)
                if size < 0 or size > self.max_frame_size:
                    raise _Failure(
                        FailureCause.FRAME_TOO_LARGE,
                        f"the client announced a frame of {size} bytes "
                        f"(the limit is {self.max_frame_size})",
                    )
                if len(buffer) - pos - 4 < size:
                    break
                frame = bytes(buffer[pos + 4 : pos + 4 + size])
                pos += 4 + size
                if self._raw_sasl:
                    events.append(SaslTokenReceived(frame))
                else:
                    events.append(self._request(frame))
        finally:
            del buffer[:pos]

    def _request(self, frame: bytes) -> RequestReceived:
        if len(frame) < 8:
            raise _Failure(FailureCause.UNDECODABLE, f"a {len(frame)}-byte request frame")
        api_key: int = _INT16.unpack_from(frame, 0)[0]
        api_version: int = _INT16.unpack_from(frame, 2)[0]
        entry = API_KEYS.get(api_key)
        request: Any = None
        try:
            if api_key == API_VERSIONS and entry is not None and api_version > entry.max_version:
                # KIP-511: a newer ApiVersions body cannot be read, but the header can (its
                # client id keeps the classic string form at every version): answer it.
                header, _ = RequestHeader.decode_from(frame, 0, 1)
            else:
                header, request = framing.decode_request(frame)
        except DecodeError as exc:
            raise _Failure(
                FailureCause.UNDECODABLE,
                f"{api_name(api_key)} v{api_version} request does not decode: {exc}",
            ) from None
        cid = header.correlation_id
        expects = request is None or expects_response(request)
        if expects:
            self._pending[cid] = (api_key, api_version)
        return RequestReceived(cid, api_key, api_version, header, request, expects, frame)

    def send_response(self, to: RequestReceived | int, response: Any) -> None:
        """Answer a request (the event, or its correlation id) with a response object, at
        the request's version. An ApiVersions request newer than this package is answered
        at v0, as KIP-511 wants (use ``send_api_versions`` to get the body right too)."""
        cid = to if isinstance(to, int) else to.correlation_id
        if self.closed:
            raise LocalProtocolError("the connection is closed")
        if cid not in self._pending:
            if isinstance(to, int) or to.expects_response:
                raise LocalProtocolError(f"no request with correlation id {cid} awaits an answer")
            # An acks=0 Produce answered anyway (to emulate brokers that do).
            self._pending[cid] = (to.api_key, to.api_version)
        api_key, api_version = self._pending.pop(cid)
        entry = API_KEYS[api_key]
        if not entry.min_version <= api_version <= entry.max_version:
            api_version = 0  # only ApiVersions gets here, answered KIP-511's way
        frame = framing.encode_response(ResponseHeader(cid), response, api_key, api_version)
        self._out += framing.add_size_prefix(frame)
        if api_key == SASL_HANDSHAKE and api_version == 0 and response.error_code == 0:
            self._raw_sasl = True  # KIP-43: raw tokens follow

    def send_api_versions(
        self,
        to: RequestReceived,
        versions: Mapping[int, VersionRange],
        *,
        error_code: int = 0,
        throttle_time_ms: int = 0,
        supported_features: Mapping[str, VersionRange] | None = None,
        finalized_features: Mapping[str, VersionRange] | None = None,
        finalized_features_epoch: int = -1,
    ) -> None:
        """Answer an ApiVersions request as a broker with ``versions`` would.

        When the request is newer than the broker's own ApiVersions range (``versions[18]``)
        or than this package, the answer is KIP-511's: error UNSUPPORTED_VERSION and a v0
        body that lists only ApiVersions' range.
        """
        entry = API_KEYS[API_VERSIONS]
        cls = entry.response
        item = _struct_class(cls, "api_keys")
        own = versions.get(API_VERSIONS, (0, entry.max_version))
        if to.api_version > min(own[1], entry.max_version):
            low, high = own[0], min(own[1], entry.max_version)
            only = item(api_key=API_VERSIONS, min_version=low, max_version=high)
            body = cls(error_code=UNSUPPORTED_VERSION, api_keys=[only])
            self._pending[to.correlation_id] = (API_VERSIONS, 0)
            self.send_response(to.correlation_id, body)
            return
        fields: dict[str, Any] = {
            "error_code": error_code,
            "api_keys": [
                item(api_key=k, min_version=lo, max_version=hi)
                for k, (lo, hi) in sorted(versions.items())
            ],
        }
        if throttle_time_ms:
            fields["throttle_time_ms"] = throttle_time_ms
        if supported_features:
            feature = _struct_class(cls, "supported_features")
            fields["supported_features"] = [
                feature(name=n, min_version=lo, max_version=hi)
                for n, (lo, hi) in sorted(supported_features.items())
            ]
        if finalized_features_epoch != -1 or finalized_features:
            feature = _struct_class(cls, "finalized_features")
            fields["finalized_features_epoch"] = finalized_features_epoch
            fields["finalized_features"] = [
                feature(name=n, min_version_level=lo, max_version_level=hi)
                for n, (lo, hi) in sorted((finalized_features or {}).items())
            ]
        self.send_response(to, cls(**fields))

    def send_sasl_token(self, token: bytes, *, last: bool = False) -> None:
        """Answer a raw SASL token (after SaslHandshake v0); ``last`` ends the raw mode."""
        if not self._raw_sasl:
            raise LocalProtocolError("raw SASL tokens follow a SaslHandshake v0 only")
        self._out += framing.add_size_prefix(token)
        if last:
            self._raw_sasl = False

    def close(self) -> None:
        self.closed = True
        self._buffer.clear()
        self._pending.clear()


def _struct_class(cls: type, attr: str) -> Any:
    """The class of the items of array field ``attr`` of a generated class (its name
    differs between spec releases, so it is looked up from the codec tables)."""
    from ._codec import CODECS

    for spec in CODECS[cls].fields:
        if spec[0] == attr and len(spec) > 2:
            return spec[2]
    raise UnsupportedVersionError(f"{cls.__name__} has no struct array {attr}")
