# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""The events a connection returns, and the request protocols."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Generic, Protocol, TypeVar, cast

from ..headers import RequestHeader
from ..negotiation import VersionRange

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

    ``kind`` is ``exact``, ``one of`` (rows that advertise the same ranges, which the
    broker's features could not tell apart: ``candidates``), ``at least``, ``between``,
    ``not exact, between`` (a mix of older and newer ranges, e.g. a vendor build), ``older
    than`` or ``unknown``; ``low`` and ``high`` are release names from the table (``3.5.0``,
    ``3.5.0 (KRaft)``). ``str()`` gives the sentence.
    """

    kind: str
    low: str | None = None
    high: str | None = None
    candidates: tuple[str, ...] = ()

    def __str__(self) -> str:
        if self.kind == "exact":
            return str(self.low)
        if self.kind == "one of":
            return "one of " + ", ".join(self.candidates)
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
    """Which Kafka release the broker is (``guess_broker_release`` on ``versions`` and
    ``features``); None without a release table."""
    sasl_mechanism: str | None = None
    session_lifetime_ms: int = 0
    """From SaslAuthenticate v1+ (KIP-368): the connection re-authenticates before it ends;
    0 = no limit."""
    api_versions_refused: tuple[int, ...] = ()
    """The ApiVersions versions the broker refused (KIP-511) before the one it answered."""


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
    """No response by the request's deadline (counted from ``send``).

    A request that was written closes the connection (a ``ConnectionFailed`` follows), as
    Java's client does: a late answer cannot be told from the answer to a later request.
    A request still queued (``written`` False: held back by the in-flight limit or by the
    broker's throttle) is dropped alone and the connection goes on."""

    correlation_id: int
    request: Any
    api_version: int
    elapsed: float
    """Seconds from ``send`` to the deadline."""
    written: bool = True
    throttled_until: float | None = None
    """When a throttle held the request back: when that throttle ends."""


@dataclass(frozen=True, slots=True)
class Reauthenticated(Event):
    """The connection logged in again before its session ended (KIP-368)."""

    session_lifetime_ms: int
    """The new session's lifetime; 0 = no limit."""


class FailureCause(Enum):
    """Why a connection failed (``ConnectionFailed.cause``, ``ConnectionFailedError.cause``)."""

    CONNECT_FAILED = "cannot connect"
    """No connection: refused, unreachable, a name that does not resolve."""
    TLS_FAILED = "TLS handshake failed"
    CLOSED = "closed"
    """The peer closed the connection (with requests unanswered, or idle)."""
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
    """The peer closed the connection with nothing outstanding (an idle close)."""


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
