"""``sasl``: SCRAM against the RFCs' own exchanges, kafka-python's SCRAM client as a peer,
PLAIN's message, and hostile server messages (only ``SaslError`` may come out)."""

from __future__ import annotations

import base64
import hashlib
import hmac
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import genpkg


@pytest.fixture(scope="module")
def sasl(tmp_path_factory: pytest.TempPathFactory) -> Any:
    out: Path = tmp_path_factory.mktemp("sasl")
    pkg = genpkg.generate_package([genpkg.SPECS], out, "sasl_small")
    return genpkg.import_module(pkg.__name__, "sasl")


# RFC 7677 section 3: SCRAM-SHA-256, user "user", password "pencil".
RFC7677 = {
    "hash": "sha256",
    "client_nonce": "rOprNGfwEbeRWgbNEkqO",
    "server_nonce": "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0",
    "salt": "W22ZaJ0SNY7soEsUEjb6gQ==",
    "client_first": b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
    "server_first": b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
    b"s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
    "client_final": b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
    b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
    "server_final": b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
}

# RFC 5802 section 5: the same exchange with SCRAM-SHA-1 (Kafka has no SHA-1; the
# mechanism code is hash-generic, so this checks it against a second published vector).
RFC5802 = {
    "hash": "sha1",
    "client_nonce": "fyko+d2lbbFgONRv9qkxdawL",
    "server_nonce": "3rfcNHYJY1ZVvWVs7j",
    "salt": "QSXCR+Q6sek8bf92",
    "client_first": b"n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL",
    "server_first": b"r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096",
    "client_final": b"c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,"
    b"p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=",
    "server_final": b"v=rmF9pqV8S7suAoZWja4dJRkFsKQ=",
}

VECTORS = pytest.mark.parametrize("v", [RFC7677, RFC5802], ids=["rfc7677", "rfc5802"])


def client_for(sasl: Any, v: dict[str, Any], password: str = "pencil") -> Any:
    name = "SCRAM-" + v["hash"].upper().replace("SHA", "SHA-")
    return sasl.Scram(
        "user", password, nonce=v["client_nonce"], mechanism=name, hash_name=v["hash"]
    )


def server_for(sasl: Any, v: dict[str, Any], password: str = "pencil") -> Any:
    salt = base64.b64decode(v["salt"])
    credential = sasl.ScramCredential.from_password(password, v["hash"], salt, 4096)
    lookup = {"user": credential}.get
    return sasl.ScramServer("SCRAM", v["hash"], lookup, nonce=v["server_nonce"])


@VECTORS
def test_scram_client_reproduces_the_rfc_exchange(sasl: Any, v: dict[str, Any]) -> None:
    first, exchange = client_for(sasl, v).start()
    assert first == v["client_first"]
    assert exchange.respond(v["server_first"]) == v["client_final"]
    assert exchange.respond(v["server_final"]) is None  # the server's signature checks out
    with pytest.raises(sasl.SaslError):
        exchange.respond(b"v=again")


@VECTORS
def test_scram_server_reproduces_the_rfc_exchange(sasl: Any, v: dict[str, Any]) -> None:
    exchange = server_for(sasl, v).start()
    assert exchange.respond(v["client_first"]) == v["server_first"]
    assert not exchange.complete
    assert exchange.respond(v["client_final"]) == v["server_final"]
    assert exchange.complete and exchange.username == "user"


@VECTORS
def test_scram_server_refuses_a_wrong_proof(sasl: Any, v: dict[str, Any]) -> None:
    exchange = server_for(sasl, v, password="not pencil").start()
    exchange.respond(v["client_first"])
    with pytest.raises(sasl.SaslError, match="authentication failed"):
        exchange.respond(v["client_final"])
    assert not exchange.complete


@VECTORS
def test_scram_client_refuses_a_forged_server_signature(sasl: Any, v: dict[str, Any]) -> None:
    _, exchange = client_for(sasl, v).start()
    exchange.respond(v["server_first"])
    forged = b"v=" + base64.b64encode(b"\x00" * hashlib.new(v["hash"]).digest_size)
    with pytest.raises(sasl.SaslError, match="signature"):
        exchange.respond(forged)


