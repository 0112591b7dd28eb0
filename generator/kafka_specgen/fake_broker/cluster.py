"""``FakeCluster``: a fake Kafka cluster of one or more brokers on loopback ports, served by
one event loop on a background thread."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ..library import GeneratedPackage, generated_package
from ..pipeline import frames
from .acl import Authorizer
from .apikeys import ApiKey
from .authorize import guard
from .call import Call
from .dispatch import Routes, advertised, erring, missing, serving
from .faults import FaultInjection, Faults
from .limits import Limits
from .release import UnknownRelease, release_ranges
from .security import Security, SecurityError
from .server import Server, listen
from .shapes import Shapes
from .state import BrokerAddress, ClusterState

#: The APIs without which a spec set cannot serve a client at all.
REQUIRED = (ApiKey.PRODUCE, ApiKey.FETCH, ApiKey.METADATA, ApiKey.API_VERSIONS)


@dataclass(frozen=True)
class ConnectionInfo:
    """One client connection, as ``FakeCluster.connections()`` shows it."""

    broker: int
    """The node id of the broker it is connected to."""
    client: str
    """The client's ``host:port``."""
    queued: int
    """Requests read and not answered yet."""
    waiting: bool
    """Whether the request at the head waits for its answer (a Fetch for data, ...)."""
    unsent: int
    """Bytes of answers the client has not taken yet."""
    muted: bool
    """Whether the broker stopped reading it (its client does not read its answers)."""


class FakeBrokerError(Exception):
    """A fake cluster that cannot start as asked (one line for the command line)."""


