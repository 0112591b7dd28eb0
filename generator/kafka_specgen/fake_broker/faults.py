"""Fault injection, with the names of librdkafka's mock cluster (``rdkafka_mock.h``) and
kfake's request holding (``SleepControl``).

``FaultInjection`` is mixed into ``FakeCluster``: its methods are called from any thread and
run on the cluster's loop (``cluster.call``). ``Faults`` is what the loop consults in front
of every answer (``Routes.faults``):

1. a held API (``hold``) parks the request until the handle is released;
2. the broker's errors for the API (``broker_push_request_errors``), else the cluster's
   (``push_request_errors``), are taken one per request: the request is then answered with
   that error in every error field, and the handler does nothing with it (a Produce is not
   appended); ``DISCONNECT`` closes the connection instead, NONE (0) answers as usual;
3. a partition's errors (``push_partition_errors``) are taken one per request that names
   the partition: that partition alone gets the error, the others are answered as usual.

Errors are given by name (``"NOT_LEADER_OR_FOLLOWER"``) or code (6).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from ..api_keys import ApiKey
from .call import Call
from .dispatch import DISCONNECT, Routes, with_error
from .layouts import BLANK, Level, Path, after, get, layout, make, split
from .state import ClusterState
from .waiting import Signal, Wait

Error = Any
"""An error code, or ``DISCONNECT``."""
#: APIs answered with an injected error by their handler, whose answer only reads the
#: cluster: the error goes into its every error field. The others without a ``layouts``
#: entry are answered with their bare response and the error, without running.
READ_ONLY = {
    ApiKey.METADATA,
    ApiKey.LIST_GROUPS,
    ApiKey.DESCRIBE_CLUSTER,
    ApiKey.DESCRIBE_ACLS,
}
#: How long a held request waits for ``release`` at most (then it is answered).
HOLD_TIMEOUT = 60.0


@dataclass(frozen=True)
class TrackedRequest:
    """One request a broker read, while request tracking is on (``get_requests``)."""

    broker: int
    """The node id of the broker it came to."""
    api_key: int
    api_version: int
    timestamp: float
    """When it was read (``time.time()``)."""
    client_id: str | None
    client: str
    """The client's ``host:port``."""
    correlation_id: int


