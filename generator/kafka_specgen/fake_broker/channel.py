"""One client connection: non-blocking reads and writes, its requests answered in order.

As Kafka's ``Selector``/``KafkaChannel`` do, a connection whose peer does not read is muted
alone: while more than ``SEND_CAP`` bytes of answers wait to go out, its later requests are
neither read nor answered; the other connections go on. A request whose answer waits (a
``Wait``) holds the requests behind it on its connection, as Kafka answers a connection's
requests in order, until a signal it waits on fires or its deadline comes.

On a TLS listener the bytes pass through the connection's ``tls.TlsSession``; on a SASL
listener its ``authenticate.Authenticator`` answers the requests until the client has
authenticated. A broker with a round-trip time (``broker_set_rtt``) holds each answer back
that long before sending it, without holding the requests behind it.
"""

from __future__ import annotations

import itertools
import selectors
import socket
import time
from collections import deque
from typing import TYPE_CHECKING, Any, Protocol

from ..api_keys import ApiKey
from .call import Call
from .dispatch import DISCONNECT, Routes
from .limits import Limits
from .loop import EventLoop, Timer
from .release import ANSWER, CLOSE, IGNORE
from .shapes import Shapes
from .state import ClusterState
from .waiting import Wait

if TYPE_CHECKING:
    from .tls import TlsSession

#: Answers waiting to be sent above which a connection is muted (no more reads, no more
#: answers) until its peer reads them.
SEND_CAP = 1 << 20
#: Requests read and not answered yet above which a connection is not read.
INBOX_CAP = 16
#: Read at most this much from one connection at a time.
RECV_SIZE = 1 << 18
#: Answer at most this many requests of one connection before the others get a turn.
SERVE_BATCH = 32
#: Requests of one connection left without an answer (a 0.9 broker's ApiVersions) or answered
#: around its ``ServerConnection`` (a pre-2.4 KIP-511 answer) above which it is closed: the
#: connection keeps a small record of each.
UNANSWERED_CAP = 1024
#: Send at most this many queued answers with one system call (sendmsg).
SEND_BATCH = 64


class Host(Protocol):
    """What a connection needs of its server (``server.Server``): the loop, the cluster's
    tables, and the server's bookkeeping of its connections."""

    loop: EventLoop
    routes: Routes
    state: ClusterState
    shapes: Shapes
    limits: Limits
    connection: Any
    """The generated package's ``connection`` module."""
    registry: Any
    """The generated package's ``registry`` module."""

    def record(self, channel: Channel, direction: str, event: Any, frame: bytes) -> None: ...

    def touch(self, channel: Channel) -> None: ...

    def forget(self, channel: Channel) -> None: ...

    def tracked(self, channel: Channel, event: Any) -> Any: ...

    def rtt(self, node_id: int) -> float: ...


class Gate(Protocol):
    """What answers a connection's requests until its client has authenticated
    (``authenticate.Authenticator``)."""

    @property
    def done(self) -> bool: ...

    def handle(self, channel: Channel, event: Any) -> None: ...


class Parked:
    """A request whose answer waits: woken by its signals, expired by its timer."""

    __slots__ = ("channel", "event", "call", "wait", "timer", "queued", "done")

    def __init__(self, channel: Channel, event: Any, call: Call, wait: Wait) -> None:
        self.channel, self.event, self.call, self.wait = channel, event, call, wait
        self.timer: Timer | None = None
        self.queued = False
        self.done = False

    def wake(self) -> None:
        if not self.queued and not self.done:
            self.queued = True
            self.channel.server.loop.call_soon(self._run)

    def _run(self) -> None:
        self.queued = False
        if not self.done:
            self.channel.resume(self, expired=False)

    def expire(self) -> None:
        if not self.done:
            self.channel.resume(self, expired=True)


