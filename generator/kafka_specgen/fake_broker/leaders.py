"""What a broker that is not a partition's leader tells the client (KIP-951): the current
leader and its epoch with the NOT_LEADER_OR_FOLLOWER error, and the new leaders' addresses,
in Produce (v10+) and Fetch (v12+, addresses v16+) responses, so that clients move without
waiting for Metadata."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .call import Call
from .log import PartitionLog


def current_leader(call: Call, partition_class: type, log: PartitionLog) -> dict[str, Any]:
    """``current_leader=...`` for a partition answered NOT_LEADER_OR_FOLLOWER, where the
    response has the field."""
    if not call.has(partition_class, "current_leader"):
        return {}
    leader_class = call.item(partition_class, "current_leader")
    leader = call.build(leader_class, leader_id=log.leader, leader_epoch=log.leader_epoch)
    return {"current_leader": leader}


def node_endpoints(call: Call, nodes: Iterable[int]) -> dict[str, Any]:
    """``node_endpoints=...`` with the addresses of ``nodes``, where the response has it."""
    wanted = set(nodes)
    if not wanted or not call.has(call.response, "node_endpoints"):
        return {}
    item = call.item(call.response, "node_endpoints")
    return {
        "node_endpoints": [
            call.build(item, node_id=b.node_id, host=b.host, port=b.port, rack=None)
            for b in call.state.brokers
            if b.node_id in wanted
        ]
    }
