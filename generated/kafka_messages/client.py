# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""A blocking Kafka client over one socket: ``connection.ClientConnection`` plus the I/O.

::

    with Client.connect("127.0.0.1", 9092, ClientConnection(client_id="app")) as client:
        metadata = client.request(MetadataRequest(topics=None))   # a MetadataResponse

Thin on purpose: one request at a time through ``request``; ``send`` writes without waiting
(for acks=0 Produce, or to pipeline: ``answers`` then keeps responses by correlation id).
Every wait is bounded: ``connect(timeout=)`` bounds the TCP and TLS set-up and the
handshake, each request has its deadline (``request(timeout=)``). A failure of the broker or
the network raises ``ConnectionFailedError`` (``RequestTimedOutError`` for a deadline) and
closes the socket; ``reconnect()`` opens a new connection, with backoff.
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
    FailureCause,
    LocalProtocolError,
    Ready,
    ReconnectBackoff,
    Request,
    RequestTimedOut,
    RequestTimedOutError,
    Response,
    TypedRequest,
    expects_response,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # ssl takes about 25 ms to import: only a TLS connection imports it
    from ssl import SSLContext

R = TypeVar("R")


class Client:
    """A connected, ready client (``Client.connect`` opens it and does the handshake)."""

    def __init__(
        self,
        host: str,
        port: int,
        connection: ClientConnection,
        *,
        timeout: float | None = None,
        ssl: SSLContext | None = None,
        server_hostname: str | None = None,
        backoff: ReconnectBackoff | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.connection = connection
        self.timeout = connection.request_timeout if timeout is None else timeout
        """Seconds to connect: TCP, TLS and the handshake together."""
        self.ssl = ssl
        self.server_hostname = server_hostname
        self.backoff = backoff or ReconnectBackoff()
        self.answers: dict[int, Response[Any]] = {}
        self._expired: dict[int, RequestTimedOut] = {}
        self._sock: socket.socket | None = None
        self._ready: Ready | None = None

    @classmethod
    def connect(
        cls,
        host: str,
        port: int,
        connection: ClientConnection | None = None,
        *,
        timeout: float | None = None,
        ssl: SSLContext | None = None,
        server_hostname: str | None = None,
        backoff: ReconnectBackoff | None = None,
    ) -> Client:
        """Connect, over TLS with ``ssl``, and run the handshake, all within ``timeout``
        seconds (default: the connection's ``request_timeout``). Raises
        ``ConnectionFailedError`` naming the cause."""
        conn = ClientConnection() if connection is None else connection
        client = cls(
            host, port, conn, timeout=timeout, ssl=ssl, server_hostname=server_hostname,
            backoff=backoff,
        )  # fmt: skip
        client._open(conn)
        return client

    @property
    def ready(self) -> Ready:
        """The handshake's ``Ready`` event."""
        if self._ready is None:
            raise LocalProtocolError("the client is not connected")
        return self._ready

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def send(
        self, request: Request, *, version: int | None = None, timeout: float | None = None
    ) -> int:
        """Send without waiting; returns the correlation id."""
        cid = self.connection.send(request, time.monotonic(), version=version, timeout=timeout)
        self._write()
        return cid

    @overload
    def request(
        self, request: TypedRequest[R], *, version: int | None = None, timeout: float | None = None
    ) -> R: ...
    @overload
    def request(
        self, request: Request, *, version: int | None = None, timeout: float | None = None
    ) -> Any: ...
    def request(
        self, request: Request, *, version: int | None = None, timeout: float | None = None
    ) -> Any:
        """Send and wait for the response (decoded at the version sent), at most ``timeout``
        seconds (default: the connection's ``request_timeout``)."""
        if not expects_response(request):
            raise ValueError("Kafka does not answer a Produce with acks=0: use send()")
        cid = self.send(request, version=version, timeout=timeout)
        while cid not in self.answers:
            expired = self._expired.pop(cid, None)
            if expired is not None:
                raise RequestTimedOutError.from_timeout(expired)
            self._pump()
        return self.answers.pop(cid).response

    def reconnect(self, *, timeout: float | None = None) -> None:
        """Close this connection and open a new one to the same broker, with the same
        options, trying again after each failure with exponential backoff (``backoff``:
        50 ms doubling to 1 s, like Java's ``reconnect.backoff.ms``) until ``timeout``
        seconds (default: ``self.timeout``) have passed; then the last failure is raised."""
        self.close()
        budget = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + budget
        while True:
            try:
                self._open(self.connection.fresh(), min(self.timeout, budget))
            except ConnectionFailedError:
                delay = self.backoff.next_delay()
                budget = deadline - time.monotonic() - delay
                if budget <= 0:
                    raise
                time.sleep(delay)
            else:
                self.backoff.reset()
                return

    def close(self) -> None:
        self.connection.close()
        if self._sock is not None:
            self._sock.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- I/O ----------------------------------------------------------------------------

    def _open(self, connection: ClientConnection, timeout: float | None = None) -> None:
        self.connection = connection
        self.answers.clear()
        self._expired.clear()
        self._ready = None
        timeout = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        self._sock = open_socket(
            self.host, self.port, timeout, self.ssl, self.server_hostname or self.host
        )
        try:
            self._handle(connection.start(time.monotonic(), timeout=deadline - time.monotonic()))
            while not self._is_ready():  # a method: the compiled build would keep "None"
                self._pump()
        except BaseException:
            self.close()
            raise

    def _is_ready(self) -> bool:
        return self._ready is not None

    def _pump(self) -> None:
        """Wait for bytes or the next deadline, whichever comes first, and handle them."""
        assert self._sock is not None
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
                self._ready = event
            elif isinstance(event, RequestTimedOut):
                if event.written:  # the connection is over: a ConnectionFailed follows
                    self._drop()
                    raise RequestTimedOutError.from_timeout(event)
                self._expired[event.correlation_id] = event
            elif isinstance(event, (ConnectionFailed, ConnectionClosed)):
                self._drop()
                failure = self.connection.failure
                assert failure is not None
                raise ConnectionFailedError.from_event(failure)
        self._write()

    def _write(self) -> None:
        data = self.connection.data_to_send()
        if not data or self._sock is None:
            return
        deadline = self.connection.next_deadline()
        limit = self.connection.request_timeout if deadline is None else deadline - time.monotonic()
        self._sock.settimeout(max(limit, 0.001))
        try:
            self._sock.sendall(data)
        except OSError as exc:
            self._drop()
            timed_out = isinstance(exc, TimeoutError)
            cause = FailureCause.TIMED_OUT if timed_out else FailureCause.CLOSED
            reason = "the broker did not read" if timed_out else f"write failed: {exc}"
            raise ConnectionFailedError.from_event(ConnectionFailed(cause, reason)) from None

    def _drop(self) -> None:
        """The connection ended: close the socket (the ``connection`` keeps why)."""
        if self._sock is not None:
            self._sock.close()


def open_socket(
    host: str, port: int, timeout: float, ssl: SSLContext | None, server_hostname: str
) -> socket.socket:
    """A TCP socket to ``host:port``, wrapped in TLS with ``ssl``, within ``timeout`` seconds;
    ``ConnectionFailedError`` (``CONNECT_FAILED``, ``TLS_FAILED`` or ``TIMED_OUT``) else."""
    address = f"{host}:{port}"
    deadline = time.monotonic() + timeout
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except TimeoutError:
        reason = f"no connection to {address} in {timeout:g} s"
        raise _failed(FailureCause.TIMED_OUT, reason) from None
    except OSError as exc:
        raise _failed(FailureCause.CONNECT_FAILED, f"{address}: {exc.strerror or exc}") from None
    if ssl is None:
        return sock
    from ssl import SSLError

    try:
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        return ssl.wrap_socket(sock, server_hostname=server_hostname)
    except TimeoutError:
        sock.close()
        reason = f"no TLS handshake with {address} in {timeout:g} s"
        raise _failed(FailureCause.TIMED_OUT, reason) from None
    except (SSLError, ValueError) as exc:
        sock.close()
        raise _failed(FailureCause.TLS_FAILED, f"{address}: {exc}") from None
    except OSError as exc:
        sock.close()
        raise _failed(FailureCause.TLS_FAILED, f"{address}: closed during TLS ({exc})") from None


def _failed(cause: FailureCause, reason: str) -> ConnectionFailedError:
    return ConnectionFailedError.from_event(ConnectionFailed(cause, reason))
