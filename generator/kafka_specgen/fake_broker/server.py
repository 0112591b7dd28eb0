"""The brokers' listeners and connections, on the cluster's one event loop.

Accepting: every pending connection at once; when the process is out of file descriptors
(EMFILE, ENFILE, ...) the listener pauses, the failure is kept in ``failures``, and it
listens again after a back-off (50 ms, doubling up to 1 s) instead of spinning or giving
up. Idle connections (no bytes either way for ``connections_max_idle_ms``, no request under
way) are closed, oldest first, by one timer set for the oldest one.

With TLS or SASL (``security``), each connection gets its TLS session and authenticator
and must finish both within ``handshake_timeout_ms``. A broker set down (``set_down``)
closes its listener and its connections; set up again, it listens on the same port.
"""

from __future__ import annotations

import errno
import os
import selectors
import socket
import time
from collections import OrderedDict
from typing import Any

from ..capture.frames import Row, capture_line
from .channel import Channel
from .dispatch import Routes
from .limits import Limits
from .loop import EventLoop, Timer
from .shapes import Shapes
from .state import BrokerAddress, ClusterState

#: accept() errors that mean "no resources now", answered by a pause
RESOURCE_ERRORS = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}
#: accept() errors about one connection only, skipped
PEER_ERRORS = {errno.ECONNABORTED, errno.EPROTO, errno.EPERM, errno.EINTR, errno.ECONNRESET}
PAUSE_FIRST, PAUSE_MOST = 0.05, 1.0
#: connections accepted per readiness of a listener, before the others get a turn
ACCEPT_BATCH = 256
BACKLOG = 1024


class Listener:
    def __init__(self, server: Server, node: BrokerAddress, sock: socket.socket) -> None:
        self.server, self.node, self.sock = server, node, sock
        self.pause = PAUSE_FIRST
        self.failing = False
        self.paused = False

    def on_ready(self, mask: int) -> None:
        self.server.accept(self)


