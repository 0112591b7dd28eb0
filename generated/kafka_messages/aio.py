# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""An asyncio Kafka client over one connection: ``connection.ClientConnection`` plus the I/O.

::

    client = await AsyncClient.connect("127.0.0.1", 9092, ClientConnection(client_id="app"))
    metadata = await client.request(MetadataRequest(topics=None))   # a MetadataResponse
    await client.close()

Requests from several tasks are pipelined (up to the connection's ``max_in_flight``, the
rest wait in its queue). One reader task feeds the connection; one timer, always set to the
connection's next deadline, runs its timeouts and throttles, so every wait is bounded:
``connect(timeout=)`` bounds the TCP and TLS set-up and the handshake, each request has its
deadline (``request(timeout=)``). A failure raises ``ConnectionFailedError`` (naming the
cause; ``RequestTimedOutError`` for a deadline) in every waiting ``request`` and in every
later one, until ``reconnect()`` opens a new connection.
"""

from __future__ import annotations

import asyncio
from ssl import SSLContext, SSLError
from typing import Any, TypeVar, overload

from .connection import (
    ClientConnection,
    ConnectionClosed,
    ConnectionFailed,
    ConnectionFailedError,
    ConnectionState,
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

R = TypeVar("R")


class AsyncClient:
    """A connected, ready client (``AsyncClient.connect`` opens it and does the handshake)."""

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
        self._loop = asyncio.get_running_loop()
        self._writer: asyncio.StreamWriter | None = None
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._ready: asyncio.Future[Ready] = self._loop.create_future()
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None

    @classmethod
    async def connect(
        cls,
        host: str,
        port: int,
        connection: ClientConnection | None = None,
        *,
        timeout: float | None = None,
        ssl: SSLContext | None = None,
        server_hostname: str | None = None,
        backoff: ReconnectBackoff | None = None,
    ) -> AsyncClient:
        """Connect, over TLS with ``ssl``, and run the handshake, all within ``timeout``
        seconds (default: the connection's ``request_timeout``). Raises
        ``ConnectionFailedError`` naming the cause."""
        conn = ClientConnection() if connection is None else connection
        client = cls(
            host, port, conn, timeout=timeout, ssl=ssl, server_hostname=server_hostname,
            backoff=backoff,
        )  # fmt: skip
        await client._open(conn, client.timeout)
        return client

    @property
    def ready(self) -> Ready:
        """The handshake's ``Ready`` event."""
        if not self._ready.done() or self._ready.exception() is not None:
            raise LocalProtocolError("the client is not connected")
        return self._ready.result()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def send(
        self, request: Request, *, version: int | None = None, timeout: float | None = None
    ) -> int:
        """Send without waiting for the response; returns the correlation id."""
        cid = self.connection.send(request, self._loop.time(), version=version, timeout=timeout)
        self._after([])
        return cid

    @overload
    async def request(
        self, request: TypedRequest[R], *, version: int | None = None, timeout: float | None = None
    ) -> R: ...
    @overload
    async def request(
        self, request: Request, *, version: int | None = None, timeout: float | None = None
    ) -> Any: ...
    async def request(
        self, request: Request, *, version: int | None = None, timeout: float | None = None
    ) -> Any:
        """Send and wait for the response (decoded at the version sent), at most ``timeout``
        seconds (default: the connection's ``request_timeout``)."""
        if not expects_response(request):
            raise ValueError("Kafka does not answer a Produce with acks=0: use send()")
        cid = self.send(request, version=version, timeout=timeout)
        # No drain: the in-flight limit bounds what waits in the transport's buffer, and the
        # request's deadline ends the wait on a broker that stops reading.
        future = self._waiting[cid] = self._loop.create_future()
        return await future

    async def reconnect(self, *, timeout: float | None = None) -> None:
        """Close this connection and open a new one to the same broker, with the same
        options, trying again after each failure with exponential backoff (``backoff``:
        50 ms doubling to 1 s, like Java's ``reconnect.backoff.ms``) until ``timeout``
        seconds (default: ``self.timeout``) have passed; then the last failure is raised."""
        await self.close()
        budget = self.timeout if timeout is None else timeout
        deadline = self._loop.time() + budget
        while True:
            # No await inside an except clause: the compiled build loses the exception there.
            failure = await self._try_open(self.connection.fresh(), min(self.timeout, budget))
            if failure is None:
                self.backoff.reset()
                return
            delay = self.backoff.next_delay()
            budget = deadline - self._loop.time() - delay
            if budget <= 0:
                raise failure
            await asyncio.sleep(delay)

    async def _try_open(
        self, connection: ClientConnection, timeout: float
    ) -> ConnectionFailedError | None:
        try:
            await self._open(connection, timeout)
        except ConnectionFailedError as exc:
            return exc
        return None

    async def close(self) -> None:
        self.connection.close()
        self._fail_all(LocalProtocolError("the client was closed"))
        await self._stop()

    # --- I/O ----------------------------------------------------------------------------

    async def _open(self, connection: ClientConnection, timeout: float) -> None:
        self.connection = connection
        self._waiting = {}
        self._ready = self._loop.create_future()
        deadline = self._loop.time() + timeout
        address = self.address
        hostname = (self.server_hostname or self.host) if self.ssl is not None else None
        try:
            opening = asyncio.open_connection(
                self.host, self.port, ssl=self.ssl, server_hostname=hostname
            )
            reader, self._writer = await asyncio.wait_for(opening, timeout)
        except asyncio.TimeoutError:
            reason = f"no connection to {address} in {timeout:g} s"
            raise _failed(FailureCause.TIMED_OUT, reason) from None
        except (SSLError, ValueError) as exc:
            raise _failed(FailureCause.TLS_FAILED, f"{address}: {exc}") from None
        except OSError as exc:
            reason = f"{address}: {exc.strerror or exc}"
            raise _failed(FailureCause.CONNECT_FAILED, reason) from None
        failure: BaseException | None = None
        try:
            self._after(connection.start(self._loop.time(), timeout=deadline - self._loop.time()))
            self._task = asyncio.create_task(self._read(connection, reader))
            await self._ready
        except BaseException as exc:  # no await in here: see reconnect
            failure = exc
        if failure is not None:
            self.connection.close()
            await self._stop()
            raise failure

    async def _read(self, connection: ClientConnection, reader: asyncio.StreamReader) -> None:
        while connection.state is not ConnectionState.CLOSED:
            try:
                data = await reader.read(65536)
            except OSError:  # a reset is a close, as far as the protocol is concerned
                data = b""
            if connection is not self.connection:
                return
            self._after(connection.receive_data(data, self._loop.time()))

    def _on_timer(self) -> None:
        self._timer = None
        self._after(self.connection.handle_timer(self._loop.time()))

    def _after(self, events: list[Event]) -> None:
        """Write what the connection has to send, settle futures, re-arm the timer."""
        data = self.connection.data_to_send()
        if data and self._writer is not None and not self._writer.is_closing():
            self._writer.write(data)
        for event in events:
            if isinstance(event, Response):
                future = self._waiting.pop(event.correlation_id, None)
                if future is not None and not future.done():
                    future.set_result(event.response)
            elif isinstance(event, Ready):
                if not self._ready.done():
                    self._ready.set_result(event)
            elif isinstance(event, RequestTimedOut):
                self._fail_one(event.correlation_id, RequestTimedOutError.from_timeout(event))
            elif isinstance(event, (ConnectionFailed, ConnectionClosed)):
                failure = self.connection.failure
                assert failure is not None
                self._fail_all(ConnectionFailedError.from_event(failure))
        if self._timer is not None:
            self._timer.cancel()
        deadline = self.connection.next_deadline()
        self._timer = None if deadline is None else self._loop.call_at(deadline, self._on_timer)

    def _fail_one(self, cid: int, error: BaseException) -> None:
        future = self._waiting.pop(cid, None)
        if future is not None and not future.done():
            future.set_exception(error)

    def _fail_all(self, error: BaseException) -> None:
        for cid in list(self._waiting):
            self._fail_one(cid, error)
        if not self._ready.done():
            self._ready.set_exception(error)
        if self._writer is not None:
            self._writer.close()

    async def _stop(self) -> None:
        """Stop the timer and the reader, close the socket."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        task, self._task = self._task, None
        if task is not None and task is not asyncio.current_task():
            task.cancel()
        writer = self._writer
        if writer is not None:
            writer.close()
            try:
                await asyncio.wait_for(writer.wait_closed(), 1.0)
            except (ConnectionError, OSError, asyncio.TimeoutError, SSLError):
                pass


def _failed(cause: FailureCause, reason: str) -> ConnectionFailedError:
    return ConnectionFailedError.from_event(ConnectionFailed(cause, reason))