class Faults:
    """The faults in force, on the loop's thread."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self.request_errors: dict[int, deque[Error]] = {}
        self.broker_errors: dict[tuple[int, int], deque[Error]] = {}
        self.partition_errors: dict[tuple[int, str, int], deque[Error]] = {}
        self.holds: list[HeldRequests] = []
        self.rtt: dict[int, float] = {}
        """Node id -> seconds each answer is held back (``broker_set_rtt``)."""
        self.requests: list[TrackedRequest] = []
        """The requests tracked (``Routes.tracked`` is this list while tracking is on)."""

    def answer(self, call: Call, inner: Callable[[Call], Any]) -> Any:
        for hold in self.holds:
            if hold.api_key == call.api_key and hold.node in (None, call.node.node_id):
                return hold.park(call, lambda c: self._answer(c, inner))
        return self._answer(call, inner)

    def _answer(self, call: Call, inner: Callable[[Call], Any]) -> Any:
        error = _take(self.broker_errors, (call.node.node_id, call.api_key))
        if error is None:
            error = _take(self.request_errors, call.api_key)
        if error is DISCONNECT:
            return DISCONNECT
        if error:
            return errored(call, error, inner)
        if self.partition_errors:
            level = layout(call.api_key, call.version)
            if level is not None and level.inner is not None and level.inner.inner is None:
                return split(call, level, self._partition_error(call, level), inner)
        return inner(call)

    def _partition_error(self, call: Call, level: Level) -> Callable[[Path], int | None]:
        def decide(path: Path) -> int | None:
            topic, partition = path
            name = get(call, topic, level.keys[0][0])
            if not name:
                found = self.state.topic_by_id(get(call, topic, "topic_id"))
                name = found.name if found is not None else ""
            assert level.inner is not None
            field = level.inner.keys[0][0]
            index = partition if field == "" else get(call, partition, field)
            error = _take(self.partition_errors, (call.api_key, name, index))
            return error or None

        return decide

    def tracked_request(self, channel: Any, event: Any) -> TrackedRequest:
        return TrackedRequest(
            channel.node.node_id,
            event.api_key,
            event.api_version,
            time.time(),
            event.header.client_id,
            channel.client_address,
            event.correlation_id,
        )


def errored(call: Call, code: int, inner: Callable[[Call], Any]) -> Any:
    """The answer to a request refused with ``code``: every item of the request answered
    with it (the handler sees none of them), every error field set."""
    level = layout(call.api_key, call.version)
    if level is not None:
        response = split(call, level, lambda path: code, inner)
    elif call.api_key in READ_ONLY:
        response = inner(call)
    else:
        response = make(call, call.response, BLANK)
    return after(response, lambda r: with_error(r, code))


def _take(queues: dict[Any, deque[Error]], key: Any) -> Error:
    queue = queues.get(key)
    if not queue:
        return None
    error = queue.popleft()
    if not queue:
        del queues[key]
    return error


class HeldRequests:
    """The requests of an API held by ``hold`` (kfake's ``SleepControl``): each waits,
    holding its connection's later requests back, until ``release()`` (or ``timeout``
    seconds), then is answered as usual."""

    def __init__(self, cluster: _Cluster, api_key: int, node: int | None, timeout: float) -> None:
        self._cluster = cluster
        self.api_key, self.node, self.timeout = api_key, node, timeout
        self._signal = Signal()
        self._released = False
        self._count = 0
        self._changed = threading.Condition()

    def park(self, call: Call, answer: Callable[[Call], Any]) -> Wait:
        with self._changed:
            self._count += 1
            self._changed.notify_all()

        def poll(now: float, expired: bool) -> Any:
            if self._released or expired:
                return answer(dataclasses.replace(call, now=now))
            return None

        return Wait(call.now + self.timeout, poll, (self._signal,))

    @property
    def held(self) -> int:
        """How many requests it has held so far."""
        with self._changed:
            return self._count

    def wait(self, count: int = 1, timeout: float = 10.0) -> bool:
        """Wait until it has held ``count`` requests; whether it did within ``timeout``."""
        with self._changed:
            return self._changed.wait_for(lambda: self._count >= count, timeout)

    def release(self) -> None:
        """Answer the held requests and hold no more."""

        def release() -> None:
            self._released = True
            holds = self._cluster.routes.faults.holds
            if self in holds:
                holds.remove(self)
            self._signal.fire()

        self._cluster.call(release)

    def __enter__(self) -> HeldRequests:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class _Cluster(Protocol):
    """What ``FaultInjection`` needs of the cluster it is mixed into."""

    routes: Routes
    state: ClusterState
    package: Any

    def call(self, fn: Callable[[], Any], timeout: float = 30.0) -> Any: ...

    def _set_broker(self, node: int, up: bool) -> None: ...


class FaultInjection:
    """librdkafka's mock cluster control API (mixed into ``FakeCluster``)."""

    # --- errors ---------------------------------------------------------------------------

    def push_request_errors(self: _Cluster, api: int | str, errors: Iterable[Error]) -> None:
        """The next requests of ``api``, to any broker, get these errors, one each in order
        (``rd_kafka_mock_push_request_errors``)."""
        key, codes = _api_key(self, api), [_error(self, e) for e in errors]
        self.call(lambda: self.routes.faults.request_errors.setdefault(key, deque()).extend(codes))

    def broker_push_request_errors(
        self: _Cluster, node: int, api: int | str, errors: Iterable[Error]
    ) -> None:
        """As ``push_request_errors``, for the requests to broker ``node`` only; they come
        before the cluster's (``rd_kafka_mock_broker_push_request_error_rtts``, no RTTs)."""
        _node(self, node)
        key, codes = (node, _api_key(self, api)), [_error(self, e) for e in errors]
        self.call(lambda: self.routes.faults.broker_errors.setdefault(key, deque()).extend(codes))

    def push_partition_errors(
        self: _Cluster, api: int | str, topic: str, partition: int, errors: Iterable[Error]
    ) -> None:
        """The next requests of ``api`` that name partition ``partition`` of ``topic`` get
        these errors for that partition, one each in order; the rest of each request is
        answered as usual (Produce, Fetch, ListOffsets, OffsetCommit, TxnOffsetCommit,
        OffsetFetch before v8, AddPartitionsToTxn)."""
        key = (_api_key(self, api), topic, partition)
        if layout(key[0], 0) is None:
            raise ValueError(f"api {key[0]} has no partitions to fail: use push_request_errors")
        codes = [_error(self, e) for e in errors]
        self.call(
            lambda: self.routes.faults.partition_errors.setdefault(key, deque()).extend(codes)
        )

    def clear_request_errors(self: _Cluster, api: int | str) -> None:
        """Forget the errors pushed for ``api`` (cluster, broker and partition ones)."""
        key = _api_key(self, api)

        def clear() -> None:
            faults = self.routes.faults
            faults.request_errors.pop(key, None)
            for node, api_key in list(faults.broker_errors):
                if api_key == key:
                    del faults.broker_errors[(node, api_key)]
            for entry in list(faults.partition_errors):
                if entry[0] == key:
                    del faults.partition_errors[entry]

        self.call(clear)

    # --- brokers --------------------------------------------------------------------------

    def broker_set_down(self: _Cluster, node: int) -> None:
        """Close broker ``node``'s listener and connections (-1: every broker). Metadata
        still lists it and its partitions keep their leader, as in librdkafka's mock."""
        for n in _nodes(self, node):
            self._set_broker(n, up=False)

    def broker_set_up(self: _Cluster, node: int) -> None:
        """Listen again on broker ``node``'s port (-1: every broker)."""
        for n in _nodes(self, node):
            self._set_broker(n, up=True)

    def broker_set_rtt(self: _Cluster, node: int, ms: float) -> None:
        """Hold each answer of broker ``node`` (-1: every broker) back ``ms`` milliseconds,
        on the loop: the requests behind it are read and answered meanwhile."""
        if ms < 0:
            raise ValueError(f"a round-trip time is at least 0 ms, not {ms}")
        nodes = _nodes(self, node)

        def set_rtt() -> None:
            for n in nodes:
                if ms:
                    self.routes.faults.rtt[n] = ms / 1000.0
                else:
                    self.routes.faults.rtt.pop(n, None)

        self.call(set_rtt)

    # --- leaders and coordinators ------------------------------------------------------------

    def partition_set_leader(self: _Cluster, topic: str, partition: int, node: int) -> None:
        """Make broker ``node`` (-1: none) the leader of the partition; a missing topic is
        created with ``partition + 1`` partitions. The partition's leader epoch goes up; its
        old leader answers it with NOT_LEADER_OR_FOLLOWER and the new leader (KIP-951), and
        Metadata tells the clients."""
        if node != -1:
            _node(self, node)

        def move() -> None:
            state = self.state
            found = state.topics.get(topic) or state.create_topic(topic, partition + 1)
            if not 0 <= partition < len(found.partitions):
                raise ValueError(f"topic {topic!r} has no partition {partition}")
            log = found.partitions[partition]
            log.move_leader(node)
            log.arrivals.fire()  # waiting Fetches answer now, from their old leader

        self.call(move)

    def coordinator_set(self: _Cluster, kind: str, key: str, node: int) -> None:
        """Make broker ``node`` the coordinator of group (``kind="group"``) or
        transactional id (``kind="transaction"``) ``key``; the old one answers
        NOT_COORDINATOR, and FindCoordinator names the new one."""
        if kind not in ("group", "transaction"):
            raise ValueError(f"a coordinator's kind is 'group' or 'transaction', not {kind!r}")
        _node(self, node)
        self.call(lambda: self.state.coordinators.__setitem__((kind, key), node))

    # --- holding requests -------------------------------------------------------------------

    def hold(
        self: _Cluster, api: int | str, *, node: int | None = None, timeout: float = HOLD_TIMEOUT
    ) -> HeldRequests:
        """Hold every request of ``api`` (to broker ``node`` only, if given) until the
        handle's ``release()``; at most ``timeout`` seconds each."""
        if node is not None:
            _node(self, node)
        handle = HeldRequests(self, _api_key(self, api), node, timeout)
        self.call(lambda: self.routes.faults.holds.append(handle))
        return handle

    # --- request tracking ---------------------------------------------------------------------

    def start_request_tracking(self: _Cluster) -> None:
        """Remember every request the brokers read from now on (``get_requests``)."""

        def start() -> None:
            self.routes.tracked = self.routes.faults.requests

        self.call(start)

    def stop_request_tracking(self: _Cluster) -> None:
        """Stop remembering requests (the ones remembered stay)."""

        def stop() -> None:
            self.routes.tracked = None

        self.call(stop)

    def get_requests(self: _Cluster) -> list[TrackedRequest]:
        """The requests remembered, in the order the brokers read them."""

        result: list[TrackedRequest] = self.call(lambda: list(self.routes.faults.requests))
        return result

    def clear_requests(self: _Cluster) -> None:
        """Forget the requests remembered."""

        self.call(self.routes.faults.requests.clear)


