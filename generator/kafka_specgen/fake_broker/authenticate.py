"""SASL authentication of one connection, as Kafka's ``SaslServerAuthenticator`` runs it.

Until the client has authenticated, its requests come here instead of the handlers:

- ApiVersions, before the handshake (again after a KIP-511 "unsupported version" answer);
- SaslHandshake: a mechanism the listener does not enable is answered with
  UNSUPPORTED_SASL_MECHANISM and the list it does, then the connection is closed; v0 is
  followed by raw SASL tokens (KIP-43), v1 by SaslAuthenticate requests (KIP-152);
- SaslAuthenticate: the mechanism's next message; a failure is answered with
  SASL_AUTHENTICATION_FAILED and Kafka's message, then the connection is closed. A raw
  token that fails closes the connection (there is no frame to say why);
- anything else closes the connection (Kafka's ``IllegalSaslStateException``).

Mechanisms: PLAIN and SCRAM-SHA-256/512, the server halves of the generated package's
``sasl`` module. The user is then ``User:NAME`` (``Channel.principal``) for the ACLs.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..api_keys import ApiKey
from .errors import ErrorCode

if TYPE_CHECKING:
    from .channel import Channel

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
SCRAM_HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
#: Kafka's answers to a failed exchange (apache/kafka ``PlainSaslServer``,
#: ``SaslServerAuthenticator.handleSaslToken``, which names nothing but the mechanism)
PLAIN_FAILED = "Authentication failed: Invalid username or password"
FAILED = (
    "Authentication failed during authentication due to invalid credentials with SASL "
    "mechanism {}"
)
#: Kafka answers a failed authentication, and closes, this late (seconds): the default of
#: ``connection.failed.authentication.delay.ms``, which slows down clients that retry
FAILURE_DELAY = 0.1

START, HANDSHAKE, AUTHENTICATE, RAW, DONE = range(5)


def scram_nonce_check(release: str | None) -> str:
    """How the release's brokers check the nonce of SCRAM's client-final-message: not at all
    before the CVE-2024-56128 fix (3.7.2, 3.8.1, 3.9.0), as a suffix until 4.0 (accepting
    librdkafka's doubled client nonce, fixed in librdkafka 2.6.1), exactly from 4.0 on."""
    if release is None:
        return "exact"
    parts = tuple(int(p) for p in release.split(".")[:3] if p.isdigit())
    if parts >= (4, 0):
        return "exact"
    if parts >= (3, 8, 1) or (3, 7, 2) <= parts < (3, 8):
        return "suffix"
    return "none"


class Credentials:
    """The users and the enabled mechanisms, with SCRAM's stored keys computed once."""

    def __init__(
        self,
        users: Mapping[str, str],
        mechanisms: tuple[str, ...],
        sasl: Any,
        nonce_check: str = "exact",
    ) -> None:
        self.users = dict(users)
        self.mechanisms = mechanisms
        self.sasl = sasl
        self.nonce_check = nonce_check
        self.scram = {
            mechanism: {
                user: sasl.ScramCredential.from_password(password, SCRAM_HASHES[mechanism])
                for user, password in self.users.items()
            }
            for mechanism in mechanisms
            if mechanism in SCRAM_HASHES
        }

    def server(self, mechanism: str, tried: list[str]) -> Any:
        """A fresh server exchange of ``mechanism``; a PLAIN exchange appends the user name
        to ``tried`` when it checks a password (a wrong one has its own message)."""
        if mechanism == "PLAIN":

            def check(username: str, password: str) -> bool:
                tried.append(username)
                known = self.users.get(username)
                return known is not None and hmac.compare_digest(known.encode(), password.encode())

            return self.sasl.PlainServer(check).start()
        stored = self.scram[mechanism]
        server = self.sasl.ScramServer(
            mechanism, SCRAM_HASHES[mechanism], stored.get, nonce_check=self.nonce_check
        )
        return server.start()


class Authenticator:
    """One connection's SASL state; ``done`` once the client is authenticated."""

    def __init__(self, credentials: Credentials) -> None:
        self.credentials = credentials
        self.state = START
        self.mechanism = ""
        self.exchange: Any = None
        self.tried: list[str] = []

    @property
    def done(self) -> bool:
        return self.state == DONE

    def handle(self, channel: Channel, event: Any) -> None:
        api_key = getattr(event, "api_key", None)
        if api_key is None:
            self._token(channel, event.token)
        elif not self._advertised(channel, event):
            channel.close()  # as Kafka's request parsing, for a version it does not know
        elif api_key == ApiKey.API_VERSIONS and self.state == START:
            channel.answer_api_versions(event)  # the release's answer, features included
            if event.request is not None and not self._too_new(channel, event):
                self.state = HANDSHAKE
        elif api_key == ApiKey.SASL_HANDSHAKE and self.state in (START, HANDSHAKE):
            self._handshake(channel, event)
        elif api_key == ApiKey.SASL_AUTHENTICATE and self.state == AUTHENTICATE:
            self._authenticate(channel, event)
        else:
            channel.close()

    # --- the steps ----------------------------------------------------------------------

    def _handshake(self, channel: Channel, event: Any) -> None:
        mechanism = event.request.mechanism
        enabled = list(self.credentials.mechanisms)
        if mechanism not in enabled:
            code = ErrorCode.UNSUPPORTED_SASL_MECHANISM
            self._respond(channel, event, FAILURE_DELAY, error_code=code, mechanisms=enabled)
            channel.closing = True
            return
        self.mechanism = mechanism
        self.exchange = self.credentials.server(mechanism, self.tried)
        self.state = RAW if event.api_version == 0 else AUTHENTICATE
        self._respond(channel, event, 0.0, error_code=ErrorCode.NONE, mechanisms=enabled)

    def _authenticate(self, channel: Channel, event: Any) -> None:
        reply = self._step(event.request.auth_bytes)
        if reply is None:
            self._respond(
                channel,
                event,
                FAILURE_DELAY,
                error_code=ErrorCode.SASL_AUTHENTICATION_FAILED,
                error_message=self._failure(),
                auth_bytes=b"",
            )
            channel.closing = True
            return
        self._respond(
            channel,
            event,
            0.0,
            error_code=ErrorCode.NONE,
            error_message=None,
            auth_bytes=reply,
            session_lifetime_ms=0,
        )
        if self.exchange.complete:
            self._finish(channel)

    def _token(self, channel: Channel, token: bytes) -> None:
        if self.state != RAW:
            channel.close()
            return
        reply = self._step(token)
        if reply is None:  # nothing to say why: close (after Kafka's delay)
            channel.closing = True
            channel.server.loop.call_at(time.monotonic() + FAILURE_DELAY, channel.close)
            return
        channel.conn.send_sasl_token(reply, last=self.exchange.complete)
        channel.take_output(None)
        if self.exchange.complete:
            self._finish(channel)

    def _step(self, message: bytes) -> bytes | None:
        """The mechanism's answer, or None when authentication failed."""
        try:
            reply: bytes = self.exchange.respond(message)
        except self.credentials.sasl.SaslError:
            return None
        return reply

    def _failure(self) -> str:
        if self.tried:  # PLAIN with a wrong user name or password
            return PLAIN_FAILED
        return FAILED.format(self.mechanism)

    def _finish(self, channel: Channel) -> None:
        self.state = DONE
        channel.principal = f"User:{self.exchange.username}"
        channel.server.loop.cancel(channel.deadline)
        channel.deadline = None

    # --- helpers ------------------------------------------------------------------------

    @staticmethod
    def _advertised(channel: Channel, event: Any) -> bool:
        if event.api_key == ApiKey.API_VERSIONS:
            return True
        advertised = channel.server.routes.versions.get(event.api_key)
        return advertised is not None and advertised[0] <= event.api_version <= advertised[1]

    @staticmethod
    def _too_new(channel: Channel, event: Any) -> bool:
        own = channel.server.routes.versions.get(ApiKey.API_VERSIONS)
        return own is not None and event.api_version > own[1]

    @staticmethod
    def _respond(channel: Channel, event: Any, delay: float, **fields: Any) -> None:
        server = channel.server
        cls = server.registry.API_KEYS[event.api_key].response
        response = server.shapes.fit(server.shapes.make(cls, **fields), event.api_version)
        channel.conn.send_response(event, response)
        channel.take_output(event, delay)
