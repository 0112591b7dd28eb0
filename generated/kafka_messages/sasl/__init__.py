# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""SASL mechanisms for Kafka: PLAIN (RFC 4616), SCRAM-SHA-256/512 (RFC 5802, RFC 7677) and
OAUTHBEARER (RFC 7628, KIP-255, with KIP-342's extensions).

Pure computation, no I/O: a mechanism turns the server's messages into the client's next
ones. ``connection.ClientConnection(sasl=ScramSha512("user", "secret"))`` runs the Kafka side
of the exchange (SaslHandshake, then SaslAuthenticate or the raw tokens of KIP-43, and the
re-login of KIP-368); the server halves (``PlainServer``, ``ScramServer``,
``OAuthBearerServer``) let a test broker or a proxy authenticate clients.

Client side: ``mechanism.start()`` gives the first message and an exchange object;
``exchange.respond(server_message)`` gives the next message, or None once the client is
satisfied (for SCRAM: after it has checked the server's signature). Every bad or hostile
server message raises ``SaslError``, nothing else.
"""

from __future__ import annotations

from ._common import SaslError, SaslExchange, SaslMechanism, SaslServerExchange
from ._oauthbearer import (
    OAuthBearer,
    OAuthBearerServer,
    OAuthBearerServerExchange,
    initial_response,
    parse_initial_response,
)
from ._plain import Plain, PlainServer
from ._scram import (
    SCRAM_MAX_ITERATIONS,
    SCRAM_MIN_ITERATIONS,
    Scram,
    ScramClientExchange,
    ScramCredential,
    ScramServer,
    ScramServerExchange,
    ScramSha256,
    ScramSha512,
)

__all__ = [
    "OAuthBearer",
    "OAuthBearerServer",
    "OAuthBearerServerExchange",
    "Plain",
    "PlainServer",
    "SCRAM_MAX_ITERATIONS",
    "SCRAM_MIN_ITERATIONS",
    "SaslError",
    "SaslExchange",
    "SaslMechanism",
    "SaslServerExchange",
    "Scram",
    "ScramClientExchange",
    "ScramCredential",
    "ScramServer",
    "ScramServerExchange",
    "ScramSha256",
    "ScramSha512",
    "initial_response",
    "parse_initial_response",
]