class FakeCluster(FaultInjection):
    """A fake Kafka cluster of ``brokers`` brokers on loopback ports (see the package).

    Security: ``users`` (name -> password) makes the listeners ask for SASL (PLAIN,
    SCRAM-SHA-256, SCRAM-SHA-512, or ``sasl_mechanisms``); ``tls=True`` (or a folder for
    the certificates) makes them TLS, ``ca_file`` being what clients trust; ``superusers``
    turns ACLs on (Create/Describe/DeleteAcls), enforced on everyone else.

    Keyword arguments beyond the documented ones are limits (``Limits``' fields, at
    Kafka's defaults): ``message_max_bytes=``, ``fetch_max_bytes=``, ...
    """

    def __init__(
        self,
        specs: Sequence[Path | str] | Path | str | None = None,
        *,
        release: str | None = None,
        brokers: int = 1,
        topics: Mapping[str, int] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        record: Path | str | None = None,
        package: GeneratedPackage | None = None,
        users: Mapping[str, str] | None = None,
        superusers: Iterable[str] | None = None,
        tls: bool | str | Path = False,
        sasl_mechanisms: Iterable[str] | None = None,
        **limits: int,
    ) -> None:
        try:
            self.limits = Limits().with_values(limits)
        except ValueError as exc:
            raise FakeBrokerError(str(exc)) from None
        if brokers < 1:
            raise FakeBrokerError(f"a cluster needs at least one broker, not {brokers}")
        if package is None:
            if specs is None:
                raise FakeBrokerError(
                    "a fake broker needs a spec set with Produce, Fetch and the rest: give one "
                    "(specs=, or --specs PATH), e.g. Kafka's "
                    "clients/src/main/resources/common/message"
                )
            paths = [Path(specs)] if isinstance(specs, (str, Path)) else [Path(p) for p in specs]
            package = generated_package(paths)
        self.package = package
        registry = package.module("registry")
        lacking = [registry.api_name(k) for k in REQUIRED if k not in registry.API_KEYS]
        if lacking or not package.has("connection"):
            raise FakeBrokerError(
                f"the spec set lacks {', '.join(lacking) or 'the request and response headers'}"
                ": a fake broker needs Kafka's whole spec set"
            )
        release_table: Mapping[int, tuple[int, int]] | None = None
        self.release: str | None = None
        if release is not None:
            try:
                self.release, release_table = release_ranges(package, release)
            except UnknownRelease as exc:
                raise FakeBrokerError(str(exc)) from None
        self.versions = advertised(registry.API_KEYS, release_table)
        self.missing_versions = missing(registry.API_KEYS, release_table)
        self.routes = Routes(serving(self.versions), self.versions)
        self._record_file: TextIO | None = None
        try:
            self.security = Security.build(
                users=users,
                mechanisms=sasl_mechanisms,
                tls=tls,
                hosts=[host],
                package=package,
                release=self.release,
            )
        except SecurityError as exc:
            raise FakeBrokerError(str(exc)) from None
        try:
            sockets = _listen_all(host, port, brokers)
        except FakeBrokerError:
            self.security.close()
            raise
        self.state = ClusterState(
            brokers=[BrokerAddress(n, host, s.getsockname()[1]) for n, s in enumerate(sockets)]
        )
        if superusers is not None:
            self.state.authorizer = Authorizer(superusers)
            self.routes.guard = guard
        self.routes.faults = Faults(self.state)
        self._server = Server(
            self.state,
            sockets,
            self.routes,
            Shapes(package),
            self.limits,
            package.module("connection"),
            registry,
            frames,
            self.security,
        )
        if record is not None:
            self._record_file = open(record, "a", encoding="utf-8")
            self.routes.record = self._record_file
        for name, partitions in (topics or {}).items():
            self.create_topic(name, partitions)
        self._started = False
        self._closed = False

    # --- life -----------------------------------------------------------------------------

    def start(self) -> FakeCluster:
        """Serve, on a background thread (the cluster's event loop)."""
        if not self._started and not self._closed:
            self._server.start()
            self._started = True
        return self

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._server.stop()
        self.security.close()
        if self._record_file is not None:
            self._record_file.close()
            self._record_file = None

    def __enter__(self) -> FakeCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- what tests use -------------------------------------------------------------------

    @property
    def bootstrap(self) -> str:
        """``host:port`` of the first broker."""
        first = self.state.brokers[0]
        return f"{first.host}:{first.port}"

    @property
    def ca_file(self) -> Path | None:
        """The CA certificate clients trust (``ssl.ca.location``), with TLS."""
        return self.security.ca_file

    @property
    def security_protocol(self) -> str:
        """PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL (the clients' ``security.protocol``)."""
        return self.security.protocol

    def call(self, fn: Callable[[], Any], timeout: float = 30.0) -> Any:
        """Run ``fn()`` on the cluster's loop, between two requests, and return what it
        returns: the way to change ``state`` (or read it whole) while the cluster serves."""
        return self._server.loop.run_in_loop(fn, timeout)

    def connections(self) -> list[ConnectionInfo]:
        """The open client connections, least recently active first."""

        def look() -> list[ConnectionInfo]:
            return [
                ConnectionInfo(
                    c.node.node_id,
                    c.client_address,
                    len(c.inbox),
                    c.parked is not None,
                    c.out_bytes,
                    c.muted,
                )
                for c in self._server.channels
            ]

        result: list[ConnectionInfo] = self.call(look)
        return result

    def create_topic(self, name: str, partitions: int = 1) -> None:
        def create() -> None:
            if name in self.state.topics:
                raise FakeBrokerError(f"topic {name!r} exists")
            self.state.create_topic(name, partitions)

        self.call(create)

    def control(self, api_key: int, fn: Callable[[Call], Any] | None) -> None:
        """Answer ``api_key`` with ``fn(call)`` (None from it: the usual answer);
        ``fn=None`` restores the usual answers."""
        if fn is None:
            self.routes.controls.pop(api_key, None)
        else:
            self.routes.controls[api_key] = fn

    def inject(self, api_key: int, error_code: int, times: int = 1) -> None:
        """The next ``times`` answers to ``api_key`` carry ``error_code`` in every error
        field (NOT_LEADER_OR_FOLLOWER is 6, COORDINATOR_NOT_AVAILABLE 15, ...)."""
        self.control(api_key, erring(self.routes.usual, error_code, times))

    def _set_broker(self, node: int, up: bool) -> None:
        """Broker ``node``'s listener down (its connections closed) or up again."""
        change = self._server.set_up if up else self._server.set_down
        try:
            self.call(lambda: change(node))
        except OSError as exc:
            raise FakeBrokerError(f"broker {node} cannot listen again: {exc}") from None

    @property
    def failures(self) -> list[str]:
        """What went wrong, one line each: answers that failed with an exception (each
        closed its connection), connections the brokers could not accept (EMFILE ...)."""
        return self.routes.failures

    @property
    def throttle_ms(self) -> int:
        return self.routes.throttle_ms

    @throttle_ms.setter
    def throttle_ms(self, value: int) -> None:
        self.routes.throttle_ms = value


def _listen_all(host: str, port: int, brokers: int) -> list[Any]:
    sockets: list[Any] = []
    try:
        for n in range(brokers):
            sockets.append(listen(host, port if n == 0 else 0))
    except OSError as exc:
        for sock in sockets:
            sock.close()
        where = f"{host}:{port if not sockets else 0}"
        raise FakeBrokerError(f"cannot listen on {where}: {exc.strerror or exc}") from None
    return sockets
