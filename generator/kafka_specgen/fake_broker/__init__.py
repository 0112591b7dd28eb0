"""A fake Kafka cluster in one process, speaking the wire protocol of a chosen release.

::

    with FakeCluster(specs=[kafka / "clients/src/main/resources/common/message"],
                     release="3.0", brokers=3, topics={"orders": 6}) as cluster:
        run_my_client(bootstrap=cluster.bootstrap)

Built on a package generated from ``specs`` (its ``connection.ServerConnection``, its
message classes and ``records``). It advertises exactly the API ranges a broker of
``release`` advertises (the release table), limited to what the spec set and the fake
broker support; without ``release``, every version the spec set has. KIP-97's test plan
for a client is then: run it against each release, and expect the obsolete-broker error
where the release lacks something the client needs.

In memory and enough for real clients' everyday work: Metadata, CreateTopics,
DeleteTopics, Produce (acks 0, 1 and -1; batches validated, offsets assigned; idempotent
sequence checks), Fetch (max_bytes, min_bytes and max_wait, read_committed with aborted
transactions), ListOffsets, FindCoordinator, the classic group protocol, OffsetCommit and
OffsetFetch, DescribeGroups, ListGroups, transactions (InitProducerId, AddPartitionsToTxn,
AddOffsetsToTxn, TxnOffsetCommit, EndTxn with control markers), DescribeConfigs and
DescribeCluster. With a release, every API of the release is advertised, as its brokers
do, and the ones not implemented here are answered with UNSUPPORTED_VERSION; without one,
APIs not implemented here are not advertised.

Hooks for tests: ``control(api_key, fn)`` answers an API your way (``fn(call)`` returns a
response, ``DISCONNECT``, or None for the usual answer), ``inject(api_key, error_code)``
makes the next answers carry an error, ``throttle_ms`` throttles every answer, and
``record`` writes every frame as a capture file the pipeline reads.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from ..library import GeneratedPackage, generated_package
from ..pipeline import frames
from . import data_apis, group_apis, txn_apis
from .call import Call, Wait
from .server import DISCONNECT, Broker, Routes
from .shapes import Shapes
from .state import UNSUPPORTED_VERSION, BrokerAddress, ClusterState

__all__ = ["DISCONNECT", "Call", "FakeCluster", "FakeBrokerError", "Wait", "register"]

HANDLERS: dict[int, Callable[[Call], Any]] = {
    0: data_apis.produce,
    1: data_apis.fetch,
    2: data_apis.list_offsets,
    3: data_apis.metadata,
    8: group_apis.offset_commit,
    9: group_apis.offset_fetch,
    10: group_apis.find_coordinator,
    11: group_apis.join_group,
    12: group_apis.heartbeat,
    13: group_apis.leave_group,
    14: group_apis.sync_group,
    15: group_apis.describe_groups,
    16: group_apis.list_groups,
    19: data_apis.create_topics,
    20: data_apis.delete_topics,
    22: txn_apis.init_producer_id,
    24: txn_apis.add_partitions_to_txn,
    25: txn_apis.add_offsets_to_txn,
    26: txn_apis.end_txn,
    28: txn_apis.txn_offset_commit,
    32: data_apis.describe_configs,
    60: data_apis.describe_cluster,
}
"""Api key -> the function that answers it (ApiVersions, key 18, is the connection's)."""


class FakeBrokerError(Exception):
    """A fake cluster that cannot start as asked (one line for the command line)."""


class FakeCluster:
    """A fake Kafka cluster of ``brokers`` brokers on loopback ports (see the module)."""

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
    ) -> None:
        if package is None:
            if specs is None:
                raise FakeBrokerError(
                    "a fake broker needs a spec set with Produce, Fetch and the rest: give one "
                    "(specs=, or --specs PATH), e.g. Kafka's "
                    "clients/src/main/resources/common/message"
                )
            paths = [Path(specs)] if isinstance(specs, (str, Path)) else [Path(p) for p in specs]
            package = generated_package(paths)
        if brokers < 1:
            raise FakeBrokerError(f"a cluster needs at least one broker, not {brokers}")
        self.package = package
        registry = package.module("registry")
        missing = [registry.api_name(k) for k in (0, 1, 3, 18) if k not in registry.API_KEYS]
        if missing or not package.has("connection"):
            raise FakeBrokerError(
                f"the spec set lacks {', '.join(missing) or 'the request and response headers'}"
                ": a fake broker needs Kafka's whole spec set"
            )
        self.release, release_ranges = _release(package, release)
        self.versions = advertised(registry.API_KEYS, release_ranges)
        self.missing_versions = _missing(registry.API_KEYS, release_ranges)
        self.state = ClusterState(brokers=[])
        handlers = {key: HANDLERS.get(key, unimplemented) for key in self.versions}
        self.routes = Routes(handlers, self.versions)
        self._record_file: TextIO | None = None
        if record is not None:
            self._record_file = open(record, "a", encoding="utf-8")
            self.routes.record = self._record_file
        sockets: list[socket.socket] = []
        try:
            for n in range(brokers):
                sockets.append(_listen(host, port if n == 0 else 0))
        except FakeBrokerError:
            for sock in sockets:
                sock.close()
            raise
        self.state.brokers = [
            BrokerAddress(n, host, s.getsockname()[1]) for n, s in enumerate(sockets)
        ]
        shapes = Shapes(package)
        connection = package.module("connection")
        self._brokers = [
            Broker(address, sock, self.state, shapes, self.routes, connection, registry, frames)
            for address, sock in zip(self.state.brokers, sockets)
        ]
        for name, partitions in (topics or {}).items():
            self.create_topic(name, partitions)
        self._started = False

    # --- life -----------------------------------------------------------------------------

    def start(self) -> FakeCluster:
        if not self._started:
            for broker in self._brokers:
                broker.start()
            self._started = True
        return self

    def close(self) -> None:
        for broker in self._brokers:
            broker.stop()
        for broker in self._brokers:
            if broker.is_alive():
                broker.join(timeout=5)
            elif not self._started:
                broker.listener.close()  # never served: its thread did not close it
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

    def create_topic(self, name: str, partitions: int = 1) -> None:
        with self.state.lock:
            if name in self.state.topics:
                raise FakeBrokerError(f"topic {name!r} exists")
            self.state.create_topic(name, partitions)

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
        left = [times]
        handler = self.routes.handlers[api_key]

        def failing(call: Call) -> Any:
            if left[0] <= 0:
                return None
            left[0] -= 1
            response = handler(call)
            if isinstance(response, Wait):
                response = response.poll(call.now, True)
            return _with_error(response, error_code)

        self.control(api_key, failing)

    @property
    def failures(self) -> list[str]:
        """Answers that failed with an exception (each closed its connection)."""
        return self.routes.failures

    @property
    def throttle_ms(self) -> int:
        return self.routes.throttle_ms

    @throttle_ms.setter
    def throttle_ms(self, value: int) -> None:
        self.routes.throttle_ms = value