class Server:
    def __init__(
        self,
        state: ClusterState,
        sockets: list[socket.socket],
        routes: Routes,
        shapes: Shapes,
        limits: Limits,
        connection: Any,
        registry: Any,
        security: Any = None,
    ) -> None:
        self.state, self.routes, self.shapes, self.limits = state, routes, shapes, limits
        self.connection, self.registry = connection, registry
        self.security = security
        """``security.Security``: TLS and SASL on the listeners, or None."""
        self.loop = EventLoop(routes.failures.append)
        self.listeners = [Listener(self, n, s) for n, s in zip(state.brokers, sockets)]
        self.channels: OrderedDict[Channel, None] = OrderedDict()
        """Open connections, least recently active first."""
        self._next_conn = 0
        self._idle_timer: Timer | None = None

    # --- life -------------------------------------------------------------------------

    def start(self) -> None:
        for listener in self.listeners:
            listener.sock.setblocking(False)
            self.loop.selector.register(listener.sock, selectors.EVENT_READ, listener.on_ready)
        self.loop.start("fake-kafka-cluster")

    def stop(self) -> None:
        """Close every connection and listener, then stop the loop."""
        if self.loop.thread is None:
            self._shutdown()
            self.loop.close()
            return
        self.loop.call_threadsafe(self._shutdown)
        self.loop.stop()

    def _shutdown(self) -> None:
        for channel in list(self.channels):
            channel.close()
        for listener in self.listeners:
            if not listener.paused and listener.sock.fileno() >= 0:
                try:
                    self.loop.selector.unregister(listener.sock)
                except (KeyError, ValueError):
                    pass  # never registered: the cluster did not start
            listener.sock.close()

    # --- accepting --------------------------------------------------------------------

    def accept(self, listener: Listener) -> None:
        for _ in range(ACCEPT_BATCH):
            try:
                sock, _ = listener.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                if exc.errno in PEER_ERRORS:
                    continue
                self._pause(listener, exc)
                return
            listener.failing, listener.pause = False, PAUSE_FIRST
            try:
                sock.setblocking(False)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self._next_conn += 1
                channel = self._channel(sock, listener.node)
            except OSError:  # it went away already
                sock.close()
                continue
            self.channels[channel] = None
            channel.interest()
            self._arm_idle_timer()

    def _channel(self, sock: socket.socket, node: BrokerAddress) -> Channel:
        security = self.security
        if security is None or not security.secured:
            return Channel(self, sock, node, self._next_conn)
        channel = Channel(
            self, sock, node, self._next_conn, security.tls_session(), security.authenticator()
        )
        when = time.monotonic() + self.limits.handshake_timeout_ms / 1000.0
        channel.deadline = self.loop.call_at(when, channel.authentication_expired)
        return channel

    def _pause(self, listener: Listener, exc: OSError) -> None:
        """Stop listening for a while (out of file descriptors): the connections waiting in
        the backlog stay there until it listens again."""
        if listener.paused:
            return
        if not listener.failing:  # one line per episode, however long it lasts
            name = errno.errorcode.get(exc.errno or 0, "error")
            node = listener.node
            self.routes.failures.append(
                f"broker {node.node_id} ({node.host}:{node.port}) could not accept a "
                f"connection: {name} ({os.strerror(exc.errno or 0)}); pausing, then retrying"
            )
        listener.failing, listener.paused = True, True
        self.loop.selector.unregister(listener.sock)
        self.loop.call_at(time.monotonic() + listener.pause, lambda: self._resume(listener))
        listener.pause = min(listener.pause * 2, PAUSE_MOST)

    def _resume(self, listener: Listener) -> None:
        if listener.paused and listener.sock.fileno() >= 0:
            listener.paused = False
            self.loop.selector.register(listener.sock, selectors.EVENT_READ, listener.on_ready)

    # --- brokers down and up (fault injection) ---------------------------------------

    def set_down(self, node_id: int) -> None:
        """Close the broker's listener and its connections (from the loop's thread)."""
        listener = self.listeners[node_id]
        for channel in [c for c in self.channels if c.node.node_id == node_id]:
            channel.close()
        if listener.sock.fileno() < 0:
            return  # down already
        if not listener.paused:
            self.loop.selector.unregister(listener.sock)
        listener.paused = False
        listener.sock.close()

    def set_up(self, node_id: int) -> None:
        """Listen again on the broker's port (``OSError`` if someone took it meanwhile)."""
        listener = self.listeners[node_id]
        if listener.sock.fileno() >= 0:
            return  # up already
        node = listener.node
        listener.sock = listen(node.host, node.port)
        listener.sock.setblocking(False)
        listener.failing, listener.pause = False, PAUSE_FIRST
        self.loop.selector.register(listener.sock, selectors.EVENT_READ, listener.on_ready)

    def rtt(self, node_id: int) -> float:
        """How long the broker holds each answer back (``broker_set_rtt``), in seconds."""
        faults = self.routes.faults
        return faults.rtt.get(node_id, 0.0) if faults is not None else 0.0

    def tracked(self, channel: Channel, event: Any) -> Any:
        return self.routes.faults.tracked_request(channel, event)

    # --- connections ------------------------------------------------------------------

    def touch(self, channel: Channel) -> None:
        channel.last_active = time.monotonic()
        if channel in self.channels:
            self.channels.move_to_end(channel)

    def forget(self, channel: Channel) -> None:
        self.channels.pop(channel, None)

    def _arm_idle_timer(self) -> None:
        if self._idle_timer is None and self.channels:
            oldest = next(iter(self.channels))
            when = oldest.last_active + self.limits.connections_max_idle_ms / 1000.0
            self._idle_timer = self.loop.call_at(when, self._close_idle)

    def _close_idle(self) -> None:
        self._idle_timer = None
        idle = self.limits.connections_max_idle_ms / 1000.0
        now = time.monotonic()
        while self.channels:
            oldest = next(iter(self.channels))
            if oldest.last_active + idle > now:
                break
            if oldest.busy:  # a request under way is not idleness
                self.touch(oldest)
                continue
            oldest.close()
        self._arm_idle_timer()

    def record(self, channel: Channel, direction: str, event: Any, frame: bytes) -> None:
        """Write a frame to the capture file, if the cluster records."""
        out = self.routes.record
        if out is None:
            return
        client, broker = channel.client_address, f"{channel.node.host}:{channel.node.port}"
        row = Row(
            conn=str(channel.conn_no),
            ts=time.time(),
            src=client if direction == "request" else broker,
            dst=broker if direction == "request" else client,
            direction=direction,
            api_key=event.api_key,
            api_version=event.api_version,
            correlation_id=event.correlation_id,
            client_id=event.header.client_id,
            frame=frame,
            error=None,
        )
        out.write(capture_line(row))
        out.flush()


def listen(host: str, port: int) -> socket.socket:
    """A listening socket (``OSError`` if the address is taken or not ours)."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock
