"""TLS, OAUTHBEARER with KIP-368 re-login, and reconnecting, over real loopback sockets, in
both adapters, against the package's own server side (``ServerConnection``, through the
scripted broker of ``test_connection``). The TLS certificates come from a CA the test makes
with the ``openssl`` command."""

from __future__ import annotations

import asyncio
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.integration.test_connection_live import k  # noqa: F401 - the module's fixture
from tests.runtime.test_connection import Broker, everything
from bench.tansu import HOST, free_port

TOKEN = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9."
pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl command")


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CA and a server certificate for 127.0.0.1 signed by it (valid for a day)."""
    d = tmp_path_factory.mktemp("certs")

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True, timeout=60)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
            "ca.pem", "-days", "1", "-subj", "/CN=kafka-specgen test CA",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")  # fmt: skip
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out",
            "server.csr", "-subj", "/CN=127.0.0.1")  # fmt: skip
    (d / "ext.cnf").write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n"
        "keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n"
        "authorityKeyIdentifier=keyid\n"
    )
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "server.pem", "-days", "1", "-extfile", "ext.cnf")  # fmt: skip
    return d


def client_tls(certs: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(certs / "ca.pem"))


class SocketBroker:
    """A scripted broker behind a loopback listener, TLS when given a server context; one
    connection at a time, in a thread; ``close_after_answer`` hangs up after every answer."""

    def __init__(
        self,
        make: Callable[[], Broker],
        tls: ssl.SSLContext | None = None,
        close_after_answer: bool = False,
    ) -> None:
        self.make = make
        self.tls = tls
        self.close_after_answer = close_after_answer
        self.listener = socket.create_server((HOST, 0))
        self.listener.settimeout(0.1)
        self.port = self.listener.getsockname()[1]
        self.stopping = threading.Event()
        self.brokers: list[Broker] = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while not self.stopping.is_set():
            try:
                raw, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            raw.settimeout(5)
            try:
                sock = raw if self.tls is None else self.tls.wrap_socket(raw, server_side=True)
            except (ssl.SSLError, OSError):
                raw.close()
                continue
            with sock:
                self.talk(sock)

    def talk(self, sock: socket.socket) -> None:
        broker = self.make()
        self.brokers.append(broker)
        sock.settimeout(0.1)
        while not broker.closed and not self.stopping.is_set():
            try:
                data = sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            if not data:
                return
            answer = broker.feed(data)
            if answer:
                sock.sendall(answer)
                if self.close_after_answer and broker.seen[-1].api_key == 3:
                    return

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(timeout=5)
        self.listener.close()


@pytest.fixture
def serve() -> Iterator[Callable[..., SocketBroker]]:
    started: list[SocketBroker] = []

    def start(*args: Any, **kwargs: Any) -> SocketBroker:
        started.append(SocketBroker(*args, **kwargs))
        return started[-1]

    yield start
    for server in started:
        server.stop()


def oauth_broker(k: SimpleNamespace, lifetime_ms: int) -> Broker:
    server = k.sasl.OAuthBearerServer(
        lambda token, ext: "alice" if token.startswith("eyJ") else None
    )
    versions = everything(k) | {17: (0, 1)}
    return Broker(k, versions, {"OAUTHBEARER": server}, session_lifetime_ms=lifetime_ms,
                  clock=time.monotonic)  # fmt: skip


def test_tls_and_oauthbearer_with_reauthentication_in_both_adapters(
    k: SimpleNamespace, certs: Path, serve: Callable[..., SocketBroker]
) -> None:
    server_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_tls.load_cert_chain(certs / "server.pem", certs / "server.key")
    broker = serve(lambda: oauth_broker(k, lifetime_ms=1500), tls=server_tls)
    tokens: list[str] = []

    def token() -> str:
        tokens.append(f"{TOKEN}{len(tokens)}")
        return tokens[-1]

    def connection() -> Any:
        sasl = k.sasl.OAuthBearer(token, extensions={"traceId": "t1"})
        return k.C.ClientConnection(sasl=sasl, release_table={}, request_timeout=5.0)

    metadata = k.md.MetadataRequest(topics=None)
    with k.client.Client.connect(HOST, broker.port, connection(), ssl=client_tls(certs)) as c:
        assert c.ready.sasl_mechanism == "OAUTHBEARER" and c.ready.session_lifetime_ms == 1500
        assert c.request(metadata).cluster_id == "scripted"
        time.sleep(1.6)  # idle past the session's end: the next send logs in again first
        assert c.request(metadata).cluster_id == "scripted"
    assert len(tokens) == 2 and broker.brokers[-1].logins == 2

    async def main() -> int:
        client = await k.aio.AsyncClient.connect(
            HOST, broker.port, connection(), ssl=client_tls(certs), timeout=5.0
        )
        try:
            assert (await client.request(metadata)).cluster_id == "scripted"
            await asyncio.sleep(1.6)  # the timer logs in again at 90 % of the session
            logins = broker.brokers[-1].logins
            assert (await client.request(metadata)).cluster_id == "scripted"
            return logins
        finally:
            await client.close()

    assert asyncio.run(asyncio.wait_for(main(), 30)) == 2  # re-logged in while idle
    assert len(tokens) == 4


def test_tls_failures_name_their_cause(
    k: SimpleNamespace, certs: Path, serve: Callable[..., SocketBroker]
) -> None:
    server_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_tls.load_cert_chain(certs / "server.pem", certs / "server.key")
    broker = serve(lambda: Broker(k, everything(k)), tls=server_tls)
    unknown_ca = ssl.create_default_context()  # the system's CAs: not ours
    conn = lambda: k.C.ClientConnection(release_table={}, request_timeout=2.0)  # noqa: E731
    with pytest.raises(k.C.ConnectionFailedError) as raised:
        k.client.Client.connect(HOST, broker.port, conn(), ssl=unknown_ca)
    assert raised.value.cause is k.C.FailureCause.TLS_FAILED
    assert "certificate" in str(raised.value)

    async def main() -> Any:
        with pytest.raises(k.C.ConnectionFailedError) as raised:
            await k.aio.AsyncClient.connect(HOST, broker.port, conn(), ssl=unknown_ca)
        return raised.value.cause

    assert asyncio.run(asyncio.wait_for(main(), 30)) is k.C.FailureCause.TLS_FAILED
    # no TLS against a TLS listener: it hangs up during ApiVersions
    with pytest.raises(k.C.ConnectionFailedError) as raised:
        k.client.Client.connect(HOST, broker.port, conn())
    assert raised.value.cause is k.C.FailureCause.CLOSED_DURING_API_VERSIONS
    assert "TLS" in str(raised.value)


def test_reconnect_after_the_broker_closes_between_requests(
    k: SimpleNamespace, serve: Callable[..., SocketBroker]
) -> None:
    broker = serve(lambda: Broker(k, everything(k)), close_after_answer=True)
    metadata = k.md.MetadataRequest(topics=None)
    conn = k.C.ClientConnection(release_table={}, request_timeout=2.0)
    with k.client.Client.connect(HOST, broker.port, conn) as client:
        assert client.request(metadata).cluster_id == "scripted"
        with pytest.raises(k.C.ConnectionFailedError) as raised:
            client.request(metadata)  # the broker hung up after the first answer
        assert raised.value.cause is k.C.FailureCause.CLOSED
        assert not isinstance(raised.value, k.C.LocalProtocolError)
        client.reconnect()
        assert client.request(metadata).cluster_id == "scripted"
    assert len(broker.brokers) == 2

    async def main() -> None:
        client = await k.aio.AsyncClient.connect(HOST, broker.port, conn.fresh())
        try:
            assert (await client.request(metadata)).cluster_id == "scripted"
            await asyncio.sleep(0.2)  # the reader sees the close
            with pytest.raises(k.C.ConnectionFailedError) as raised:
                await client.request(metadata)
            assert raised.value.cause is k.C.FailureCause.CLOSED
            assert "idle" in str(raised.value)
            await client.reconnect()
            assert (await client.request(metadata)).cluster_id == "scripted"
        finally:
            await client.close()
        with pytest.raises(k.C.LocalProtocolError):  # closed by us: that is misuse
            await client.request(metadata)

    asyncio.run(asyncio.wait_for(main(), 30))
    assert len(broker.brokers) == 4


def test_reconnect_backs_off_and_gives_up_in_time(
    k: SimpleNamespace, serve: Callable[..., SocketBroker]
) -> None:
    broker = serve(lambda: Broker(k, everything(k)))
    conn = k.C.ClientConnection(release_table={}, request_timeout=2.0)
    client = k.client.Client.connect(HOST, broker.port, conn)
    broker.stop()  # nobody listens there any more
    client.port = free_port()
    started = time.monotonic()
    with pytest.raises(k.C.ConnectionFailedError) as raised:
        client.reconnect(timeout=0.5)
    elapsed = time.monotonic() - started
    assert raised.value.cause is k.C.FailureCause.CONNECT_FAILED
    assert client.backoff.failures >= 3  # 50, 100, 200 ms ... then the time was up
    assert elapsed < 0.5 + 2.0

    async def main() -> int:
        aclient = k.aio.AsyncClient(HOST, free_port(), conn.fresh())
        with pytest.raises(k.C.ConnectionFailedError):
            await aclient.reconnect(timeout=0.5)
        return aclient.backoff.failures

    assert asyncio.run(asyncio.wait_for(main(), 30)) >= 3
