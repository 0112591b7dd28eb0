# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""A Kafka connection without I/O: bytes and time in, events out (h11 and aioquic style).

The caller owns the socket and the clock; this module owns the protocol::

    conn = ClientConnection(client_id="app", client_software=("app", "1.0"))
    conn.start(now)                               # queues ApiVersions
    sock.sendall(conn.data_to_send())
    for event in conn.receive_data(sock.recv(65536), now):   # b"" = the peer closed
        ...                                       # Ready, Response, Throttled, ...
    cid = conn.send(MetadataRequest(topics=None), now)       # the newest common version
    # wake up at conn.next_deadline() and call conn.handle_timer(now)

After every call, write out ``data_to_send()``: a paused request is released by
``receive_data`` or ``handle_timer``, not by ``send``.

``ClientConnection`` runs the ApiVersions handshake (KIP-35) with the KIP-511 downgrade,
the optional SASL exchange (KIP-43, KIP-152), version choice per request (KIP-97's local
"obsolete broker" error), correlation ids, the in-flight limit, KIP-219 throttling and
per-request deadlines. ``ServerConnection`` is the broker side, for proxies and test brokers.

Anything the peer sends that breaks the protocol ends the connection with one
``ConnectionFailed`` event; ``receive_data`` never raises on what the peer sends. Misuse by
the caller (sending before ``Ready`` or after ``close()``) raises ``LocalProtocolError``;
sending after the peer ended the connection raises ``ConnectionFailedError`` with the cause.
Both are ``ClientError``s.

Sending while paused queues: ``send`` always takes the request (it has a correlation id at
once) and writes it when the in-flight limit and the throttle allow. A request's deadline
starts when ``send`` takes it, so no pause holds a request past its deadline: a request
still queued then ends alone (``RequestTimedOut(written=False)``), a written one ends the
connection.
"""

from __future__ import annotations

from ..negotiation import NoCommonVersionError
from ..errors import UnsupportedVersionError
from ._backoff import ReconnectBackoff
from ._client import ClientConnection, ConnectionState
from ._errors import ClientError, ConnectionFailedError, LocalProtocolError, RequestTimedOutError
from ._events import (
    ConnectionClosed,
    ConnectionFailed,
    Event,
    FailureCause,
    Features,
    Ready,
    Reauthenticated,
    ReleaseGuess,
    Request,
    RequestReceived,
    RequestTimedOut,
    Response,
    SaslTokenReceived,
    Throttled,
    TypedRequest,
)
from ._handshake import Handshake, HandshakeState
from ._policy import (
    CLIENT_THROTTLE_FROM,
    DEFAULT_POLICY,
    expects_response,
    guess_broker_release,
    guess_release,
)
from ._server import ServerConnection

__all__ = [
    "CLIENT_THROTTLE_FROM",
    "DEFAULT_POLICY",
    "ClientConnection",
    "ClientError",
    "ConnectionClosed",
    "ConnectionFailed",
    "ConnectionFailedError",
    "ConnectionState",
    "Event",
    "FailureCause",
    "Features",
    "Handshake",
    "HandshakeState",
    "LocalProtocolError",
    "NoCommonVersionError",
    "Ready",
    "Reauthenticated",
    "ReconnectBackoff",
    "ReleaseGuess",
    "Request",
    "RequestReceived",
    "RequestTimedOut",
    "RequestTimedOutError",
    "Response",
    "SaslTokenReceived",
    "ServerConnection",
    "Throttled",
    "TypedRequest",
    "UnsupportedVersionError",
    "expects_response",
    "guess_broker_release",
    "guess_release",
]
