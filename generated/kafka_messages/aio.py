# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""An asyncio Kafka client over one connection: ``connection.ClientConnection`` plus the I/O.

::

    client = await AsyncClient.connect("127.0.0.1", 9092, ClientConnection(client_id="app"))
    metadata = await client.request(MetadataRequest(topics=None))   # a MetadataResponse
    await client.close()

Requests from several tasks are pipelined (up to the connection's ``max_in_flight``, the
rest wait in its queue). One reader task feeds the connection; one timer, always set to the
connection's next deadline, runs its timeouts and throttles. Failures raise
``ConnectionFailedError`` or ``RequestTimedOutError`` in every waiting ``request``.
"""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar, overload

from .connection import (
    ClientConnection,
    ConnectionClosed,
    ConnectionFailed,
    ConnectionFailedError,
    ConnectionState,
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


class AsyncClient:
    """A connected, ready client (``AsyncClient.connect`` does the handshake)."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, conn: ClientConnection
    ) -> None:
        self.connection = conn
        self._reader = reader
        self._writer = writer
        self._loop = asyncio.get_running_loop()
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._ready: asyncio.Future[Ready] = self._loop.create_future()
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None

    @classmethod
    async def connect(
        cls, host: str, port: int, connection: ClientConnection | None = None
    ) -> AsyncClient:
        reader, writer = await asyncio.open_connection(host, port)
        client = cls(reader, writer, ClientConnection() if connection is None else connection)
        client._after(client.connection.start(client._loop.time()))
        client._task = asyncio.create_task(client._read())
        try:
            await client._ready
        except BaseException:
            await client.close()
            raise
        return client

    @property
    def ready(self) -> Ready:
        return self._ready.result()

    def send(self, request: Request, *, version: int | None = None) -> int:
        """Send without waiting for the response; returns the correlation id."""
        cid = self.connection.send(request, self._loop.time(), version=version)
        self._after([])
        return cid

    @overload
    async def request(self, request: TypedRequest[R], *, version: int | None = None) -> R: ...
    @overload
    async def request(self, request: Request, *, version: int | None = None) -> Any: ...
    async def request(self, request: Request, *, version: int | None = None) -> Any:
        """Send and wait for the response (decoded at the version sent)."""
        if not expects_response(request):
            raise ValueError("Kafka does not answer a Produce with acks=0: use send()")
        cid = self.send(request, version=version)
        future = self._waiting[cid] = self._loop.create_future()
        await self._writer.drain()
        return await future

    async def _read(self) -> None:
        while self.connection.state is not ConnectionState.CLOSED:
            try:
                data = await self._reader.read(65536)
            except OSError:  # a reset is a close, as far as the protocol is concerned
                data = b""
            self._after(self.connection.receive_data(data, self._loop.time()))

    def _on_timer(self) -> None:
        self._timer = None
        self._after(self.connection.handle_timer(self._loop.time()))

    def _after(self, events: list[Event]) -> None:
        """Write what the connection has to send, settle futures, re-arm the timer."""
        data = self.connection.data_to_send()
        if data:
            self._writer.write(data)
        for event in events:
            if isinstance(event, Response):
                future = self._waiting.pop(event.correlation_id, None)
                if future is not None and not future.done():
                    future.set_result(event.response)
            elif isinstance(event, Ready):
                self._ready.set_result(event)
            elif isinstance(event, RequestTimedOut):
                error = RequestTimedOutError(
                    f"no response to correlation id {event.correlation_id}"
                )
                self._fail_one(event.correlation_id, error)
            elif isinstance(event, ConnectionFailed):
                self._fail_all(ConnectionFailedError(f"{event.cause.value}: {event.reason}", event))
            elif isinstance(event, ConnectionClosed):
                self._fail_all(ConnectionFailedError("the broker closed the connection"))
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
        self._writer.close()

    async def close(self) -> None:
        self.connection.close()
        if self._timer is not None:
            self._timer.cancel()
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()
        self._fail_all(ConnectionFailedError("the client was closed"))
        try:
            await self._writer.wait_closed()
        except (ConnectionError, OSError):
            pass