def scram_by_hand(hash_name: str, password: str, first_bare: str, server_first: str, salt: bytes):
    """RFC 5802 section 3, written out again: (client-final, server-final)."""
    nonce = dict(a.split("=", 1) for a in server_first.split(","))["r"]
    iterations = int(dict(a.split("=", 1) for a in server_first.split(","))["i"])
    salted = hashlib.pbkdf2_hmac(hash_name, password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", hash_name).digest()
    stored_key = hashlib.new(hash_name, client_key).digest()
    without_proof = f"c=biws,r={nonce}"
    auth = f"{first_bare},{server_first},{without_proof}".encode()
    signature = hmac.new(stored_key, auth, hash_name).digest()
    proof = bytes(x ^ y for x, y in zip(client_key, signature))
    server_key = hmac.new(salted, b"Server Key", hash_name).digest()
    server_signature = hmac.new(server_key, auth, hash_name).digest()
    return (
        f"{without_proof},p={base64.b64encode(proof).decode()}".encode(),
        b"v=" + base64.b64encode(server_signature),
    )


@pytest.mark.parametrize("cls, hash_name", [("ScramSha256", "sha256"), ("ScramSha512", "sha512")])
def test_kafka_mechanisms_against_the_formulas(sasl: Any, cls: str, hash_name: str) -> None:
    mechanism = getattr(sasl, cls)("alice", "s3cret", nonce="clientNONCE")
    assert mechanism.name == {"sha256": "SCRAM-SHA-256", "sha512": "SCRAM-SHA-512"}[hash_name]
    first, exchange = mechanism.start()
    assert first == b"n,,n=alice,r=clientNONCE"
    salt = b"0123456789abcdef"
    server_first = f"r=clientNONCEserver,s={base64.b64encode(salt).decode()},i=8192"
    final, server_final = scram_by_hand(
        hash_name, "s3cret", "n=alice,r=clientNONCE", server_first, salt
    )
    assert exchange.respond(server_first.encode()) == final
    assert exchange.respond(server_final) is None


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_kafka_python_scram_client_logs_in_to_our_server(sasl: Any, mechanism: str) -> None:
    from kafka.net.sasl.scram import ScramClient

    hash_name = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}[mechanism]
    credential = sasl.ScramCredential.from_password("pw", hash_name, iterations=4096)
    server = sasl.ScramServer(mechanism, hash_name, {"bob": credential}.get).start()
    peer = ScramClient("bob", "pw", mechanism)
    server_first = server.respond(peer.first_message())
    peer.process_server_first_message(server_first)
    server_final = server.respond(peer.final_message())
    peer.process_server_final_message(server_final)  # raises on a wrong server signature
    assert server.complete and server.username == "bob"


@pytest.mark.parametrize("name", ["ScramSha256", "ScramSha512"])
def test_our_client_and_server_agree_and_escape_names(sasl: Any, name: str) -> None:
    user = "a,b=c"
    client = getattr(sasl, name)(user, "pässwörd", extensions={"tokenauth": "true"})
    hash_name = client.hash_name
    credential = sasl.ScramCredential.from_password("pässwörd", hash_name)
    server = sasl.ScramServer(client.name, hash_name, {user: credential}.get).start()
    first, exchange = client.start()
    assert first.startswith(b"n,,n=a=2Cb=3Dc,r=") and first.endswith(b",tokenauth=true")
    final = exchange.respond(server.respond(first))
    assert exchange.respond(server.respond(final)) is None
    assert server.username == user and server.extensions == {"tokenauth": "true"}
    # every exchange draws a new nonce
    assert client.start()[0] != first


