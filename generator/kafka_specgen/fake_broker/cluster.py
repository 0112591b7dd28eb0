"""``FakeCluster``: a fake Kafka cluster of one or more brokers on loopback ports, served by
one event loop on a background thread."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ..broker_releases import BrokerRelease, releases
from ..errors import SpecError
from ..library import GeneratedPackage, PackageLacks, SpecSet, generated_package, spec_set
from . import maintenance
from .acl import Authorizer
from ..api_keys import ApiKey
from .authorize import guard
from .call import Call
from .dispatch import Routes, advertised, erring, missing, serving
from .faults import FaultInjection, Faults
from .limits import Limits
from .release import Emulation, UnknownRelease, describe, resolve
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

    What it emulates: ``release`` (the table's row, ``3.9.0``), ``kind`` (``zookeeper``,
    ``kraft``), ``broker`` (the row), ``description`` (one line); ``versions`` (api key ->
    the range advertised) and ``accepted`` (what is answered).
    """

    def __init__(
        self,
        specs: Sequence[Path | str] | Path | str | SpecSet | None = None,
        *,
        release: str | None = None,
        kraft: bool = False,
        telemetry: bool = False,
        unstable: bool = False,
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
        own_specs = specs is not None or package is not None
        if release is None and not own_specs:
            release = releases()[-1].name  # the newest release of the table
        if release is None and (kraft or telemetry or unstable):
            raise FakeBrokerError("kraft, telemetry and unstable need a release to emulate")
        self.broker: BrokerRelease | None = None
        """The release table's row the brokers emulate (None without a release)."""
        data: SpecSet | None = None
        if release is not None:
            try:
                self.broker, data = resolve(release, kraft)
            except UnknownRelease as exc:
                raise FakeBrokerError(str(exc)) from None
        if specs is not None:
            data = spec_set([specs] if isinstance(specs, (str, Path)) else specs)
        if package is None:
            assert data is not None
            try:
                package = generated_package(data)
            except SpecError as exc:
                raise FakeBrokerError(f"cannot serve {data.label}: {exc}") from None
        self.package = package
        try:
            package.require(*REQUIRED, because="a fake broker needs Kafka's whole spec set")
        except PackageLacks as exc:
            raise FakeBrokerError(str(exc)) from None
        registry = package.module("registry")
        # What it emulates: the row's release (3.9.0, 0.10.2.0) and kind, and one line
        # naming them with the data used; versions: api key -> (min, max) advertised;
        # accepted: what is answered (4.x refuses Produce v0-2; before 0.10 nothing is
        # advertised); missing_versions: what a user's spec set lacks of the release's.
        self.release: str | None = None if self.broker is None else self.broker.name
        self.kind: str | None = None if self.broker is None else self.broker.kind
        self.description = "every version of the specs"
        if self.broker is not None and release is not None:
            used = data or SpecSet(f"package {package.name}", (package.path,))
            self.description = describe(self.broker, release, used)
        emulation: Emulation | None = None
        if self.broker is None:
            self.versions = advertised(registry.API_KEYS, None)
            self.accepted = dict(self.versions)
            self.missing_versions: dict[int, tuple[int, int]] = {}
        else:
            emulation = Emulation(self.broker, telemetry, unstable, package)
            if own_specs:  # a user's spec set: within what it and the handlers have
                emulation.advertised = advertised(registry.API_KEYS, emulation.advertised)
                emulation.accepted = advertised(registry.API_KEYS, emulation.accepted)
                self.missing_versions = missing(registry.API_KEYS, self.broker.advertised())
            else:
                self.missing_versions = {}
            self.versions = emulation.advertised
            self.accepted = emulation.accepted
        self.routes = Routes(serving({**self.accepted, **self.versions}), self.versions)
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
            brokers=[BrokerAddress(n, host, s.getsockname()[1]) for n, s in enumerate(sockets)],
            release=emulation,
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
            self.security,
        )
        self.state.timers = self._server.loop
        self.state.group_initial_rebalance_delay = (
            self.limits.group_initial_rebalance_delay_ms / 1000
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
            maintenance.start(self.state, self.limits)
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

    def compact(self, topic: str | None = None) -> int:
        """Compact now, as Kafka's log cleaner does, every topic whose cleanup.policy has
        ``compact`` (or only ``topic``); returns how many records went."""
        records = self.package.module("records")
        removed: int = self.call(lambda: maintenance.compact(self.state, records, topic))
        return removed

    def apply_retention(self) -> int:
        """Apply retention.ms and retention.bytes now (the loop does it every
        ``log_retention_check_interval_ms``); returns how many batches went."""
        gone: int = self.call(lambda: maintenance.apply_retention(self.state))
        return gone

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
