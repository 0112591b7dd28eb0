# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""``Pipeline``: the requests of one connection between ``send`` and their answers.

Correlation ids, the queue, the in-flight table and its limit, KIP-219's throttle, and every
request's deadline (counted from ``send``). Pure bookkeeping: it writes frames into the
connection's output buffer and says what expired; the connection turns that into events.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from .. import framing
from ..headers import RequestHeader
from ._events import RequestTimedOut, Throttled
from ._policy import CLIENT_THROTTLE_FROM, UNSOLICITED_MEMORY


class PendingRequest:
    """A request queued or written, until its response."""

    __slots__ = (
        "correlation_id",
        "api_key",
        "api_version",
        "request",
        "data",
        "internal",
        "expects_response",
        "queued_at",
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
        internal: bool,
        queued_at: float,
        deadline: float,
    ) -> None:
        self.correlation_id = correlation_id
        self.api_key = api_key
        self.api_version = api_version
        self.request = request
        self.data = data
        """The size-prefixed frame."""
        self.internal = internal
        """A request of the handshake, not the caller's."""
        self.expects_response = True
        self.queued_at = queued_at
        self.sent_at = queued_at
        self.deadline = deadline
        """Counted from ``send``: a queued request has one too."""


class Pipeline:
    """The requests of one connection: queued, then in flight, then answered."""

    def __init__(
        self, out: bytearray, client_id: str | None, max_in_flight: int, request_timeout: float
    ) -> None:
        self.out = out
        """The connection's output buffer: written frames go there."""
        self.client_id = client_id
        self.max_in_flight = max_in_flight
        self.request_timeout = request_timeout
        self.in_flight: dict[int, PendingRequest] = {}
        self.queue: deque[PendingRequest] = deque()
        self.throttled_until: float | None = None
        self._next_id = 0
        self._unsolicited: dict[int, None] = {}

    def encode(
        self,
        request: Any,
        api_key: int,
        version: int,
        now: float,
        timeout: float | None,
        internal: bool,
    ) -> PendingRequest:
        """A request framed with the next correlation id, taken only once it encoded."""
        cid = self._next_id
        header = RequestHeader(api_key, version, cid, self.client_id)
        data = framing.add_size_prefix(framing.encode_request(header, request))
        self._next_id = (cid + 1) & 0x7FFFFFFF
        deadline = now + (self.request_timeout if timeout is None else timeout)
        return PendingRequest(cid, api_key, version, request, data, internal, now, deadline)

    def write(self, pending: PendingRequest, now: float) -> None:
        self.out += pending.data
        pending.sent_at = now
        if pending.expects_response:
            self.in_flight[pending.correlation_id] = pending
        else:
            self._unsolicited[pending.correlation_id] = None
            if len(self._unsolicited) > UNSOLICITED_MEMORY:
                del self._unsolicited[next(iter(self._unsolicited))]

    def write_queued(self, now: float) -> None:
        """Write queued requests while neither the throttle nor the in-flight limit holds."""
        if self.throttled_until is not None:
            if now < self.throttled_until:
                return
            self.throttled_until = None
        while self.queue and len(self.in_flight) < self.max_in_flight:
            self.write(self.queue.popleft(), now)

    def answered(self, cid: int) -> PendingRequest | None:
        """The request a response with ``cid`` answers, out of the table. None for an
        unknown id; an answer to an acks=0 Produce (Event Hubs sends them) is dropped and
        gives the ``UNSOLICITED`` marker."""
        pending = self.in_flight.pop(cid, None)
        if pending is None and cid in self._unsolicited:
            del self._unsolicited[cid]
            return UNSOLICITED
        return pending

    def throttle(self, pending: PendingRequest, ms: int, now: float) -> Throttled | None:
        """Apply a response's throttle time (KIP-219); None when the broker already held
        the response back itself (versions before KIP-219)."""
        if pending.api_version < CLIENT_THROTTLE_FROM.get(pending.api_key, 0):
            return None
        until = now + ms / 1000.0
        if self.throttled_until is None or until > self.throttled_until:
            self.throttled_until = until
        return Throttled(pending.correlation_id, ms, until)

    def expire_queued(self, now: float) -> list[RequestTimedOut]:
        """Drop the queued requests past their deadline: no pause holds one longer."""
        if not any(now >= p.deadline for p in self.queue):
            return []
        expired: list[RequestTimedOut] = []
        kept: deque[PendingRequest] = deque()
        for pending in self.queue:
            if now < pending.deadline:
                kept.append(pending)
            elif pending.expects_response:
                elapsed = now - pending.queued_at
                expired.append(
                    RequestTimedOut(
                        pending.correlation_id,
                        pending.request,
                        pending.api_version,
                        elapsed,
                        written=False,
                        throttled_until=self.throttled_until,
                    )
                )
        self.queue = kept
        return expired

    def expire_in_flight(self, now: float) -> list[PendingRequest]:
        """Take out the written requests past their deadline, oldest id first."""
        expired = sorted(
            (p for p in self.in_flight.values() if now >= p.deadline),
            key=lambda p: p.correlation_id,
        )
        for pending in expired:
            del self.in_flight[pending.correlation_id]
        return expired

    def deadlines(self) -> list[float]:
        moments = [p.deadline for p in self.in_flight.values()]
        moments += [p.deadline for p in self.queue]
        if self.queue and self.throttled_until is not None:
            moments.append(self.throttled_until)
        return moments

    def callers_in_flight(self) -> int:
        return sum(1 for p in self.in_flight.values() if not p.internal)

    def unanswered(self) -> list[int]:
        """The caller's requests that will get no answer if the connection ends now."""
        return sorted(
            [p.correlation_id for p in self.in_flight.values() if not p.internal]
            + [p.correlation_id for p in self.queue if p.expects_response]
        )

    def clear(self) -> None:
        self.in_flight.clear()
        self.queue.clear()


UNSOLICITED = PendingRequest(-1, -1, -1, None, b"", True, 0.0, 0.0)
"""``Pipeline.answered``'s marker for an answer nobody waits for."""