@pytest.mark.parametrize(
    "server_first, match",
    [
        (b"r=rOprNGfwEbeRWgbNEkqO,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", "extend"),
        (b"r=someoneelse,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", "extend"),
        (b"r=rOprNGfwEbeRWgbNEkqOxyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4095", "4095 iterations"),
        (b"r=rOprNGfwEbeRWgbNEkqOxyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=2000000000", "iterations"),
        (b"r=rOprNGfwEbeRWgbNEkqOxyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=-1", "not a number"),
        (b"r=rOprNGfwEbeRWgbNEkqOxyz,s=not*base64,i=4096", "base64"),
        (b"m=ext,r=rOprNGfwEbeRWgbNEkqOxyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", "extension"),
        (b"r=rOprNGfwEbeRWgbNEkqOxyz,i=4096", "lacks"),
        (b"r=rOprNGfwEbeRWgbNEkqOx\x01,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", "printable"),
        (b"\xff\xfe", "UTF-8"),
        (b"garbage", "malformed"),
    ],
)
def test_bad_server_first_messages(sasl: Any, server_first: bytes, match: str) -> None:
    _, exchange = client_for(sasl, RFC7677).start()
    with pytest.raises(sasl.SaslError, match=match):
        exchange.respond(server_first)


def test_server_error_and_missing_verifier(sasl: Any) -> None:
    for final, match in [(b"e=invalid-proof", "invalid-proof"), (b"x=1", "neither")]:
        _, exchange = client_for(sasl, RFC7677).start()
        exchange.respond(RFC7677["server_first"])
        with pytest.raises(sasl.SaslError, match=match):
            exchange.respond(final)


def test_iteration_bounds_are_configurable(sasl: Any) -> None:
    mechanism = sasl.ScramSha256("user", "pencil", nonce="n", min_iterations=1, max_iterations=1)
    _, exchange = mechanism.start()
    assert exchange.respond(b"r=nX,s=AAAA,i=1").startswith(b"c=biws,r=nX,p=")


def test_plain(sasl: Any) -> None:
    first, exchange = sasl.Plain("alice", "secret").start()
    assert first == b"\x00alice\x00secret"
    assert exchange.respond(b"") is None
    with pytest.raises(sasl.SaslError):
        exchange.respond(b"")
    assert sasl.Plain("alice", "secret", authzid="alice").start()[0] == b"alice\x00alice\x00secret"
    with pytest.raises(ValueError):
        sasl.Plain("al\x00ice", "secret")
    assert "secret" not in repr(sasl.Plain("alice", "secret"))
    assert "pencil" not in repr(sasl.ScramSha512("user", "pencil"))


def test_plain_server(sasl: Any) -> None:
    server = sasl.PlainServer(lambda user, password: (user, password) == ("alice", "secret"))
    good = server.start()
    assert good.respond(b"\x00alice\x00secret") == b"" and good.complete
    assert good.username == "alice"
    for message in [b"\x00alice\x00wrong", b"alice", b"bob\x00alice\x00secret", b"\xff"]:
        with pytest.raises(sasl.SaslError):
            server.start().respond(message)


def test_bad_client_messages_to_the_scram_server(sasl: Any) -> None:
    for first in [b"p=tls-unique,,n=user,r=abc", b"n,,r=abc", b"n,,n=user", b"y", b"n,,n=x=4,r=a"]:
        with pytest.raises(sasl.SaslError):
            server_for(sasl, RFC7677).start().respond(first)
    exchange = server_for(sasl, RFC7677).start()
    exchange.respond(RFC7677["client_first"])
    with pytest.raises(sasl.SaslError, match="nonce"):
        exchange.respond(b"c=biws,r=other,p=AAAA")


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(messages=st.lists(st.binary(max_size=120), min_size=1, max_size=3))
def test_hostile_messages_raise_only_sasl_error(sasl: Any, messages: list[bytes]) -> None:
    _, client = sasl.ScramSha512("user", "pencil", nonce="abc").start()
    scram_server = server_for(sasl, RFC7677).start()
    plain_server = sasl.PlainServer(lambda u, p: False).start()
    for exchange in (client, scram_server, plain_server):
        for message in messages:
            try:
                exchange.respond(message)
            except sasl.SaslError:
                break


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    salt=st.binary(min_size=1, max_size=24),
    iterations=st.integers(4096, 16384),
    text=st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=20),
)
def test_hostile_but_well_formed_server_first(
    sasl: Any, salt: bytes, iterations: int, text: str
) -> None:
    # the attribute values are arbitrary: whatever is computed, only SaslError may escape
    _, client = sasl.ScramSha256("user", "pencil", nonce="abc", max_iterations=4096).start()
    message = f"r=abc{text},s={base64.b64encode(salt).decode()},i={iterations}".encode()
    try:
        assert client.respond(message).startswith(b"c=biws,r=abc")
    except sasl.SaslError:
        pass


