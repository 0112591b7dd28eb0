"""``Handshake`` on its own, OAUTHBEARER through the connection, and KIP-368's re-login
before the session ends, against the scripted broker of ``test_connection`` (on
``ServerConnection``)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tests.runtime.test_connection import Broker, converse, everything, names, sent
from tests.runtime.test_connection import k  # noqa: F401 - the module's fixture

TOKEN = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9."


def test_the_handshake_is_an_object_of_its_own(k: SimpleNamespace) -> None:
    """No connection, no framing: steps out, answers in."""
    H = k.C.Handshake
    handshake = H(client_software=("app", "1"), policy={}, configured=None, sasl=None)
    [step] = handshake.start()
    assert (step.api_key, step.version) == (18, k.registry.API_KEYS[18].max_version)
    assert step.body.client_software_name == "app"
    assert handshake.state is k.C.HandshakeState.NEGOTIATING
    configured = H(client_software=("a", "1"), policy={}, configured={3: (0, 9)}, sasl=None)
    [finished] = configured.start()
    assert type(finished).__name__ == "Finished" and configured.versions == {3: (0, 9)}
    assert configured.state is k.C.HandshakeState.DONE


def oauth_broker(k: SimpleNamespace, tokens: list[str]) -> Broker:
    def validate(token: str, extensions: dict[str, str]) -> str | None:
        tokens.append(token)
        return "alice" if token.startswith("eyJ") else None

    server = k.sasl.OAuthBearerServer(validate)
    return Broker(k, everything(k) | {17: (0, 1)}, {"OAUTHBEARER": server})


def client(k: SimpleNamespace, token: Any, **options: Any) -> Any:
    mechanism = k.sasl.OAuthBearer(token, extensions={"traceId": "1"})
    return k.C.ClientConnection(sasl=mechanism, release_table={}, **options)


def test_oauthbearer_login(k: SimpleNamespace) -> None:
    seen: list[str] = []
    conn = client(k, lambda: TOKEN)
    conn.start(0.0)
    [ready] = converse(conn, oauth_broker(k, seen))
    assert isinstance(ready, k.C.Ready) and ready.sasl_mechanism == "OAUTHBEARER"
    assert ready.session_lifetime_ms == 60000 and seen == [TOKEN]


def test_oauthbearer_refused_token(k: SimpleNamespace) -> None:
    conn = client(k, lambda: "bad-token")
    conn.start(0.0)
    [failed] = converse(conn, oauth_broker(k, []))
    assert failed.cause is k.C.FailureCause.AUTHENTICATION_FAILED
    assert "SASL_AUTHENTICATION_FAILED" in failed.reason and "invalid token" in failed.reason


def test_reauthentication_before_the_session_ends(k: SimpleNamespace) -> None:
    """KIP-368: at 90 % of the session lifetime the connection logs in again, with a fresh
    token; requests sent meanwhile wait and go out after; answers in flight still arrive."""
    issued = iter([TOKEN, TOKEN + "2", TOKEN + "3"])
    seen: list[str] = []
    broker = oauth_broker(k, seen)
    conn = client(k, lambda: next(issued))
    conn.start(0.0)
    [ready] = converse(conn, broker, 0.0)
    assert conn.next_deadline() == pytest.approx(54.0)  # 90 % of 60 s
    in_flight = conn.send(k.md.MetadataRequest(topics=None), 50.0, timeout=60.0)
    [(header, _)] = sent(k, conn)
    assert header.correlation_id == in_flight
    assert conn.handle_timer(54.0) == []
    assert conn.state.value == "reauthenticating"
    [(handshake, _)] = sent(k, conn)
    assert handshake.request_api_key == 17
    waiting = conn.send(k.md.MetadataRequest(topics=None), 54.0)
    assert conn.data_to_send() == b"" and conn.queued == 1
    # the broker answers the SaslHandshake, then the rest of the login
    events = converse_with(conn, broker, [handshake], 55.0)
    assert "Reauthenticated" in names(events)
    assert seen == [TOKEN, TOKEN + "2"] and conn.state.value == "ready"
    # released once logged in again, written and answered
    answered = [e.correlation_id for e in events if isinstance(e, k.C.Response)]
    assert answered == [waiting]
    assert conn.awaiting(in_flight)  # written before the re-login, still awaited
    # the next re-login, at 90 % of the new session (its login began at 54 s)
    assert conn.next_deadline() == pytest.approx(54.0 + 54.0)


def converse_with(conn: Any, broker: Broker, headers: list[Any], now: float) -> list[Any]:
    """Hand the broker the internal requests already taken out of ``conn``, then converse."""
    data = b"".join(encode_request(broker.k, header) for header in headers)
    events = conn.receive_data(broker.feed(data), now)
    return events + converse(conn, broker, now)


def encode_request(k: SimpleNamespace, header: Any) -> bytes:
    body = k.hs.SaslHandshakeRequest(mechanism="OAUTHBEARER")
    return k.framing.add_size_prefix(k.framing.encode_request(header, body))


def test_a_failed_reauthentication_ends_the_connection(k: SimpleNamespace) -> None:
    issued = iter([TOKEN, "bad-token"])
    broker = oauth_broker(k, [])
    conn = client(k, lambda: next(issued))
    conn.start(0.0)
    converse(conn, broker, 0.0)
    conn.handle_timer(54.0)
    [(header, _)] = sent(k, conn)
    events = converse_with(conn, broker, [header], 54.0)
    assert names(events) == ["ConnectionFailed"]
    assert events[0].cause is k.C.FailureCause.AUTHENTICATION_FAILED
