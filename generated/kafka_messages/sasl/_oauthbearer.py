# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""SASL/OAUTHBEARER (RFC 7628) as Kafka runs it (KIP-255), with SASL extensions (KIP-342).

The client's one message is RFC 7628's initial response::

    n,[a=authzid],^Aauth=Bearer <token>^A[key=value^A]...^A      (^A is the byte 0x01)

The server answers an empty message on success. On a bad token it sends an error (a JSON
object, RFC 7628 section 3.2.2); the client then sends a lone ``^A`` and the server fails the
login. The token comes from a callback, called at every login, so a re-login (KIP-368)
sends a fresh token.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping

from ._common import SaslError, SaslExchange, utf8_text

SEPARATOR = "\x01"
# The grammar Kafka checks (OAuthBearerClientInitialResponse): an RFC 6750 b64token, and
# KIP-342's extension names and values; "auth" is the token's own key.
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
EXTENSION_KEY_PATTERN = re.compile(r"[A-Za-z]+")
EXTENSION_VALUE_PATTERN = re.compile(r"[\x21-\x7E \t\r\n]+")

TokenCallback = Callable[[], str]
Extensions = Mapping[str, str]


def check_extensions(extensions: Extensions) -> dict[str, str]:
    """The extensions, checked against KIP-342's grammar (``ValueError`` otherwise)."""
    checked: dict[str, str] = {}
    for key, value in extensions.items():
        if key == "auth" or not EXTENSION_KEY_PATTERN.fullmatch(key):
            raise ValueError(f"OAUTHBEARER extension name {key!r}: letters only, not 'auth'")
        if not EXTENSION_VALUE_PATTERN.fullmatch(value):
            raise ValueError(f"OAUTHBEARER extension {key!r}: a value of printable ASCII")
        checked[key] = value
    return checked


class OAuthBearer:
    """The OAUTHBEARER client mechanism. ``token`` is a callback that returns a current
    access token (a JWT, usually); it is called at each login and re-login, so it should
    hand out a cached token until that nears its expiry. ``extensions`` (KIP-342) go with
    the token, e.g. ``{"logicalCluster": "lkc-1", "identityPoolId": "pool-2"}`` for
    Confluent Cloud. ``authzid`` is the optional authorization id."""

    def __init__(
        self,
        token: TokenCallback,
        *,
        extensions: Extensions | None = None,
        authzid: str = "",
    ) -> None:
        if "," in authzid or "=" in authzid:
            raise ValueError("an OAUTHBEARER authorization id cannot hold ',' or '='")
        self.token = token
        self.extensions = check_extensions(extensions or {})
        self.authzid = authzid

    @property
    def name(self) -> str:
        return "OAUTHBEARER"

    def start(self) -> tuple[bytes, SaslExchange]:
        try:
            token = self.token()
        except Exception as exc:  # noqa: BLE001 - the callback's failure ends the login
            raise SaslError(f"OAUTHBEARER: the token callback failed: {exc}") from exc
        if not isinstance(token, str) or not TOKEN_PATTERN.fullmatch(token):
            raise SaslError("OAUTHBEARER: the token callback gave no valid bearer token")
        return initial_response(token, self.extensions, self.authzid), _OAuthBearerExchange()

    def __repr__(self) -> str:  # never shows a token
        return f"OAuthBearer(extensions={sorted(self.extensions)!r})"


def initial_response(token: str, extensions: Extensions, authzid: str = "") -> bytes:
    """RFC 7628's client initial response, laid out as Kafka's Java client writes it."""
    pairs = "".join(f"{SEPARATOR}{key}={value}" for key, value in extensions.items())
    gs2 = f"n,{'a=' + authzid if authzid else ''},"
    return f"{gs2}{SEPARATOR}auth=Bearer {token}{pairs}{SEPARATOR}{SEPARATOR}".encode()


class _OAuthBearerExchange:
    def __init__(self) -> None:
        self._state = "sent"

    def respond(self, challenge: bytes) -> bytes | None:
        if self._state == "sent":
            if not challenge:
                self._state = "done"
                return None
            # The server's error: acknowledge it with a lone separator (RFC 7628 3.2.3);
            # the server then fails the login, and its answer says why.
            self._state = "refused"
            return SEPARATOR.encode()
        raise SaslError("OAUTHBEARER: the server sent a message after the login ended")


class OAuthBearerServer:
    """The server side, for test brokers and proxies: ``validate(token, extensions)`` gives
    the principal's name, or None to refuse."""

    def __init__(self, validate: Callable[[str, dict[str, str]], str | None]) -> None:
        self._validate = validate

    def start(self) -> OAuthBearerServerExchange:
        return OAuthBearerServerExchange(self._validate)


class OAuthBearerServerExchange:
    """One server-side login; ``extensions`` holds the client's once it is read."""

    def __init__(self, validate: Callable[[str, dict[str, str]], str | None]) -> None:
        self._validate = validate
        self._state = "first"
        self.complete = False
        self.username: str | None = None
        self.extensions: dict[str, str] = {}

    def respond(self, message: bytes) -> bytes:
        if self._state == "refused":
            self._state = "done"
            raise SaslError("OAUTHBEARER: authentication failed (invalid token)")
        if self._state != "first":
            raise SaslError("OAUTHBEARER: a message after the login")
        self._state = "done"
        token, self.extensions = parse_initial_response(message)
        principal = self._validate(token, dict(self.extensions))
        if principal is None:
            self._state = "refused"
            error = {"status": "invalid_token", "scope": "", "openid-configuration": ""}
            return json.dumps(error, separators=(",", ":")).encode()
        self.complete = True
        self.username = principal
        return b""


def parse_initial_response(message: bytes) -> tuple[str, dict[str, str]]:
    """(token, extensions) of a client initial response; ``SaslError`` when malformed."""
    text = utf8_text(message, "OAUTHBEARER client message")
    gs2, sep, rest = text.partition(SEPARATOR)
    if not sep or not gs2.startswith("n,") or not gs2.endswith(","):
        raise SaslError("OAUTHBEARER: the message must start with the GS2 header 'n,...,'")
    if not rest.endswith(SEPARATOR + SEPARATOR):
        raise SaslError("OAUTHBEARER: the message must end with two separators")
    token: str | None = None
    extensions: dict[str, str] = {}
    for pair in rest[:-2].split(SEPARATOR):
        key, eq, value = pair.partition("=")
        if not eq:
            raise SaslError(f"OAUTHBEARER: malformed key-value pair {pair[:40]!r}")
        if key == "auth":
            scheme, _, token = value.partition(" ")
            if scheme.lower() != "bearer" or not TOKEN_PATTERN.fullmatch(token):
                raise SaslError("OAUTHBEARER: auth= must be 'Bearer <token>'")
        elif EXTENSION_KEY_PATTERN.fullmatch(key) and EXTENSION_VALUE_PATTERN.fullmatch(value):
            extensions[key] = value
        else:
            raise SaslError(f"OAUTHBEARER: malformed extension {key[:40]!r}")
    if token is None:
        raise SaslError("OAUTHBEARER: the message holds no auth=Bearer token")
    return token, extensions
