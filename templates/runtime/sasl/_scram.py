"""SCRAM-SHA-256/512 (RFC 5802, RFC 7677), as Kafka runs it.

Like Kafka's own client, SCRAM sends names and passwords as UTF-8 without SASLprep
(RFC 4013) normalisation: a broker stores the credentials the same way, so normalising here
would break non-ASCII passwords that work with every Kafka client.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from collections.abc import Callable, Mapping

from ._common import SaslError, SaslExchange, printable, utf8_text

#: Kafka refuses SCRAM credentials with fewer iterations (ScramMechanism.minIterations).
SCRAM_MIN_ITERATIONS = 4096
#: The most iterations Kafka lets an administrator set (KIP-554). A server asking for more
#: could make the client spin for minutes on PBKDF2; such a request is refused.
SCRAM_MAX_ITERATIONS = 16384


class Scram:
    """A SCRAM client mechanism (RFC 5802); ``ScramSha256`` and ``ScramSha512`` are the two
    Kafka knows. Any hashlib hash works (``mechanism="SCRAM-SHA-1", hash_name="sha1"`` runs
    RFC 5802's own example).

    ``nonce`` fixes the client nonce (for test vectors; the default draws a fresh random
    one per exchange). ``extensions`` are Kafka's SCRAM extensions, sent after the nonce of
    the first message, e.g. ``{"tokenauth": "true"}`` for delegation tokens (KIP-48).
    """

    MECHANISM = ""
    HASH_NAME = ""

    def __init__(
        self,
        username: str,
        password: str,
        *,
        nonce: str | None = None,
        extensions: Mapping[str, str] | None = None,
        min_iterations: int = SCRAM_MIN_ITERATIONS,
        max_iterations: int = SCRAM_MAX_ITERATIONS,
        mechanism: str | None = None,
        hash_name: str | None = None,
    ) -> None:
        self.hash_name = hash_name or self.HASH_NAME
        self._name = mechanism or self.MECHANISM
        if not self._name:
            raise ValueError("a SCRAM mechanism needs a name, e.g. SCRAM-SHA-512")
        hashlib.new(self.hash_name)  # an unknown hash fails here, not in the middle of a login
        if nonce is not None and not printable(nonce):
            raise ValueError("a SCRAM nonce is printable ASCII without ','")
        for key, value in (extensions or {}).items():
            if not (key.isascii() and key.isalnum()) or "," in value or "=" in value:
                raise ValueError(f"bad SCRAM extension {key!r}={value!r}")
        self.username = username
        self.password = password
        self.nonce = nonce
        self.extensions = dict(extensions or {})
        self.min_iterations = min_iterations
        self.max_iterations = max_iterations

    @property
    def name(self) -> str:
        return self._name

    def start(self) -> tuple[bytes, SaslExchange]:
        exchange = ScramClientExchange(self)
        return exchange.first_message(), exchange

    def __repr__(self) -> str:  # never shows the password
        return f"{type(self).__name__}({self.username!r})"


class ScramSha256(Scram):
    """SCRAM-SHA-256 (RFC 7677)."""

    MECHANISM = "SCRAM-SHA-256"
    HASH_NAME = "sha256"


class ScramSha512(Scram):
    """SCRAM-SHA-512 (Kafka's other SCRAM mechanism: RFC 7677's rules with SHA-512)."""

    MECHANISM = "SCRAM-SHA-512"
    HASH_NAME = "sha512"


# The channel-binding header: this client supports none and says so ("n"), no authzid.
_GS2_HEADER = "n,,"


class ScramClientExchange:
    """The client side of one SCRAM exchange: client-first, client-final, then the server's
    signature is checked (a server that does not know the password cannot forge it)."""

    def __init__(self, mechanism: Scram) -> None:
        self._mechanism = mechanism
        self._nonce = mechanism.nonce or secrets.token_urlsafe(24)
        extensions = "".join(f",{k}={v}" for k, v in mechanism.extensions.items())
        self._first_bare = f"n={_saslname(mechanism.username)},r={self._nonce}{extensions}"
        self._server_signature: bytes | None = None
        self._state = "first"

    def first_message(self) -> bytes:
        return (_GS2_HEADER + self._first_bare).encode()

    def respond(self, challenge: bytes) -> bytes | None:
        if self._state == "first":
            self._state = "final"
            return self._client_final(challenge)
        if self._state == "final":
            self._state = "done"
            self._check_server_final(challenge)
            return None
        raise SaslError("SCRAM: the server sent a message after authentication")

    def _client_final(self, challenge: bytes) -> bytes:
        mech = self._mechanism
        server_first = utf8_text(challenge, "SCRAM server-first-message")
        attrs = _attributes(server_first, "server-first-message")
        if "m" in attrs:
            raise SaslError("SCRAM: the server requires an extension this client lacks")
        nonce, salt_text, iterations_text = (attrs.get(k) for k in ("r", "s", "i"))
        if nonce is None or salt_text is None or iterations_text is None:
            raise SaslError("SCRAM: server-first-message lacks r=, s= or i=")
        if not nonce.startswith(self._nonce) or len(nonce) == len(self._nonce):
            raise SaslError("SCRAM: the server nonce does not extend the client nonce")
        if not printable(nonce):
            raise SaslError("SCRAM: the server nonce has characters outside printable ASCII")
        salt = _b64decode(salt_text, "salt")
        if not iterations_text.isdigit() or not iterations_text.isascii():
            raise SaslError(f"SCRAM: iteration count {iterations_text!r} is not a number")
        iterations = int(iterations_text)
        if not mech.min_iterations <= iterations <= mech.max_iterations:
            raise SaslError(
                f"SCRAM: the server asks for {iterations} iterations, outside "
                f"{mech.min_iterations}..{mech.max_iterations}"
            )
        salted = hashlib.pbkdf2_hmac(mech.hash_name, mech.password.encode(), salt, iterations)
        channel = base64.b64encode(_GS2_HEADER.encode()).decode()
        final_bare = f"c={channel},r={nonce}"
        auth_message = f"{self._first_bare},{server_first},{final_bare}".encode()
        keys = _scram_keys(mech.hash_name, salted)
        signature = _hmac(mech.hash_name, keys.stored_key, auth_message)
        proof = bytes(a ^ b for a, b in zip(keys.client_key, signature))
        self._server_signature = _hmac(mech.hash_name, keys.server_key, auth_message)
        return f"{final_bare},p={base64.b64encode(proof).decode()}".encode()

    def _check_server_final(self, challenge: bytes) -> None:
        attrs = _attributes(utf8_text(challenge, "SCRAM server-final-message"), "server-final")
        if "e" in attrs:
            raise SaslError(f"SCRAM: the server refused: {attrs['e']}")
        verifier = attrs.get("v")
        if verifier is None:
            raise SaslError("SCRAM: server-final-message has neither v= nor e=")
        expected = self._server_signature
        if expected is None or not hmac.compare_digest(_b64decode(verifier, "v"), expected):
            raise SaslError("SCRAM: wrong server signature (the server does not know the password)")


class ScramCredential:
    """What a SCRAM server stores for a user (RFC 5802 section 3): never the password."""

    __slots__ = ("salt", "iterations", "stored_key", "server_key")

    def __init__(self, salt: bytes, iterations: int, stored_key: bytes, server_key: bytes) -> None:
        self.salt = salt
        self.iterations = iterations
        self.stored_key = stored_key
        self.server_key = server_key

    @classmethod
    def from_password(
        cls, password: str, hash_name: str, salt: bytes | None = None, iterations: int = 4096
    ) -> ScramCredential:
        salt = secrets.token_bytes(16) if salt is None else salt
        salted = hashlib.pbkdf2_hmac(hash_name, password.encode(), salt, iterations)
        keys = _scram_keys(hash_name, salted)
        return cls(salt, iterations, keys.stored_key, keys.server_key)


#: How a SCRAM server checks the nonce of the client-final-message: RFC 5802's equality,
#: Kafka 3.7.2-3.9's suffix (librdkafka before 2.6.1 sends the client nonce twice), or not at
#: all (Kafka before the CVE-2024-56128 fix).
NONCE_CHECKS = ("exact", "suffix", "none")


class ScramServer:
    """The server side of SCRAM: ``credentials(username)`` gives a ``ScramCredential`` or
    None for an unknown user. ``nonce`` fixes the server's nonce part (for tests);
    ``nonce_check`` is one of ``NONCE_CHECKS`` (a test broker emulating an older Kafka)."""

    def __init__(
        self,
        mechanism: str,
        hash_name: str,
        credentials: Callable[[str], ScramCredential | None],
        *,
        nonce: str | None = None,
        nonce_check: str = "exact",
    ) -> None:
        hashlib.new(hash_name)
        if nonce_check not in NONCE_CHECKS:
            raise ValueError(f"nonce_check is one of {', '.join(NONCE_CHECKS)}: {nonce_check!r}")
        self.mechanism = mechanism
        self.hash_name = hash_name
        self.nonce_check = nonce_check
        self._credentials = credentials
        self._nonce = nonce

    def start(self) -> ScramServerExchange:
        return ScramServerExchange(self, self._nonce or secrets.token_urlsafe(24))


class ScramServerExchange:
    """One server-side SCRAM exchange; ``extensions`` holds the client's (e.g. tokenauth)."""

    def __init__(self, server: ScramServer, nonce: str) -> None:
        self._server = server
        self._server_nonce = nonce
        self._state = "first"
        self.complete = False
        self.username: str | None = None
        self.extensions: dict[str, str] = {}
        self._expect: tuple[str, str, str, ScramCredential] | None = None

    def respond(self, message: bytes) -> bytes:
        if self._state == "first":
            self._state = "final"
            return self._server_first(utf8_text(message, "SCRAM client-first-message"))
        if self._state == "final":
            self._state = "done"
            return self._server_final(utf8_text(message, "SCRAM client-final-message"))
        raise SaslError("SCRAM: a message after authentication")

    def _server_first(self, text: str) -> bytes:
        if not text.startswith("n,"):
            raise SaslError("SCRAM: only the 'n' channel-binding flag is supported")
        authzid, sep, bare = text[2:].partition(",")
        if not sep or (authzid and not authzid.startswith("a=")):
            raise SaslError("SCRAM: malformed GS2 header")
        gs2_header = text[: len(text) - len(bare)]
        fields = bare.split(",")
        if len(fields) < 2 or not fields[0].startswith("n=") or not fields[1].startswith("r="):
            raise SaslError("SCRAM: client-first-message must start with n= and r=")
        username = _unsaslname(fields[0][2:])
        client_nonce = fields[1][2:]
        if not client_nonce or not printable(client_nonce):
            raise SaslError("SCRAM: bad client nonce")
        for extension in fields[2:]:
            key, eq, value = extension.partition("=")
            if not eq:
                raise SaslError(f"SCRAM: malformed extension {extension!r}")
            self.extensions[key] = value
        credential = self._server._credentials(username)
        if credential is None:
            raise SaslError(f"SCRAM: unknown user {username!r}")
        nonce = client_nonce + self._server_nonce
        salt = base64.b64encode(credential.salt).decode()
        server_first = f"r={nonce},s={salt},i={credential.iterations}"
        self._expect = (gs2_header, f"{bare},{server_first}", nonce, credential)
        self.username = username
        return server_first.encode()

    def _server_final(self, text: str) -> bytes:
        assert self._expect is not None
        gs2_header, first_part, nonce, credential = self._expect
        without_proof, sep, proof_text = text.rpartition(",p=")
        if not sep:
            raise SaslError("SCRAM: client-final-message lacks p=")
        attrs = _attributes(without_proof, "client-final-message")
        if attrs.get("c") != base64.b64encode(gs2_header.encode()).decode():
            raise SaslError("SCRAM: channel binding does not match the GS2 header")
        sent, check = attrs.get("r") or "", self._server.nonce_check
        if (check == "exact" and sent != nonce) or (check == "suffix" and not sent.endswith(nonce)):
            raise SaslError("SCRAM: nonce mismatch")
        hash_name = self._server.hash_name
        auth_message = f"{first_part},{without_proof}".encode()
        signature = _hmac(hash_name, credential.stored_key, auth_message)
        proof = _b64decode(proof_text, "p")
        if len(proof) != len(signature):
            raise SaslError("SCRAM: proof of the wrong length")
        client_key = bytes(a ^ b for a, b in zip(proof, signature))
        if not hmac.compare_digest(
            hashlib.new(hash_name, client_key).digest(), credential.stored_key
        ):
            raise SaslError(f"SCRAM: authentication failed for {self.username!r}")
        self.complete = True
        server_signature = _hmac(hash_name, credential.server_key, auth_message)
        return b"v=" + base64.b64encode(server_signature)


class _Keys:
    __slots__ = ("client_key", "stored_key", "server_key")

    def __init__(self, client_key: bytes, stored_key: bytes, server_key: bytes) -> None:
        self.client_key = client_key
        self.stored_key = stored_key
        self.server_key = server_key


def _scram_keys(hash_name: str, salted_password: bytes) -> _Keys:
    client_key = _hmac(hash_name, salted_password, b"Client Key")
    stored_key = hashlib.new(hash_name, client_key).digest()
    server_key = _hmac(hash_name, salted_password, b"Server Key")
    return _Keys(client_key, stored_key, server_key)


def _hmac(hash_name: str, key: bytes, message: bytes) -> bytes:
    return hmac.new(key, message, hash_name).digest()


def _attributes(text: str, what: str) -> dict[str, str]:
    """``a=1,b=2`` -> ``{"a": "1", "b": "2"}``; attribute names are single letters."""
    attrs: dict[str, str] = {}
    for part in text.split(","):
        key, eq, value = part.partition("=")
        if not eq or len(key) != 1 or not key.isalpha():
            raise SaslError(f"SCRAM: malformed {what}")
        attrs.setdefault(key, value)
    return attrs


def _b64decode(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise SaslError(f"SCRAM: {what} is not base64") from None


def _saslname(name: str) -> str:
    """RFC 5802's escaping of a user name: '=' and ',' would end the attribute."""
    return name.replace("=", "=3D").replace(",", "=2C")


def _unsaslname(text: str) -> str:
    rest = text.replace("=2C", "").replace("=3D", "")
    if "=" in rest:
        raise SaslError("SCRAM: bad '=' escape in the user name")
    return text.replace("=2C", ",").replace("=3D", "=")
