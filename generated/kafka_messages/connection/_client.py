# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""``ClientConnection``: the client side of a Kafka connection, without I/O.

It composes two objects: the ``Handshake`` (ApiVersions, SASL, the KIP-368 re-login) and
the ``Pipeline`` (correlation ids, queue, in-flight limit, throttle, deadlines). This module
keeps the state, splits the frames and turns what happens into events.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any

from .. import framing, negotiation
from ..errors import DecodeError, UnsupportedVersionError
from ..negotiation import VersionRange
from ..registry import API_KEYS, ApiKey, api_name
from ..sasl import SaslMechanism
from ._errors import ConnectionFailedError, LocalProtocolError, ProtocolFailure
from ._events import (
    ConnectionClosed,
    ConnectionFailed,
    Event,
    FailureCause,
    Ready,
    Reauthenticated,
    Request,
    RequestTimedOut,
    Response,
)
from ._handshake import Finished, Handshake, SendRequest, SendToken, Step, Throttle
from ._pipeline import UNSOLICITED, PendingRequest, Pipeline
from ._policy import (
    DEFAULT_POLICY,
    INT32,
    SOFTWARE_PATTERN,
    check_version,
    choose_version,
    expects_response,
    ready_release_guess,
    split_frames,
)

REAUTHENTICATE_AT = 0.9
"""Re-authenticate when this share of the session lifetime has passed (KIP-368; Java picks
between 85 and 95 %)."""


class ConnectionState(Enum):
    IDLE = "idle"
    """Before ``start``."""
    NEGOTIATING = "negotiating"
    """ApiVersions sent, no answer yet."""
    AUTHENTICATING = "authenticating"
    READY = "ready"
    REAUTHENTICATING = "reauthenticating"
    """Logging in again (KIP-368): requests sent now wait in the queue until it is over."""
    CLOSED = "closed"


_OPENING = (ConnectionState.NEGOTIATING, ConnectionState.AUTHENTICATING)