class Channel:
    def __init__(
        self,
        server: Host,
        sock: socket.socket,
        node: Any,
        conn_no: int,
        tls: TlsSession | None = None,
        auth: Gate | None = None,
    ) -> None:
        self.server, self.sock, self.node, self.conn_no = server, sock, node, conn_no
        self.tls, self.auth = tls, auth
        self.principal = "User:ANONYMOUS"
        """Who the client is: ``User:NAME`` once it authenticated with SASL."""
        peer = sock.getpeername()
        self.client_host = str(peer[0])
        self.client_address = f"{peer[0]}:{peer[1]}"
        self.conn = server.connection.ServerConnection(
            max_frame_size=server.limits.socket_request_max_bytes
        )
        self.inbox: deque[Any] = deque()
        self.parked: Parked | None = None
        self.out: deque[memoryview] = deque()
        self.out_bytes = 0
        self.events = 0
        self.closed = False
        self.unanswered = 0
        self.closing = False
        """Closed once the answers queued are sent (after a failed authentication)."""
        self.delayed: deque[tuple[float, bytes]] = deque()
        """Answers held back by the broker's round-trip time: (when to send, bytes)."""
        self._release: Timer | None = None
        self.deadline: Timer | None = None
        """Closes the connection if TLS and SASL have not finished in time."""
        self._serving = False
        self.last_active = time.monotonic()

    # --- I/O --------------------------------------------------------------------------

    def on_ready(self, mask: int) -> None:
        if mask & selectors.EVENT_WRITE:
            self.flush()
        if mask & selectors.EVENT_READ and not self.closed:
            self.read()
        self.serve()

    def read(self) -> None:
        try:
            data = self.sock.recv(RECV_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        self.server.touch(self)
        if self.tls is not None and data:
            try:
                data = self.tls.receive(data)
            except self.tls.errors:  # a failed handshake, a bad record: as Kafka, close
                self.close()
                return
            self.queue_raw(self.tls.outgoing())
            if not data:
                return
        connection = self.server.connection
        for event in self.conn.receive_data(data, time.monotonic()):
            if isinstance(event, connection.RequestReceived):
                self.server.record(self, "request", event, event.frame)
                self.inbox.append(event)
            elif self.auth is not None and isinstance(event, connection.SaslTokenReceived):
                self.inbox.append(event)
            else:  # the client closed, or broke the protocol
                self.close()
                return

    def flush(self) -> None:
        """Send what the peer takes: the queued answers, several per system call."""
        sent = False
        out = self.out
        while out and not self.closed:
            try:
                if len(out) == 1:
                    n = self.sock.send(out[0])
                else:
                    n = self.sock.sendmsg(list(itertools.islice(out, SEND_BATCH)))
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                self.close()
                return
            sent = True
            self.out_bytes -= n
            while n and n >= len(out[0]):
                n -= len(out.popleft())
            if n:  # the peer took part of an answer: the rest waits for it
                out[0] = out[0][n:]
                break
        if sent:
            self.server.touch(self)
        if self.closing and not self.out and not self.delayed:
            self._close_after_answers()

    def _close_after_answers(self) -> None:
        """Close once the last answers are sent: end our side, drop what the peer sent
        meanwhile (a close with unread bytes resets the connection, and the peer may lose
        the answer), then close."""
        try:
            self.sock.shutdown(socket.SHUT_WR)
            while self.sock.recv(RECV_SIZE):
                pass
        except OSError:
            pass  # nothing more to read now, or the peer is gone
        self.close()

    def interest(self) -> None:
        """Read while the connection may take more; write while answers wait."""
        want = 0
        if not self.closed:
            if self.out_bytes < SEND_CAP and len(self.inbox) < INBOX_CAP and not self.closing:
                want |= selectors.EVENT_READ
            if self.out_bytes:
                want |= selectors.EVENT_WRITE
        if want == self.events:
            return
        selector = self.server.loop.selector
        if not self.events:
            selector.register(self.sock, want, self.on_ready)
        elif not want:
            selector.unregister(self.sock)
        else:
            selector.modify(self.sock, want, self.on_ready)
        self.events = want

    @property
    def muted(self) -> bool:
        """Whether it is not read because its peer does not take its answers."""
        return self.out_bytes >= SEND_CAP

    @property
    def busy(self) -> bool:
        """Whether it has requests under way (not idle, whatever its last I/O)."""
        return bool(self.parked or self.inbox or self.out or self.delayed)

    @property
    def authenticated(self) -> bool:
        """Whether its TLS handshake (if any) and SASL authentication (if any) are done."""
        return (self.tls is None or self.tls.handshaken) and (self.auth is None or self.auth.done)

    def authentication_expired(self) -> None:
        if not self.authenticated:
            self.close()

    # --- answering --------------------------------------------------------------------

    def serve(self) -> None:
        """Answer the requests at the head of the queue, in order, while the peer reads;
        a few at a time, then the other connections get a turn."""
        self._serving = False
        for _ in range(SERVE_BATCH):
            if self.closed or self.closing or self.parked is not None or not self.inbox:
                break
            if self.out_bytes >= SEND_CAP:
                break
            self.handle(self.inbox.popleft())
        else:
            if self.inbox and not self.closed:
                self._serving = True
                self.server.loop.call_soon(self._serve_more)
        if not self.closed:
            self.flush()
        if not self.closed:
            self.interest()

    def _serve_more(self) -> None:
        if self._serving:
            self.serve()

    def handle(self, event: Any) -> None:
        routes = self.server.routes
        if routes.tracked is not None and hasattr(event, "api_key"):
            routes.tracked.append(self.server.tracked(self, event))
        emulated = self.server.state.release
        if emulated is not None and hasattr(event, "api_key"):  # not a raw SASL token
            verdict = emulated.verdict(event.api_key, event.api_version)
            if verdict != ANSWER:  # CLOSE, or IGNORE: as a 0.9 broker, drop it
                self.unanswered += verdict == IGNORE
                if verdict == CLOSE or self.unanswered > UNANSWERED_CAP:
                    self.close()
                return
        if self.auth is not None and not self.auth.done:
            self.auth.handle(self, event)
            return
        if event.api_key == ApiKey.API_VERSIONS:
            self.answer_api_versions(event)
            return
        advertised = routes.versions.get(event.api_key)
        if emulated is None and (
            advertised is None or not advertised[0] <= event.api_version <= advertised[1]
        ):
            # as Kafka's request parsing does for a version it does not know
            self.close()
            return
        handler = routes.handlers[event.api_key]
        call = Call(
            event.api_key,
            event.api_version,
            event.request,
            event.header.client_id,
            self.client_host,
            self.node,
            self.server.state,
            self.server.shapes,
            self.server.registry.API_KEYS[event.api_key].response,
            time.monotonic(),
            self.server.limits,
            handler.names,
            self.principal,
        )
        self.settle(event, call, lambda: routes.answer(call))

    def answer_api_versions(self, event: Any) -> None:
        """The release's ApiVersions answer, with its features from v3 (KIP-584)."""
        emulated = self.server.state.release
        if emulated is None:
            self.conn.send_api_versions(event, self.server.routes.versions)
        else:
            frame = emulated.old_unsupported_api_versions(event)
            if frame is not None:  # written around the connection: counted
                self.unanswered += 1
                if self.unanswered > UNANSWERED_CAP:
                    self.close()
                    return
                self.send_frame(event, frame)
                return
            features = emulated.api_versions_features(event.api_version)
            self.conn.send_api_versions(event, emulated.advertised, **features)
        self.take_output(event)

    def settle(self, event: Any, call: Call, answer: Any) -> None:
        """Get the answer (``answer()``) and send it, park it, or close. An answer that
        fails (a request the fake cannot answer, or a bug) closes this connection only,
        and is kept in ``failures``: the other clients go on."""
        try:
            response = answer()
            if isinstance(response, Wait):
                self.park(event, call, response)
            elif response is DISCONNECT:
                self.close()
            elif response is not None and event.expects_response:  # None: acks=0 Produce
                throttle = self.server.routes.throttle_ms
                if throttle and hasattr(response, "throttle_time_ms"):
                    response.throttle_time_ms = throttle
                self.conn.send_response(event, self.server.shapes.fit(response, call.version))
                self.take_output(event)
        except Exception as exc:  # noqa: BLE001 - one bad answer must not end the broker
            self.server.routes.failures.append(f"{type(exc).__name__}: {exc}")
            self.close()

    def take_output(self, event: Any, delay: float = 0.0) -> None:
        """Queue the answer the connection wrote, ``delay`` seconds from now at the earliest
        (and the broker's round-trip time)."""
        self.send_parts(event, self.conn.parts_to_send(), delay)  # a large Fetch body apart

    def send_frame(self, event: Any, data: bytes) -> None:
        """Queue ``data``, an answer to ``event`` written around the connection (size
        prefix included), as ``take_output`` queues the connection's."""
        self.send_parts(event, [data] if data else [], 0.0)

    def send_parts(self, event: Any, parts: list[bytes], delay: float) -> None:
        if parts:
            if self.server.routes.record is not None and event is not None:
                self.server.record(self, "response", event, b"".join(parts)[4:])  # no size
            rtt = max(self.server.rtt(self.node.node_id), delay)
            if rtt or self.delayed:
                self._hold_back(b"".join(parts), rtt)
            else:
                for part in parts:
                    self.queue_raw(self.tls.wrap(part) if self.tls is not None else part)

    def queue_raw(self, data: bytes) -> None:
        """Bytes to send as they are (encrypted already on a TLS connection)."""
        if data:
            self.out.append(memoryview(data))
            self.out_bytes += len(data)

    def _hold_back(self, data: bytes, rtt: float) -> None:
        """Send ``data`` ``rtt`` seconds from now, after the answers held back before it
        (encrypted when it is sent, so the TLS records stay in order)."""
        when = time.monotonic() + rtt
        if self.delayed:
            when = max(when, self.delayed[-1][0])
        self.delayed.append((when, data))
        if self._release is None:
            self._release = self.server.loop.call_at(when, self._send_held)

    def _send_held(self) -> None:
        self._release = None
        if self.closed:
            return
        now = time.monotonic()
        while self.delayed and self.delayed[0][0] <= now:
            data = self.delayed.popleft()[1]
            self.queue_raw(self.tls.wrap(data) if self.tls is not None else data)
        if self.delayed:
            self._release = self.server.loop.call_at(self.delayed[0][0], self._send_held)
        self.flush()
        if not self.closed:
            self.interest()

    # --- waiting answers --------------------------------------------------------------

    def park(self, event: Any, call: Call, wait: Wait) -> None:
        parked = Parked(self, event, call, wait)
        self.parked = parked
        self._watch(parked)

    def _watch(self, parked: Parked) -> None:
        for signal in parked.wait.on:
            signal.subscribe(parked)
        parked.timer = self.server.loop.call_at(parked.wait.deadline, parked.expire)

    def _unwatch(self, parked: Parked) -> None:
        for signal in parked.wait.on:
            signal.unsubscribe(parked)
        self.server.loop.cancel(parked.timer)
        parked.timer = None

    def resume(self, parked: Parked, expired: bool) -> None:
        """Look at a waiting answer again (a signal fired, or its deadline came)."""
        try:
            response = parked.wait.poll(time.monotonic(), expired)
            if response is None and expired:
                raise RuntimeError(
                    f"the waiting answer to api {parked.event.api_key} missed its deadline"
                )
        except Exception as exc:  # noqa: BLE001 - as in settle
            self.server.routes.failures.append(f"{type(exc).__name__}: {exc}")
            self.close()
            return
        if response is None:
            return  # still waiting, still watched
        self._unwatch(parked)
        self.parked = None
        parked.done = True
        self.settle(parked.event, parked.call, lambda: response)
        self.serve()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.parked is not None:
            self._unwatch(self.parked)
            self.parked.done = True
            self.parked = None
        if self.events:
            try:
                self.server.loop.selector.unregister(self.sock)
            except (KeyError, ValueError):
                pass
            self.events = 0
        self.server.loop.cancel(self._release)
        self.server.loop.cancel(self.deadline)
        self.inbox.clear()
        self.out.clear()
        self.delayed.clear()
        self.out_bytes = 0
        self.sock.close()
        self.conn.close()
        self.server.forget(self)