def advertised(
    entries: Mapping[int, Any], release: Mapping[int, tuple[int, int]] | None
) -> dict[int, tuple[int, int]]:
    """The ranges to advertise. For a release: its own ranges (as its brokers advertise
    them, so that clients negotiate and guess as they would), within the spec set's; APIs
    without a handler then get an error answer. Without one: the spec set's ranges of the
    APIs the fake broker implements."""
    versions = {}
    keys = release if release is not None else (*HANDLERS, 18)
    for key in keys:
        entry = entries.get(key)
        if entry is None:
            continue
        low, high = entry.min_version, entry.max_version
        if release is not None:
            low, high = max(low, release[key][0]), min(high, release[key][1])
        if low <= high:
            versions[key] = (low, high)
    return dict(sorted(versions.items()))


def unimplemented(call: Call) -> Any:
    """The answer to an API a release has and the fake broker does not implement: its
    response with UNSUPPORTED_VERSION in every error field."""
    return _with_error(call.reply(), UNSUPPORTED_VERSION)


def _missing(
    entries: Mapping[int, Any], release: Mapping[int, tuple[int, int]] | None
) -> dict[int, tuple[int, int]]:
    """Implemented APIs whose release range the spec set does not fully cover."""
    if release is None:
        return {}
    missing = {}
    for key in HANDLERS:
        entry, wanted = entries.get(key), release.get(key)
        if wanted is None:
            continue
        if entry is None or entry.min_version > wanted[0] or entry.max_version < wanted[1]:
            missing[key] = wanted
    return missing


def _release(
    package: GeneratedPackage, name: str | None
) -> tuple[str | None, Mapping[int, tuple[int, int]] | None]:
    if name is None:
        return None, None
    table: Mapping[str, Mapping[int, tuple[int, int]]] = package.module("releases").BROKER_RELEASES
    if not table:
        raise FakeBrokerError("the package has no release table (generated with --facts none)")
    matches = [r for r in table if r == name or r.startswith(name + ".")]
    if not matches:
        raise FakeBrokerError(f"no Kafka release {name!r} in the table: {', '.join(table)}")
    chosen = matches[-1]
    return chosen, table[chosen]


def _listen(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise FakeBrokerError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(64)
    return sock


def _with_error(obj: Any, code: int) -> Any:
    """``obj`` with every error-code field, at any depth, set to ``code``."""
    for attr in getattr(obj, "__dataclass_fields__", ()):
        value = getattr(obj, attr)
        if attr in ("error_code", "partition_error_code"):
            setattr(obj, attr, code)
        elif isinstance(value, tuple):
            for item in value:
                _with_error(item, code)
        elif hasattr(value, "__dataclass_fields__"):
            _with_error(value, code)
    return obj


def register(commands: Any) -> None:
    from .command import register as register_command

    register_command(commands)