class ClientConnection:
    """The client side of one Kafka connection, without I/O.

    ``broker_versions`` (``{api_key: (min, max)}`` or a decoded ApiVersionsResponse) skips
    the ApiVersions request, as KIP-35 allows for a configured broker. ``sasl`` is a mechanism
    from ``sasl`` (``Plain``, ``ScramSha256``, ``ScramSha512``, ``OAuthBearer``). ``policy``
    overlays the package's version ranges (``DEFAULT_POLICY``). ``Ready.release_guess`` is
    ``guess_broker_release`` against the package's ``releases.BROKER_ROWS`` (both broker
    kinds, told apart by features where ranges tie); ``release_table`` (release -> api key ->
    (min, max), oldest first) replaces it with ``guess_release`` on that table, ``{}`` turns
    the guess off.
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
        # for ``fresh`` (written out: the compiled build has no ``locals()``)
        options: dict[str, Any] = dict(
            client_id=client_id, client_software=client_software, max_in_flight=max_in_flight,
            request_timeout=request_timeout, max_frame_size=max_frame_size,
            broker_versions=broker_versions, sasl=sasl, policy=policy, release_table=release_table,
        )  # fmt: skip
        for part in client_software:
            if not SOFTWARE_PATTERN.fullmatch(part):
                raise ValueError(
                    f"client software {part!r}: Kafka accepts letters, digits, '-' and '.', "
                    "starting and ending with a letter or digit"
                )
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        if request_timeout <= 0 or max_frame_size < 4:
            raise ValueError("request_timeout must be positive, max_frame_size at least 4")
        self._options = options
        self.client_id = client_id
        self.client_software = client_software
        self.request_timeout = request_timeout
        self.max_frame_size = max_frame_size
        self.policy = dict(policy)
        configured = (
            None if broker_versions is None else negotiation.broker_versions(broker_versions)
        )
        self._handshake = Handshake(
            client_software=client_software, policy=self.policy, configured=configured, sasl=sasl
        )
        self._release_table = release_table
        self._state = ConnectionState.IDLE
        self._buffer = bytearray()
        self._out = bytearray()
        self._pipeline = Pipeline(self._out, client_id, max_in_flight, request_timeout)
        self._raw_deadline: float | None = None
        self._opening_deadline: float | None = None
        self._login_started = 0.0
        self._reauthenticate_at: float | None = None
        self.ready: Ready | None = None
        """The ``Ready`` event, once there was one."""
        self.failure: ConnectionFailed | None = None
        """What ended the connection, when the peer or the transport did."""

    def fresh(self) -> ClientConnection:
        """A new connection with the same options, to reconnect with."""
        return ClientConnection(**self._options)

    # --- what the caller reads --------------------------------------------------------

    @property
    def state(self) -> ConnectionState:
        return self._state

    @property
    def max_in_flight(self) -> int:
        """Requests written and unanswered at most; more wait in the queue."""
        return self._pipeline.max_in_flight

    @property
    def versions(self) -> dict[int, VersionRange]:
        """The broker's ranges (empty before the handshake)."""
        return dict(self._handshake.versions)

    @property
    def in_flight(self) -> int:
        """The caller's requests written and waiting for their response."""
        if self._state is ConnectionState.READY:  # no internal request is in flight then
            return len(self._pipeline.in_flight)
        return self._pipeline.callers_in_flight()

    @property
    def queued(self) -> int:
        """Requests sent while paused, not written yet."""
        return len(self._pipeline.queue)

    @property
    def throttled_until(self) -> float | None:
        """While throttled (KIP-219), when sending resumes; else None."""
        return self._pipeline.throttled_until

    @property
    def buffered(self) -> int:
        """Bytes held of an incomplete frame (at most ``max_frame_size + 3``)."""
        return len(self._buffer)

    def awaiting(self, correlation_id: int) -> bool:
        """True while a response to ``correlation_id`` is expected (queued or in flight)."""
        pending = self._pipeline.in_flight.get(correlation_id)
        if pending is not None:
            return not pending.internal
        queue = self._pipeline.queue
        return any(p.correlation_id == correlation_id and p.expects_response for p in queue)

    def data_to_send(self) -> bytes:
        """The bytes to write to the socket now (b"" when none); the caller must write all."""
        data = bytes(self._out)
        self._out.clear()
        return data

    def next_deadline(self) -> float | None:
        """When to call ``handle_timer`` next (None: no timer needed)."""
        deadlines = self._pipeline.deadlines()
        for moment in (self._raw_deadline, self._opening_deadline, self._reauthenticate_at):
            if moment is not None:
                deadlines.append(moment)
        return min(deadlines) if deadlines else None

    def version_for(self, api_key: int) -> int:
        """The version ``send`` picks for ``api_key``: the newest in the package's range, the
        broker's and the policy's. Raises ``NoCommonVersionError`` (an
        ``UnsupportedVersionError``, KIP-97) when there is none."""
        return choose_version(api_key, self.policy, self._handshake.versions)

    # --- what the caller does ---------------------------------------------------------

    def start(self, now: float, *, timeout: float | None = None) -> list[Event]:
        """Begin: queue ApiVersions (or, with ``broker_versions``, go on to SASL or Ready,
        whose event is returned here). With ``timeout``, the whole handshake must be over
        within that many seconds, or the connection fails (``TIMED_OUT``)."""
        if self._state is not ConnectionState.IDLE:
            raise LocalProtocolError(f"start() on a connection that is {self._state.value}")
        if timeout is not None:
            self._opening_deadline = now + timeout
        self._set_state(ConnectionState.NEGOTIATING)
        events: list[Event] = []
        try:
            self._carry_out(self._handshake.start(), None, now, events)
        except ProtocolFailure as failure:
            self._fail(events, failure.cause, failure.reason)
        except LocalProtocolError:
            self._set_state(ConnectionState.IDLE)
            raise
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
        id. Its deadline is ``now + timeout`` (default ``request_timeout``), wherever it
        waits: in the queue or in flight.

        Raises locally, queuing nothing: ``NoCommonVersionError`` when the broker and this
        package share no version (KIP-97) or ``version`` is outside the broker's range,
        ``EncodeError`` for a value the version cannot carry, ``LocalProtocolError`` before
        ``Ready`` or after ``close()``, ``ConnectionFailedError`` once the peer ended the
        connection. While paused (the in-flight limit, a throttle, a re-login) the request
        waits in a queue, and ``receive_data`` or ``handle_timer`` writes it later.
        """
        state = self._state
        if state is not ConnectionState.READY and state is not ConnectionState.REAUTHENTICATING:
            if self.failure is not None:
                raise ConnectionFailedError.from_event(self.failure)
            raise LocalProtocolError(f"cannot send on a connection that is {state.value}")
        api_key = request.API_KEY
        entry = API_KEYS.get(api_key) if isinstance(api_key, int) else None
        if entry is None or not isinstance(request, entry.request):
            raise UnsupportedVersionError(f"{type(request).__name__} is not a request class")
        assert isinstance(api_key, int)
        if version is None:
            version = self.version_for(api_key)
        else:
            check_version(api_key, version, self._handshake.versions)
        if timeout is not None and not timeout > 0:
            raise ValueError(f"timeout must be positive, not {timeout}")
        # Produce with acks=0 gets no response at all: waiting for one would time out.
        pending = self._pipeline.encode(request, api_key, version, now, timeout, False)
        pending.expects_response = expects_response(request)
        self._pipeline.queue.append(pending)
        try:
            self._reauthenticate_if_due(now, [])  # its steps only write requests
        except ProtocolFailure as failure:
            self._fail([], failure.cause, failure.reason)
            raise ConnectionFailedError(failure.reason, self.failure) from None
        if self._state is ConnectionState.READY:
            self._pipeline.write_queued(now)
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
                for frame in split_frames(self._buffer, self.max_frame_size, "peer"):
                    self._frame(frame, now, events)
            else:
                self._eof(events)
            self._flush(now, events)  # a response may have made room for queued requests
        except ProtocolFailure as failure:
            self._fail(events, failure.cause, failure.reason)
        except Exception as exc:  # noqa: BLE001 - a bug here must not crash the caller's loop
            self._fail(events, FailureCause.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
        return events

    def handle_timer(self, now: float) -> list[Event]:
        """Expire the deadlines due at ``now``, end a throttle, start a due re-login."""
        events: list[Event] = []
        if self._state is ConnectionState.CLOSED:
            return events
        try:
            self._timers(now, events)
        except ProtocolFailure as failure:
            self._fail(events, failure.cause, failure.reason)
        return events

    def close(self) -> None:
        """End the connection from this side (the caller closes the socket)."""
        self._close()

    # --- timers -------------------------------------------------------------------------

    def _timers(self, now: float, events: list[Event]) -> None:
        if self._opening_deadline is not None and now >= self._opening_deadline:
            if self._state in _OPENING:
                waiting = ", ".join(
                    f"{api_name(p.api_key)} v{p.api_version} (correlation id {p.correlation_id})"
                    for p in self._pipeline.in_flight.values()
                )
                raise ProtocolFailure(
                    FailureCause.TIMED_OUT,
                    f"the handshake was not over in time ({self._state.value}; no answer to "
                    f"{waiting or 'a SASL token'})",
                )
            self._opening_deadline = None
        if self._raw_deadline is not None and now >= self._raw_deadline:
            raise ProtocolFailure(FailureCause.TIMED_OUT, "no answer to a SASL token in time")
        expired = self._pipeline.expire_in_flight(now)
        if expired:
            for pending in expired:
                if not pending.internal:
                    elapsed = now - pending.queued_at
                    events.append(
                        RequestTimedOut(
                            pending.correlation_id, pending.request, pending.api_version, elapsed
                        )
                    )
            names = ", ".join(
                f"{api_name(p.api_key)} (correlation id {p.correlation_id})" for p in expired
            )
            raise ProtocolFailure(FailureCause.TIMED_OUT, f"no response in time to {names}")
        self._reauthenticate_if_due(now, events)
        self._flush(now, events)

    def _reauthenticate_if_due(self, now: float, events: list[Event]) -> None:
        """Log in again once the session nears its end (KIP-368): also checked by ``send``,
        so that a client idle past that moment never writes on an expired session."""
        due = self._reauthenticate_at
        if due is not None and now >= due and self._state is ConnectionState.READY:
            self._reauthenticate_at = None
            self._set_state(ConnectionState.REAUTHENTICATING)
            self._carry_out(self._handshake.reauthenticate(), None, now, events)

    # --- writing ------------------------------------------------------------------------

    def _flush(self, now: float, events: list[Event]) -> None:
        """Drop queued requests past their deadline, and write queued requests while
        neither pause holds."""
        events.extend(self._pipeline.expire_queued(now))
        if self._state is ConnectionState.READY:
            self._pipeline.write_queued(now)

    def _carry_out(
        self, steps: list[Step], answered: PendingRequest | None, now: float, events: list[Event]
    ) -> None:
        """Do what the handshake asks: write its requests and tokens, apply the ApiVersions
        throttle, and become ready when it is over."""
        for step in steps:
            if isinstance(step, SendRequest):
                if step.api_key == ApiKey.SASL_HANDSHAKE:
                    self._login_started = now
                    if self._state is ConnectionState.NEGOTIATING:
                        self._set_state(ConnectionState.AUTHENTICATING)
                pipeline = self._pipeline
                pending = pipeline.encode(step.body, step.api_key, step.version, now, None, True)
                pipeline.write(pending, now)
            elif isinstance(step, SendToken):
                self._out += framing.add_size_prefix(step.token)
                self._raw_deadline = now + self.request_timeout
            elif isinstance(step, Throttle):
                assert answered is not None
                self._throttle(answered, step.throttle_time_ms, now, events)
            elif isinstance(step, Finished):
                self._raw_deadline = None
                self._logged_in(step.session_lifetime_ms, now, events)

    def _logged_in(self, session_lifetime_ms: int, now: float, events: list[Event]) -> None:
        if session_lifetime_ms > 0:
            lifetime = session_lifetime_ms / 1000.0
            self._reauthenticate_at = self._login_started + REAUTHENTICATE_AT * lifetime
        if self._state is ConnectionState.REAUTHENTICATING:
            self._set_state(ConnectionState.READY)
            events.append(Reauthenticated(session_lifetime_ms))
            return
        self._set_state(ConnectionState.READY)
        self._opening_deadline = None
        handshake = self._handshake
        self.ready = Ready(
            dict(handshake.versions),
            handshake.features,
            handshake.api_versions_version,
            ready_release_guess(handshake.versions, handshake.features, self._release_table),
            None if handshake.sasl is None else handshake.sasl.name,
            handshake.session_lifetime_ms,
            tuple(handshake.api_versions_refused),
        )
        events.append(self.ready)

    # --- reading ------------------------------------------------------------------------

    def _frame(self, frame: bytes, now: float, events: list[Event]) -> None:
        if self._handshake.raw_tokens:
            self._carry_out(self._handshake.receive_token(frame), None, now, events)
            return
        if len(frame) < 4:
            raise ProtocolFailure(
                FailureCause.UNDECODABLE, f"a {len(frame)}-byte frame has no correlation id"
            )
        (cid,) = INT32.unpack_from(frame, 0)
        pending = self._pipeline.answered(cid)
        if pending is UNSOLICITED:
            return  # an answer to an acks=0 Produce: nobody waits for it
        if pending is None:
            raise ProtocolFailure(
                FailureCause.UNKNOWN_CORRELATION_ID,
                f"a response with correlation id {cid}, which no request in flight has",
            )
        if pending.internal:
            steps = self._handshake.receive(pending.api_key, pending.api_version, frame)
            self._carry_out(steps, pending, now, events)
            return
        try:
            _, body = framing.decode_response(frame, pending.api_key, pending.api_version)
        except DecodeError as exc:
            raise ProtocolFailure(
                FailureCause.UNDECODABLE,
                f"{api_name(pending.api_key)} v{pending.api_version} response "
                f"(correlation id {cid}) does not decode: {exc}",
            ) from None
        latency = now - pending.sent_at
        events.append(Response(cid, pending.request, body, pending.api_version, latency))
        ms = getattr(body, "throttle_time_ms", 0)
        if isinstance(ms, int) and ms > 0:
            self._throttle(pending, ms, now, events)

    def _throttle(self, pending: PendingRequest, ms: int, now: float, events: list[Event]) -> None:
        throttled = self._pipeline.throttle(pending, ms, now)
        if throttled is not None:
            events.append(throttled)

    # --- the end ------------------------------------------------------------------------

    def _eof(self, events: list[Event]) -> None:
        state = self._state
        if state is ConnectionState.NEGOTIATING:
            raise ProtocolFailure(
                FailureCause.CLOSED_DURING_API_VERSIONS,
                "the broker closed the connection during ApiVersions: it may predate Kafka "
                "0.10 and KIP-35, or the listener expects TLS or SASL",
            )
        if state is ConnectionState.AUTHENTICATING or state is ConnectionState.REAUTHENTICATING:
            raise ProtocolFailure(
                FailureCause.AUTHENTICATION_FAILED,
                "the broker closed the connection during SASL authentication (wrong "
                "credentials or mechanism?)",
            )
        if self._pipeline.in_flight or self._pipeline.queue or self._buffer:
            partial = f", {len(self._buffer)} bytes of a frame unread" if self._buffer else ""
            raise ProtocolFailure(
                FailureCause.CLOSED,
                f"the peer closed the connection with {self.in_flight} requests "
                f"unanswered{partial}",
            )
        self._close()
        self.failure = ConnectionFailed(
            FailureCause.CLOSED, "the broker closed the connection (it was idle)"
        )
        events.append(ConnectionClosed())

    def _fail(self, events: list[Event], cause: FailureCause, reason: str) -> None:
        unanswered = self._pipeline.unanswered()
        self._close()
        self.failure = ConnectionFailed(cause, reason, tuple(unanswered))
        events.append(self.failure)

    def _close(self) -> None:
        self._set_state(ConnectionState.CLOSED)
        self._buffer.clear()
        self._out.clear()
        self._pipeline.clear()
        self._raw_deadline = None
        self._opening_deadline = None
        self._reauthenticate_at = None

    def _set_state(self, state: ConnectionState) -> None:
        """The one place the state changes."""
        self._state = state