# --- OAUTHBEARER (RFC 7628, KIP-255, KIP-342) -----------------------------------------------

TOKEN = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9."  # an unsigned JWT: {"sub": "alice"}


def test_oauthbearer_initial_response_is_rfc7628s(sasl: Any) -> None:
    mechanism = sasl.OAuthBearer(
        lambda: TOKEN, extensions={"traceId": "123", "logicalCluster": "lkc-1"}
    )
    message, exchange = mechanism.start()
    # gs2 header "n,,", then key=value pairs each ended by ^A, then one more ^A (RFC 7628 3.1)
    assert message == (
        b"n,,\x01auth=Bearer " + TOKEN.encode() + b"\x01traceId=123\x01logicalCluster=lkc-1\x01\x01"
    )
    assert exchange.respond(b"") is None  # success: the server's empty answer
    with_authzid, _ = sasl.OAuthBearer(lambda: TOKEN, authzid="alice").start()
    assert with_authzid.startswith(b"n,a=alice,\x01auth=Bearer ")


def test_oauthbearer_matches_kafka_pythons_client_bytes(sasl: Any) -> None:
    from kafka.net.sasl.oauth import AbstractTokenProvider, SaslMechanismOAuth

    class Provider(AbstractTokenProvider):
        def token(self) -> str:
            return TOKEN

        def extensions(self) -> dict[str, str]:
            return {"traceId": "123", "logicalCluster": "lkc-1"}

    theirs = SaslMechanismOAuth(sasl_oauth_token_provider=Provider()).auth_bytes()
    ours, _ = sasl.OAuthBearer(lambda: TOKEN, extensions=Provider().extensions()).start()
    assert ours == theirs


def test_kafka_pythons_oauthbearer_client_against_our_server(sasl: Any) -> None:
    from kafka.net.sasl.oauth import AbstractTokenProvider, SaslMechanismOAuth

    class Provider(AbstractTokenProvider):
        def __init__(self, token: str) -> None:
            self._token = token

        def token(self) -> str:
            return self._token

        def extensions(self) -> dict[str, str]:
            return {"traceId": "7"}

    seen: list[tuple[str, dict[str, str]]] = []

    def validate(token: str, extensions: dict[str, str]) -> str | None:
        seen.append((token, extensions))
        return "alice" if token == TOKEN else None

    server = sasl.OAuthBearerServer(validate)
    good = SaslMechanismOAuth(sasl_oauth_token_provider=Provider(TOKEN))
    exchange = server.start()
    good.receive(exchange.respond(good.auth_bytes()))
    assert good.is_authenticated() and exchange.complete and exchange.username == "alice"
    assert seen == [(TOKEN, {"traceId": "7"})] and exchange.extensions == {"traceId": "7"}
    # a bad token: the server sends its error, kafka-python answers ^A, the server refuses
    bad = SaslMechanismOAuth(sasl_oauth_token_provider=Provider("wrong"))
    exchange = server.start()
    challenge = exchange.respond(bad.auth_bytes())
    assert b'"status":"invalid_token"' in challenge
    bad.receive(challenge)
    with pytest.raises(sasl.SaslError, match="invalid token"):
        exchange.respond(bad.auth_bytes())
    assert bad.auth_bytes() == b"\x01" and not exchange.complete


