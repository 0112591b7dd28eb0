# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""A blocking Kafka client over one socket: ``connection.ClientConnection`` plus the I/O.

::

    with Client.connect("127.0.0.1", 9092, ClientConnection(client_id="app")) as client:
        metadata = client.request(MetadataRequest(topics=None))   # a MetadataResponse

Thin on purpose: one request at a time through ``request``; ``send`` writes without waiting
(for acks=0 Produce, or to pipeline: ``answers`` then keeps responses by correlation id).
Failures raise ``ConnectionFailedError`` or ``RequestTimedOutError`` and close the socket.
"""

from __future__ import annotations

import socket
import time
from typing import Any, TypeVar, overload

from .connection import (
    ClientConnection,
    ConnectionClosed,
    ConnectionFailed,
    ConnectionFailedError,
    Event,
    Ready,
    Request,
    RequestTimedOut,
    RequestTimedOutError,
    Response,
    TypedRequest,
    expects_response,
)

R = TypeVar("R")


class Client:
    """A connected, ready client (``Client.connect`` does the handshake)."""

    def __init__(self, sock: socket.socket, connection: ClientConnection) -> None:
        self._sock = sock
        self.connection = connection
        self.answers: dict[int, Response[Any]] = {}
        self.ready: Ready | None = None

    @classmethod
    def connect(cls, host: str, port: int, connection: ClientConnection | None = None) -> Client:
        conn = ClientConnection() if connection is None else connection
        client = cls(socket.create_connection((host, port), timeout=conn.request_timeout), conn)
        try:
            client._handle(conn.start(time.monotonic()))
            while client.ready is None:
                client._pump()
        except BaseException:
            client.close()
            raise
        return client

    def send(self, request: Request, *, version: int | None = None) -> int:
        """Send without waiting; returns the correlation id."""
        cid = self.connection.send(request, time.monotonic(), version=version)
        self._sock.sendall(self.connection.data_to_send())
        return cid

    @overload
    def request(self, request: TypedRequest[R], *, version: int | None = None) -> R: ...
    @overload
    def request(self, request: Request, *, version: int | None = None) -> Any: ...
    def request(self, request: Request, *, version: int | None = None) -> Any:
        """Send and wait for the response (decoded at the version sent)."""
        if not expects_response(request):
            raise ValueError("Kafka does not answer a Produce with acks=0: use send()")
        cid = self.send(request, version=version)
        while cid not in self.answers:
            self._pump()
        return self.answers.pop(cid).response

    def _pump(self) -> None:
        """Wait for bytes or the next deadline, whichever comes first, and handle them."""
        conn = self.connection
        deadline = conn.next_deadline()
        wait = None if deadline is None else deadline - time.monotonic()
        data: bytes | None = None
        if wait is None or wait > 0:
            self._sock.settimeout(wait)
            try:
                data = self._sock.recv(65536)
            except TimeoutError:
                pass
            except OSError:  # a reset is a close, as far as the protocol is concerned
                data = b""
        now = time.monotonic()
        self._handle(conn.handle_timer(now) if data is None else conn.receive_data(data, now))

    def _handle(self, events: list[Event]) -> None:
        for event in events:
            if isinstance(event, Response):
                self.answers[event.correlation_id] = event
            elif isinstance(event, Ready):
                self.ready = event
            elif isinstance(event, RequestTimedOut):
                self.close()
                raise RequestTimedOutError(f"no response to correlation id {event.correlation_id}")
            elif isinstance(event, ConnectionFailed):
                self.close()
                raise ConnectionFailedError(f"{event.cause.value}: {event.reason}", event)
            elif isinstance(event, ConnectionClosed):
                self.close()
                raise ConnectionFailedError("the broker closed the connection")
        self._sock.sendall(self.connection.data_to_send())

    def close(self) -> None:
        self.connection.close()
        self._sock.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
