# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""``ClientConnection``: the client side of a Kafka connection, without I/O."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from enum import Enum
from typing import Any

from .. import framing, negotiation
from ..errors import DecodeError, UnsupportedVersionError
from ..headers import RequestHeader
from ..negotiation import VersionRange
from ..registry import API_KEYS, api_name
from ..sasl import SaslError, SaslExchange, SaslMechanism
from ._events import (
    ProtocolFailure,
    ConnectionClosed,
    ConnectionFailed,
    Event,
    FailureCause,
    Features,
    LocalProtocolError,
    Ready,
    Request,
    RequestTimedOut,
    Response,
    Throttled,
)
from ._policy import (
    _ANY,
    _error_name,
    _INT32,
    _package_release_table,
    _SOFTWARE,
    API_VERSIONS,
    CLIENT_THROTTLE_FROM,
    DEFAULT_POLICY,
    expects_response,
    guess_release,
    MAX_API_VERSIONS_ATTEMPTS,
    SASL_AUTHENTICATE,
    SASL_HANDSHAKE,
    UNSOLICITED_MEMORY,
    UNSUPPORTED_VERSION,
    split_frames,
)

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
            except ProtocolFailure as failure:
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
        except ProtocolFailure as failure:
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
        for frame in split_frames(self._buffer, self.max_frame_size, "peer"):
            self._frame(frame, now, events)

    def _frame(self, frame: bytes, now: float, events: list[Event]) -> None:
        if self._raw_sasl:
            self._raw_token(frame, now, events)
            return
        if len(frame) < 4:
            raise ProtocolFailure(
                FailureCause.UNDECODABLE, f"a {len(frame)}-byte frame has no correlation id"
            )
        (cid,) = _INT32.unpack_from(frame, 0)
        pending = self._in_flight.pop(cid, None)
        if pending is None:
            if cid in self._unsolicited:
                del self._unsolicited[cid]  # an answer to acks=0: nobody waits for it
                return
            raise ProtocolFailure(
                FailureCause.UNKNOWN_CORRELATION_ID,
                f"a response with correlation id {cid}, which no request in flight has",
            )
        if pending.purpose == _API_VERSIONS:
            self._api_versions_response(frame, pending, now, events)
            return
        try:
            _, body = framing.decode_response(frame, pending.api_key, pending.api_version)
        except DecodeError as exc:
            raise ProtocolFailure(
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
            raise ProtocolFailure(
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
                raise ProtocolFailure(
                    FailureCause.HANDSHAKE_FAILED,
                    f"the broker refused ApiVersions v{sent} (UNSUPPORTED_VERSION) after "
                    f"{self._api_versions_attempts} attempts",
                )
            self._api_versions_refused.append(sent)
            self._send_api_versions(retry, now)
            return
        if response.error_code != 0:
            raise ProtocolFailure(
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
            raise ProtocolFailure(
                FailureCause.AUTHENTICATION_FAILED,
                "SASL is configured but this package was generated without SaslHandshake",
            )
        try:
            version = self.version_for(SASL_HANDSHAKE)
        except UnsupportedVersionError as exc:
            raise ProtocolFailure(FailureCause.AUTHENTICATION_FAILED, str(exc)) from None
        request = entry.request(mechanism=self._sasl.name)
        self._send_internal(request, SASL_HANDSHAKE, version, now)

    def _sasl_handshake_response(
        self, body: Any, pending: _Pending, now: float, events: list[Event]
    ) -> None:
        assert self._sasl is not None
        if body.error_code != 0:
            offered = ", ".join(getattr(body, "mechanisms", ())) or "none"
            raise ProtocolFailure(
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
            raise ProtocolFailure(
                FailureCause.AUTHENTICATION_FAILED,
                "this package was generated without SaslAuthenticate",
            )
        try:
            version = self.version_for(SASL_AUTHENTICATE)
        except UnsupportedVersionError as exc:
            raise ProtocolFailure(FailureCause.AUTHENTICATION_FAILED, str(exc)) from None
        self._send_internal(entry.request(auth_bytes=token), SASL_AUTHENTICATE, version, now)

    def _sasl_step(self, challenge: bytes) -> bytes | None:
        assert self._exchange is not None and self._sasl is not None
        try:
            return self._exchange.respond(challenge)
        except SaslError as exc:
            raise ProtocolFailure(FailureCause.AUTHENTICATION_FAILED, str(exc)) from None

    def _sasl_authenticate_response(self, body: Any, now: float, events: list[Event]) -> None:
        if body.error_code != 0:
            message = body.error_message or "no message"
            raise ProtocolFailure(
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
