# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""What every mechanism shares: the error, the protocols of a client and a server
exchange, and two text helpers."""

from __future__ import annotations

from typing import Protocol


class SaslError(Exception):
    """A SASL exchange that cannot go on: a malformed or failed message from the other side."""


class SaslExchange(Protocol):
    """One client-side exchange in progress."""

    def respond(self, challenge: bytes) -> bytes | None:
        """The next message to send, or None when the client is done (authenticated as far
        as it can tell). Raises ``SaslError`` on a bad challenge."""
        ...


class SaslMechanism(Protocol):
    """A client mechanism with its credentials; ``start()`` begins a fresh exchange, so one
    mechanism object can serve several connections."""

    @property
    def name(self) -> str:
        """The mechanism name sent in SaslHandshake, e.g. ``SCRAM-SHA-512``."""
        ...

    def start(self) -> tuple[bytes, SaslExchange]:
        """The first message and the exchange that reads the server's answers."""
        ...


class SaslServerExchange(Protocol):
    """One server-side exchange in progress."""

    @property
    def complete(self) -> bool:
        """True once the client is authenticated."""
        ...

    @property
    def username(self) -> str | None:
        """The authenticated user (set once ``complete``)."""
        ...

    def respond(self, message: bytes) -> bytes:
        """The answer to a client message; raises ``SaslError`` when authentication fails."""
        ...


def utf8_text(message: bytes, what: str) -> str:
    """``message`` as UTF-8 text, or ``SaslError`` naming ``what``."""
    try:
        return message.decode("utf-8")
    except UnicodeDecodeError:
        raise SaslError(f"{what} is not UTF-8") from None


def printable(text: str) -> bool:
    """Printable ASCII without ',' (a SCRAM nonce; not empty)."""
    return bool(text) and all(0x21 <= ord(c) <= 0x7E and c != "," for c in text)
