# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""``AsyncCluster``: an asyncio client of a whole cluster, over ``aio.AsyncClient``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from ssl import SSLContext
from typing import Any, TypeVar

import asyncio

from ..aio import AsyncClient
from ..connection import ClientConnection, ConnectionFailedError, ConnectionState
from ..connection import expects_response
from ._metadata import ClusterMetadata
from ._plans import (
    Ask,
    Build,
    ClusterState,
    Plan,
    coordinator_request_plan,
    fetch_plan,
    leader_request_plan,
    produce_plan,
    refresh_plan,
)
from ._responses import FetchedPartition

T = TypeVar("T")


class AsyncCluster:
    """The asyncio ``Cluster``. One connection per node, opened when first needed; requests routed to partition
    leaders and group coordinators; the metadata refreshed when a leader or coordinator
    moved (NOT_LEADER_OR_FOLLOWER, NOT_COORDINATOR) or a connection was lost.

    ``connection`` is the template of every node's ``ClientConnection`` (its options: SASL,
    timeouts, ...); ``timeout`` and ``ssl`` are ``AsyncClient.connect``'s.
    """

    def __init__(
        self,
        bootstrap: str | Sequence[str],
        connection: ClientConnection | None = None,
        *,
        timeout: float | None = None,
        ssl: SSLContext | None = None,
        retries: int = 3,
    ) -> None:
        self.bootstrap = [bootstrap] if isinstance(bootstrap, str) else list(bootstrap)
        self.template = connection or ClientConnection()
        self.timeout = timeout
        self.ssl = ssl
        self.state = ClusterState(retries=retries)
        self._clients: dict[int | None, AsyncClient] = {}

    @classmethod
    async def connect(
        cls,
        bootstrap: str | Sequence[str],
        connection: ClientConnection | None = None,
        *,
        timeout: float | None = None,
        ssl: SSLContext | None = None,
        retries: int = 3,
    ) -> AsyncCluster:
        """Connect to the first bootstrap server that answers and read the metadata of
        every topic."""
        cluster = cls(bootstrap, connection, timeout=timeout, ssl=ssl, retries=retries)
        failure: BaseException | None = None
        try:
            await cluster.refresh()
        except BaseException as exc:  # no await in an except clause (the compiled build)
            failure = exc
        if failure is not None:
            await cluster.close()
            raise failure
        return cluster

    @property
    def metadata(self) -> ClusterMetadata:
        return self.state.metadata

    # --- jobs ---------------------------------------------------------------------------

    async def refresh(self, topics: list[str] | None = None) -> ClusterMetadata:
        """Read the metadata again (of ``topics``, or of every topic)."""
        return await self.run(refresh_plan(self.state, topics))

    async def request(self, request: Any, **options: Any) -> Any:
        """``request`` to any broker (the bootstrap connection)."""
        return await (await self.node(None)).request(request, **options)

    async def leader_request(self, topic: str, partition: int, request: Any) -> Any:
        """``request`` to the leader of ``topic``'s ``partition``."""
        return await self.run(leader_request_plan(self.state, topic, partition, request))

    async def group_request(self, group_id: str, request: Any) -> Any:
        """``request`` to the coordinator of consumer group ``group_id``."""
        return await self.run(coordinator_request_plan(self.state, group_id, request))

    async def produce(
        self, topic: str, batches: Mapping[int, bytes], *, acks: int = -1, timeout_ms: int = 30000
    ) -> dict[int, int]:
        """Write one record batch (``records.build_batch``) per partition, each to its
        leader; returns partition -> base offset. Raises ``ProtocolError`` for a partition
        error that retrying does not cure."""
        return await self.run(produce_plan(self.state, topic, batches, acks, timeout_ms))

    async def fetch(
        self,
        topic: str,
        offsets: Mapping[int, int],
        *,
        max_wait_ms: int = 500,
        max_bytes: int = 1 << 20,
        isolation_level: int = 0,
    ) -> dict[int, FetchedPartition]:
        """The records of each partition from its offset in ``offsets`` (partition ->
        offset), from the leaders: partition -> ``FetchedPartition``."""
        plan = fetch_plan(self.state, topic, offsets, max_wait_ms, max_bytes, isolation_level)
        return await self.run(plan)

    async def close(self) -> None:
        clients = list(self._clients.values())
        self._clients.clear()
        for client in clients:
            await client.close()

    async def __aenter__(self) -> AsyncCluster:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- I/O ----------------------------------------------------------------------------

    async def run(self, plan: Plan[T]) -> T:
        """Carry a plan out: its requests at once (one task each), the answers sent back into it."""
        try:
            step = next(plan)
            while True:
                step = plan.send(await self._answers(step))
        except StopIteration as done:
            result: T = done.value
            return result

    async def _answers(self, step: Ask) -> list[Any]:
        return list(await asyncio.gather(*(self._answer(n, item) for n, item in step.requests)))

    async def _answer(self, node_id: int | None, item: Any) -> Any:
        try:
            client = await self.node(node_id)
            request = item.make(client.connection) if isinstance(item, Build) else item
            if not expects_response(request):
                client.send(request)
                return None
            return await client.request(request)
        except ConnectionFailedError as exc:
            self._clients.pop(node_id, None)
            return exc

    async def node(self, node_id: int | None) -> AsyncClient:
        """The client of node ``node_id`` (None: any broker), connected when first needed
        and again after its connection was lost."""
        client = self._clients.get(node_id)
        if client is not None and client.connection.state is not ConnectionState.CLOSED:
            return client
        if node_id is None:
            client = await self._bootstrap()
        else:
            broker = self.state.metadata.brokers.get(node_id)
            if broker is None:
                raise KeyError(f"no broker with node id {node_id} in the metadata")
            client = await AsyncClient.connect(
                broker.host, broker.port, self.template.fresh(), timeout=self.timeout,
                ssl=self.ssl,
            )  # fmt: skip
        self._clients[node_id] = client
        return client

    async def _bootstrap(self) -> AsyncClient:
        failure: ConnectionFailedError | None = None
        addresses = [_address(text) for text in self.bootstrap]
        addresses += [(b.host, b.port) for b in self.state.metadata.brokers.values()]
        for host, port in addresses:
            try:
                return await AsyncClient.connect(
                    host, port, self.template.fresh(), timeout=self.timeout, ssl=self.ssl
                )
            except ConnectionFailedError as exc:
                failure = exc
        assert failure is not None
        raise failure


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    return host.strip("[]"), int(port)
