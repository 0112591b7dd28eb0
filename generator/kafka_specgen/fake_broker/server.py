"""The brokers' sockets: one thread per broker, a ``ServerConnection`` per client.

Each connection is served in order, as Kafka does: while a request waits (a Fetch for
data, a JoinGroup for the other members), the requests behind it on that connection wait
too. A request outside the advertised ranges, or of an API the fake broker does not
advertise, closes the connection, as Kafka's request parsing does.
"""

from __future__ import annotations

import selectors
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from .call import Call, Wait
from .shapes import Shapes
from .state import BrokerAddress, ClusterState

#: How often parked requests are looked at again, in seconds.
TICK = 0.005
API_VERSIONS = 18

DISCONNECT = object()
"""What a ``control`` function returns to close the client's connection instead."""


@dataclass
class Routes:
    """What every broker of a cluster answers, and how."""

    handlers: dict[int, Callable[[Call], Any]]
    versions: dict[int, tuple[int, int]]
    """Advertised api key -> (min, max)."""
    controls: dict[int, Callable[[Call], Any]] = field(default_factory=dict)
    throttle_ms: int = 0
    failures: list[str] = field(default_factory=list)
    """Handlers that raised, as ``Type: message`` (the connection was closed)."""
    record: TextIO | None = None
    record_lock: threading.Lock = field(default_factory=threading.Lock)
    next_conn: int = 0


@dataclass
class Session:
    sock: socket.socket
    server: Any
    """The package's ``ServerConnection``."""
    conn_no: int
    client_host: str
    client_address: str
    """``host:port`` of the client's end."""
    queue: deque[Any] = field(default_factory=deque)
    """Requests received and not answered yet, oldest first."""
    parked: tuple[Any, Call, Wait] | None = None


class Broker(threading.Thread):
    """One broker: a listening socket and the connections to it, on one thread."""

    def __init__(
        self,
        node: BrokerAddress,
        sock: socket.socket,
        state: ClusterState,
        shapes: Shapes,
        routes: Routes,
        connection: Any,
        registry: Any,
        frames: Any,
    ) -> None:
        super().__init__(name=f"fake-broker-{node.node_id}", daemon=True)
        self.node, self.listener, self.state = node, sock, state
        self.shapes, self.routes, self.connection = shapes, routes, connection
        self.registry, self.frames = registry, frames
        self.selector = selectors.DefaultSelector()
        self.sessions: dict[socket.socket, Session] = {}
        self.stopping = threading.Event()

    def stop(self) -> None:
        self.stopping.set()

    def run(self) -> None:
        self.listener.setblocking(False)
        self.selector.register(self.listener, selectors.EVENT_READ)
        try:
            while not self.stopping.is_set():
                for key, _ in self.selector.select(TICK):
                    if key.fileobj is self.listener:
                        self._accept()
                    else:
                        self._read(self.sessions[key.fileobj])  # type: ignore[index]
                now = time.monotonic()
                for session in list(self.sessions.values()):
                    self._serve(session, now)
        finally:
            for session in list(self.sessions.values()):
                self._drop(session)
            self.selector.close()
            self.listener.close()

    def _accept(self) -> None:
        try:
            sock, address = self.listener.accept()
        except BlockingIOError:
            return
        sock.setblocking(False)
        with self.routes.record_lock:
            self.routes.next_conn += 1
            conn_no = self.routes.next_conn
        session = Session(
            sock,
            self.connection.ServerConnection(),
            conn_no,
            str(address[0]),
            f"{address[0]}:{address[1]}",
        )
        self.sessions[sock] = session
        self.selector.register(sock, selectors.EVENT_READ)

    def _read(self, session: Session) -> None:
        try:
            data = session.sock.recv(1 << 16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        for event in session.server.receive_data(data, time.monotonic()):
            if isinstance(event, self.connection.RequestReceived):
                self._record(session, "request", event, event.frame)
                session.queue.append(event)
            else:  # closed, or broke the protocol
                self._drop(session)
                return

    def _serve(self, session: Session, now: float) -> None:
        """Answer the requests at the head of the connection's queue, in order. A handler
        that fails (a request this fake cannot answer, or a bug) closes that connection
        only, and is kept in ``Routes.failures``: the other clients go on."""
        try:
            self._serve_queue(session, now)
        except Exception as exc:  # noqa: BLE001 - the broker thread must outlive a bad answer
            self.routes.failures.append(f"{type(exc).__name__}: {exc}")
            self._drop(session)

    def _serve_queue(self, session: Session, now: float) -> None:
        while session.parked is not None or session.queue:
            if session.parked is not None:
                event, call, wait = session.parked
                response = wait.poll(now, now >= wait.deadline)
                if response is None:
                    return
                session.parked = None
                if not self._answer(session, event, call, response):
                    return
                continue
            event = session.queue.popleft()
            if not self._dispatch(session, event, now):
                return

    def _dispatch(self, session: Session, event: Any, now: float) -> bool:
        """Handle one request; False when the connection was closed or the answer waits."""
        advertised = self.routes.versions.get(event.api_key)
        if event.api_key == API_VERSIONS:
            session.server.send_api_versions(event, self.routes.versions)
            return self._flush(session, event)
        if advertised is None or not advertised[0] <= event.api_version <= advertised[1]:
            self._drop(session)
            return False
        call = Call(
            event.api_key,
            event.api_version,
            event.request,
            event.header.client_id,
            session.client_host,
            self.node,
            self.state,
            self.shapes,
            self.registry.API_KEYS[event.api_key].response,
            now,
        )
        control = self.routes.controls.get(event.api_key)
        response = control(call) if control is not None else None
        if response is None:
            response = self.routes.handlers[event.api_key](call)
        if isinstance(response, Wait):
            session.parked = (event, call, response)
            return False
        return self._answer(session, event, call, response)

    def _answer(self, session: Session, event: Any, call: Call, response: Any) -> bool:
        if response is DISCONNECT:
            self._drop(session)
            return False
        if response is None or not event.expects_response:
            return True  # acks=0 Produce
        if self.routes.throttle_ms and hasattr(response, "throttle_time_ms"):
            response.throttle_time_ms = self.routes.throttle_ms
        session.server.send_response(event, self.shapes.fit(response, call.version))
        return self._flush(session, event)

    def _flush(self, session: Session, event: Any) -> bool:
        data = session.server.data_to_send()
        self._record(session, "response", event, data[4:])
        try:
            session.sock.setblocking(True)
            session.sock.sendall(data)
            session.sock.setblocking(False)
        except OSError:
            self._drop(session)
            return False
        return True

    def _record(self, session: Session, direction: str, event: Any, frame: bytes) -> None:
        out = self.routes.record
        if out is None:
            return
        line = self.frames.capture_line(
            time.time(),
            session.conn_no,
            direction,
            event.api_key,
            event.api_version,
            event.correlation_id,
            event.header.client_id,
            frame,
            client=session.client_address,
            broker=f"{self.node.host}:{self.node.port}",
        )
        with self.routes.record_lock:
            out.write(line)
            out.flush()

    def _drop(self, session: Session) -> None:
        if self.sessions.pop(session.sock, None) is None:
            return
        try:
            self.selector.unregister(session.sock)
        except (KeyError, ValueError):
            pass
        session.sock.close()
