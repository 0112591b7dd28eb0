# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""The exceptions of the connection and its adapters: one family under ``ClientError``.

::

    ClientError
    ├── LocalProtocolError      the caller used the connection wrongly
    └── ConnectionFailedError   the peer or the transport failed (``cause`` says how)
        └── RequestTimedOutError  a request got no answer by its deadline

A request the broker cannot take (no common version, KIP-97) is refused before anything is
queued with ``NoCommonVersionError``, a value error of ``errors`` like every other request
that cannot be written.
"""

from __future__ import annotations

from ._events import ConnectionFailed, FailureCause, RequestTimedOut


class ClientError(Exception):
    """The base of every exception the connection and its adapters raise."""


class LocalProtocolError(ClientError):
    """The caller used a connection wrongly: sending before ``Ready``, after ``close()``,
    starting it twice. Never raised for anything the peer did."""


# The adapters' errors derive from Exception, not ConnectionError/TimeoutError: the compiled
# (mypyc) build of this package cannot subclass OSError.
class ConnectionFailedError(ClientError):
    """The peer or the transport failed: the connection is over. ``cause`` says how
    (a ``FailureCause``) and ``event`` holds the ``ConnectionFailed`` event with the reason
    and the correlation ids left unanswered. ``Client.reconnect()`` opens a new one."""

    def __init__(self, message: str, event: ConnectionFailed | None = None) -> None:
        super().__init__(message)
        self.event = event if event is not None else ConnectionFailed(FailureCause.CLOSED, message)

    @property
    def cause(self) -> FailureCause:
        return self.event.cause

    @classmethod
    def from_event(cls, event: ConnectionFailed) -> ConnectionFailedError:
        return cls(f"{event.cause.value}: {event.reason}", event)


class RequestTimedOutError(ConnectionFailedError):
    """A request got no response by its deadline. ``timed_out`` is the ``RequestTimedOut``
    event. When the request had been written (``timed_out.written``), the connection is
    closed, as Java's client does; a request still held back by the broker's throttle was
    never written, and the connection goes on."""

    def __init__(self, message: str, timed_out: RequestTimedOut) -> None:
        event = ConnectionFailed(FailureCause.TIMED_OUT, message, (timed_out.correlation_id,))
        super().__init__(message, event)
        self.timed_out = timed_out

    @property
    def correlation_id(self) -> int:
        return self.timed_out.correlation_id

    @classmethod
    def from_timeout(cls, timed_out: RequestTimedOut) -> RequestTimedOutError:
        name = type(timed_out.request).__name__
        waited = f"{timed_out.elapsed:.3g} s"
        if timed_out.throttled_until is not None:
            reason = (
                f"{name} (correlation id {timed_out.correlation_id}) was held back for "
                f"{waited} by the broker's throttle (KIP-219), which lasts beyond its deadline"
            )
        else:
            reason = (
                f"no response to {name} (correlation id {timed_out.correlation_id}) in {waited}"
            )
        return cls(reason, timed_out)


class ProtocolFailure(Exception):
    """Internal to the connection: ends frame processing with a ``ConnectionFailed``."""

    def __init__(self, cause: FailureCause, reason: str) -> None:
        super().__init__(reason)
        self.cause = cause
        self.reason = reason