def test_oauthbearer_client_acknowledges_an_error(sasl: Any) -> None:
    _, exchange = sasl.OAuthBearer(lambda: TOKEN).start()
    assert exchange.respond(b'{"status":"invalid_token"}') == b"\x01"
    with pytest.raises(sasl.SaslError):
        exchange.respond(b"")


@pytest.mark.parametrize(
    ("extensions", "match"),
    [({"auth": "x"}, "auth"), ({"tr4ce": "x"}, "letters"), ({"t": "\x01"}, "printable")],
)
def test_oauthbearer_extensions_follow_kip342(
    sasl: Any, extensions: dict[str, str], match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        sasl.OAuthBearer(lambda: TOKEN, extensions=extensions)


def test_oauthbearer_token_callback_failures_are_sasl_errors(sasl: Any) -> None:
    def broken() -> str:
        raise RuntimeError("the identity provider is down")

    with pytest.raises(sasl.SaslError, match="identity provider is down"):
        sasl.OAuthBearer(broken).start()
    with pytest.raises(sasl.SaslError, match="no valid bearer token"):
        sasl.OAuthBearer(lambda: "not a token!").start()
    assert "eyJ" not in repr(sasl.OAuthBearer(lambda: TOKEN))


@pytest.mark.parametrize(
    "message",
    [b"", b"n,,", b"y,,\x01auth=Bearer x\x01\x01", b"n,,\x01auth=Basic x\x01\x01",
     b"n,,\x01k=v\x01\x01", b"n,,\x01auth=Bearer x\x01", b"\xff\xfe"],
)  # fmt: skip
def test_oauthbearer_server_refuses_malformed_messages(sasl: Any, message: bytes) -> None:
    with pytest.raises(sasl.SaslError):
        sasl.OAuthBearerServer(lambda t, e: "x").start().respond(message)


def final_with_nonce(v: dict[str, Any], nonce: str) -> bytes:
    """A client-final-message carrying ``nonce``, with the proof a client computes for it."""
    name = v["hash"]
    salted = hashlib.pbkdf2_hmac(name, b"pencil", base64.b64decode(v["salt"]), 4096)
    client_key = hmac.new(salted, b"Client Key", name).digest()
    stored_key = hashlib.new(name, client_key).digest()
    without_proof = f"c=biws,r={nonce}"
    auth = b",".join([v["client_first"][3:], v["server_first"], without_proof.encode()])
    signature = hmac.new(stored_key, auth, name).digest()
    proof = bytes(a ^ b for a, b in zip(client_key, signature))
    return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()


@pytest.mark.parametrize(
    ("check", "doubled", "other"),
    [("exact", False, False), ("suffix", True, False), ("none", True, True)],
)
def test_nonce_checks_of_older_kafka(sasl: Any, check: str, doubled: bool, other: bool) -> None:
    """librdkafka before 2.6.1 sends the client nonce twice: Kafka 3.7.2-3.9 accept it
    ("suffix"), Kafka before the CVE-2024-56128 fix checks nothing ("none")."""
    v = RFC7677
    combined = v["client_nonce"] + v["server_nonce"]
    salt = base64.b64decode(v["salt"])
    credential = sasl.ScramCredential.from_password("pencil", v["hash"], salt, 4096)

    def outcome(nonce: str) -> bool:
        server = sasl.ScramServer(
            "SCRAM", v["hash"], {"user": credential}.get, nonce=v["server_nonce"], nonce_check=check
        )
        exchange = server.start()
        exchange.respond(v["client_first"])
        try:
            exchange.respond(final_with_nonce(v, nonce))
        except sasl.SaslError:
            return False
        return bool(exchange.complete)

    assert outcome(combined)
    assert outcome(v["client_nonce"] + combined) is doubled
    assert outcome("other") is other
    with pytest.raises(ValueError, match="nonce_check"):
        sasl.ScramServer("SCRAM", "sha256", {}.get, nonce_check="lenient")