# --- arguments ---------------------------------------------------------------------------------


def _api_key(cluster: _Cluster, api: int | str) -> int:
    """An API by key or name (``"PRODUCE"``, ``"Produce"``)."""
    if isinstance(api, int):
        return int(api)
    upper = api.upper()
    if upper in ApiKey.__members__:
        return int(ApiKey[upper])
    registry = cluster.package.module("registry")
    for key, name in registry.API_NAMES.items():
        if name == api:
            return int(key)
    raise ValueError(f"no Kafka API named {api!r}")


def _error(cluster: _Cluster, error: Error) -> Error:
    """An error code from a code, a name (``"NOT_LEADER_OR_FOLLOWER"``), or ``DISCONNECT``."""
    if error is DISCONNECT or error == "DISCONNECT":
        return DISCONNECT
    if isinstance(error, int):
        if not -(2**15) <= error < 2**15:
            raise ValueError(f"an error code fits 16 bits: {error}")
        return int(error)
    codes = cluster.package.module("error_codes").ErrorCode
    try:
        return int(codes[str(error).upper()])
    except KeyError:
        raise ValueError(f"no Kafka error named {error!r}") from None


def _node(cluster: _Cluster, node: int) -> None:
    if not any(b.node_id == node for b in cluster.state.brokers):
        ids = ", ".join(str(b.node_id) for b in cluster.state.brokers)
        raise ValueError(f"no broker {node} in the cluster (its brokers: {ids})")


def _nodes(cluster: _Cluster, node: int) -> list[int]:
    if node == -1:
        return [b.node_id for b in cluster.state.brokers]
    _node(cluster, node)
    return [node]
