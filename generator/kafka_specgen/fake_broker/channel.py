"""One client connection: non-blocking reads and writes, its requests answered in order.

As Kafka's ``Selector``/``KafkaChannel`` do, a connection whose peer does not read is muted
alone: while more than ``SEND_CAP`` bytes of answers wait to go out, its later requests are
neither read nor answered; the other connections go on. A request whose answer waits (a
``Wait``) holds the requests behind it on its connection, as Kafka answers a connection's
requests in order, until a signal it waits on fires or its deadline comes.
"""

from __future__ import annotations

import selectors
import socket
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from .apikeys import ApiKey
from .call import Call
from .dispatch import DISCONNECT
from .loop import Timer
from .release import ANSWER, CLOSE, IGNORE
from .waiting import Wait

if TYPE_CHECKING:
    from .server import Server

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
    def __init__(self, server: Server, sock: socket.socket, node: Any, conn_no: int) -> None:
        self.server, self.sock, self.node, self.conn_no = server, sock, node, conn_no
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
        for event in self.conn.receive_data(data, time.monotonic()):
            if isinstance(event, self.server.connection.RequestReceived):
                self.server.record(self, "request", event, event.frame)
                self.inbox.append(event)
            else:  # the client closed, or broke the protocol
                self.close()
                return

    def flush(self) -> None:
        sent = False
        while self.out and not self.closed:
            chunk = self.out[0]
            try:
                n = self.sock.send(chunk)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                self.close()
                return
            sent = True
            self.out_bytes -= n
            if n < len(chunk):
                self.out[0] = chunk[n:]
                break
            self.out.popleft()
        if sent:
            self.server.touch(self)

    def interest(self) -> None:
        """Read while the connection may take more; write while answers wait."""
        want = 0
        if not self.closed:
            if self.out_bytes < SEND_CAP and len(self.inbox) < INBOX_CAP:
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
        return bool(self.parked or self.inbox or self.out)

    # --- answering --------------------------------------------------------------------

    def serve(self) -> None:
        """Answer the requests at the head of the queue, in order, while the peer reads;
        a few at a time, then the other connections get a turn."""
        self._serving = False
        for _ in range(SERVE_BATCH):
            if self.closed or self.parked is not None or not self.inbox:
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
        emulated = self.server.state.release
        if emulated is not None:
            verdict = emulated.verdict(event.api_key, event.api_version)
            if verdict != ANSWER:  # CLOSE, or IGNORE: as a 0.9 broker, drop it
                self.unanswered += verdict == IGNORE
                if verdict == CLOSE or self.unanswered > UNANSWERED_CAP:
                    self.close()
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

    def take_output(self, event: Any) -> None:
        self.send_frame(event, self.conn.data_to_send())

    def send_frame(self, event: Any, data: bytes) -> None:
        """Queue ``data`` (an answer to ``event``, size prefix included) to go out."""
        if data:
            if self.server.routes.record is not None:  # the frame without its size prefix
                self.server.record(self, "response", event, data[4:])
            self.out.append(memoryview(data))
            self.out_bytes += len(data)

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
        self.inbox.clear()
        self.out.clear()
        self.out_bytes = 0
        self.sock.close()
        self.conn.close()
        self.server.forget(self)
