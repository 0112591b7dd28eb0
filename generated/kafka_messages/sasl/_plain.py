# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""SASL/PLAIN (RFC 4616): the user name and password in clear (use it over TLS only)."""

from __future__ import annotations

from collections.abc import Callable

from ._common import SaslError, SaslExchange, SaslServerExchange, utf8_text


class Plain:
    """SASL/PLAIN: the user name and password in clear (use it over TLS only)."""

    def __init__(self, username: str, password: str, authzid: str = "") -> None:
        for value in (username, password, authzid):
            if "\0" in value:
                raise ValueError("PLAIN credentials cannot contain a NUL character")
        self.username = username
        self.password = password
        self.authzid = authzid

    @property
    def name(self) -> str:
        return "PLAIN"

    def start(self) -> tuple[bytes, SaslExchange]:
        message = f"{self.authzid}\0{self.username}\0{self.password}".encode()
        return message, _PlainExchange()

    def __repr__(self) -> str:  # never shows the password
        return f"Plain({self.username!r})"


class _PlainExchange:
    """PLAIN is one message; the server's (empty) answer ends it."""

    def __init__(self) -> None:
        self._done = False

    def respond(self, challenge: bytes) -> bytes | None:
        if self._done:
            raise SaslError("PLAIN: the server sent a message after authentication")
        self._done = True
        return None


class PlainServer:
    """The server side of PLAIN: ``check(username, password)`` decides."""

    def __init__(self, check: Callable[[str, str], bool]) -> None:
        self._check = check

    def start(self) -> SaslServerExchange:
        return _PlainServerExchange(self._check)


class _PlainServerExchange:
    def __init__(self, check: Callable[[str, str], bool]) -> None:
        self._check = check
        self.complete = False
        self.username: str | None = None

    def respond(self, message: bytes) -> bytes:
        if self.complete:
            raise SaslError("PLAIN: a message after authentication")
        parts = utf8_text(message, "PLAIN").split("\0")
        if len(parts) != 3 or not parts[1]:
            raise SaslError("PLAIN: expected authzid NUL username NUL password")
        authzid, username, password = parts
        if authzid not in ("", username):
            raise SaslError("PLAIN: authorization id differs from the user name")
        if not self._check(username, password):
            raise SaslError(f"PLAIN: authentication failed for {username!r}")
        self.complete = True
        self.username = username
        return b""
