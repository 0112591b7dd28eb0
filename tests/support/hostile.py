"""A hostile Kafka broker for tests: loopback only, every wait bounded, stopped by the test.

``HostileBroker(behaviour)`` listens on 127.0.0.1 and serves each connection in a thread
with one of the behaviours of ``BEHAVIOURS``: a broker that throttles for 24.8 days, never
answers, closes in the middle of a frame, answers with the wrong correlation ids, advertises
absurd version ranges, refuses every ApiVersions, trickles its answers a byte at a time, or
announces a 2 GiB frame. Answers are built by hand from the request's header, not by the code
under test.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from kafka_messages import framing
from kafka_messages.api_versions import ApiVersionsResponse, ApiVersionsResponseApiVersion
from kafka_messages.headers import ResponseHeader
from kafka_messages.metadata import MetadataResponse, MetadataResponseBroker

HOST = "127.0.0.1"
MAX_THROTTLE_MS = 2**31 - 1
#: How long a connection thread lives at most, whatever the client does.
CONNECTION_LIFETIME = 30.0
MAX_CONNECTIONS = 32

Versions = dict[int, tuple[int, int]]
NORMAL: Versions = {3: (0, 12), 18: (0, 4)}


class Peer:
    """One accepted connection, as a behaviour sees it."""

    def __init__(self, sock: socket.socket, broker: HostileBroker) -> None:
        self.sock = sock
        self.broker = broker
        self.buffer = b""

    def read_request(self) -> tuple[int, int, int] | None:
        """(api key, version, correlation id) of the next request; None when the client
        closed or the broker is stopping."""
        while True:
            if len(self.buffer) >= 4:
                size = struct.unpack_from(">i", self.buffer)[0]
                if size < 8 or size > 1 << 20:
                    return None
                if len(self.buffer) >= 4 + size:
                    frame, self.buffer = self.buffer[4 : 4 + size], self.buffer[4 + size :]
                    key, version, cid = struct.unpack_from(">hhi", frame)
                    return key, version, cid
            chunk = self.recv()
            if not chunk:
                return None
            self.buffer += chunk

    def recv(self) -> bytes:
        while not self.broker.stopping.is_set():
            try:
                return self.sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return b""
        return b""

    def wait(self, seconds: float = CONNECTION_LIFETIME) -> None:
        """Hold the connection open, silent, until the client closes or the test ends."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and self.recv():
            pass

    def send(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except OSError:
            pass

    def api_versions(
        self, cid: int, version: int, versions: Versions = NORMAL, throttle_ms: int = 0
    ) -> bytes:
        body = ApiVersionsResponse(
            throttle_time_ms=throttle_ms,
            api_keys=[ApiVersionsResponseApiVersion(k, lo, hi) for k, (lo, hi) in versions.items()],
        )
        return answer(ResponseHeader(cid), body, 18, version)

    def metadata(self, cid: int, version: int, throttle_ms: int = 0) -> bytes:
        body = MetadataResponse(
            throttle_time_ms=throttle_ms,
            brokers=[MetadataResponseBroker(1, HOST, self.broker.port, None)],
            cluster_id="hostile",
        )
        return answer(ResponseHeader(cid), body, 3, version)


def answer(header: ResponseHeader, body: object, api_key: int, version: int) -> bytes:
    return framing.add_size_prefix(framing.encode_response(header, body, api_key, version))


def kip511_refusal(cid: int, listed: tuple[int, int]) -> bytes:
    """UNSUPPORTED_VERSION with a v0 body listing ``listed`` as ApiVersions' range."""
    return framing.add_size_prefix(struct.pack(">ihihhh", cid, 35, 1, 18, *listed))


# --- behaviours: each serves one connection ----------------------------------------------------


def huge_throttle(peer: Peer) -> None:
    """Answers everything, each time throttling the client for 2^31-1 ms (24.8 days)."""
    while (request := peer.read_request()) is not None:
        key, version, cid = request
        if key == 18:
            peer.send(peer.api_versions(cid, version, throttle_ms=MAX_THROTTLE_MS))
        elif key == 3:
            peer.send(peer.metadata(cid, version, throttle_ms=MAX_THROTTLE_MS))


def never_answers(peer: Peer) -> None:
    """Accepts, reads, never writes a byte."""
    peer.wait()


def silent_after_handshake(peer: Peer) -> None:
    """Answers ApiVersions, then nothing."""
    request = peer.read_request()
    if request is not None:
        peer.send(peer.api_versions(request[2], request[1]))
        peer.wait()


def closes_mid_frame(peer: Peer) -> None:
    """Answers ApiVersions; then writes half of the next answer and closes."""
    request = peer.read_request()
    if request is None:
        return
    peer.send(peer.api_versions(request[2], request[1]))
    request = peer.read_request()
    if request is not None:
        whole = peer.metadata(request[2], request[1])
        peer.send(whole[: len(whole) // 2])


def wrong_correlation_id(peer: Peer) -> None:
    """Answers ApiVersions with another correlation id."""
    request = peer.read_request()
    if request is not None:
        peer.send(peer.api_versions(request[2] + 1000, request[1]))
        peer.wait()


def absurd_ranges(peer: Peer) -> None:
    """Advertises ranges no client can use: Metadata 40-50, a minimum above the maximum,
    negative versions, ApiVersions up to 32767; answers Metadata anyway."""
    versions = {3: (40, 50), 0: (9, 2), 1: (-5, -1), 18: (0, 32767), 4242: (0, 32767)}
    while (request := peer.read_request()) is not None:
        key, version, cid = request
        if key == 18:
            peer.send(peer.api_versions(cid, version, versions))
        elif key == 3:
            peer.send(peer.metadata(cid, version))


def refuses_api_versions(peer: Peer) -> None:
    """Refuses every ApiVersions the KIP-511 way, listing a range that explains nothing."""
    while (request := peer.read_request()) is not None:
        peer.send(kip511_refusal(request[2], (0, 32767)))


def trickles(peer: Peer) -> None:
    """Answers ApiVersions one byte every 50 ms (about 20 s for the whole answer)."""
    request = peer.read_request()
    if request is None:
        return
    for byte in peer.api_versions(request[2], request[1], dict.fromkeys(range(60), (0, 1))):
        if peer.broker.stopping.wait(0.05):
            return
        peer.send(bytes([byte]))


def huge_frame(peer: Peer) -> None:
    """Announces a frame of 2^31-1 bytes."""
    if peer.read_request() is not None:
        peer.send(struct.pack(">i", 2**31 - 1) + b"\x00" * 64)
        peer.wait()


BEHAVIOURS: dict[str, Callable[[Peer], None]] = {
    "huge throttle": huge_throttle,
    "never answers": never_answers,
    "silent after the handshake": silent_after_handshake,
    "closes mid-frame": closes_mid_frame,
    "wrong correlation id": wrong_correlation_id,
    "absurd ApiVersions ranges": absurd_ranges,
    "refuses every ApiVersions": refuses_api_versions,
    "trickles its answer": trickles,
    "announces a 2 GiB frame": huge_frame,
}


class HostileBroker:
    """A loopback listener serving every connection with ``behaviour`` in its own thread
    (at most ``MAX_CONNECTIONS``, each for ``CONNECTION_LIFETIME`` at most)."""

    def __init__(self, behaviour: Callable[[Peer], None]) -> None:
        self.behaviour = behaviour
        self.listener = socket.create_server((HOST, 0))
        self.listener.settimeout(0.1)
        self.port: int = self.listener.getsockname()[1]
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []
        self.accepted = 0
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def bootstrap(self) -> str:
        return f"{HOST}:{self.port}"

    def _accept(self) -> None:
        while not self.stopping.is_set() and self.accepted < MAX_CONNECTIONS:
            try:
                sock, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            thread = threading.Thread(target=self._serve, args=(sock,), daemon=True)
            self.threads.append(thread)
            thread.start()

    def _serve(self, sock: socket.socket) -> None:
        sock.settimeout(0.1)
        with sock:
            try:
                self.behaviour(Peer(sock, self))
            except OSError:
                pass

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(timeout=5)
        for thread in self.threads:
            thread.join(timeout=5)
        self.listener.close()


@contextmanager
def hostile_broker(name: str) -> Iterator[HostileBroker]:
    broker = HostileBroker(BEHAVIOURS[name])
    try:
        yield broker
    finally:
        broker.stop()
