"""FindCoordinator: the broker that coordinates a group or a transactional id (a stable hash
of the key, the same for every key type)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from .apikeys import ApiKey
from .call import Call
from .errors import ErrorCode
from .handler import Handler
from .shapes import Names

#: FindCoordinator v4 looks up several keys at once (KIP-699, Kafka 3.0)
BATCHED_VERSION = 4
NAMES = Names(absent={"coordinator_keys": None, "coordinators": None, "key_type": 0})


#: FindCoordinator's key types (1: a transactional id; 0 and the others: groups)
KINDS = {1: "transaction"}


class FindCoordinatorIn(Protocol):
    key: str
    key_type: int
    coordinator_keys: Sequence[str] | None


def find_coordinator(call: Call) -> Any:
    req: FindCoordinatorIn = call.read(FindCoordinatorIn)
    kind = KINDS.get(req.key_type, "group")
    if call.version >= BATCHED_VERSION:
        item = call.item(call.response, "coordinators")
        found = []
        for key in req.coordinator_keys or ():
            b = call.state.coordinator(key, kind)
            found.append(
                call.build(
                    item,
                    key=key,
                    node_id=b.node_id,
                    host=b.host,
                    port=b.port,
                    error_code=ErrorCode.NONE,
                )
            )
        return call.respond(coordinators=found)
    b = call.state.coordinator(req.key, kind)
    return call.respond(error_code=ErrorCode.NONE, node_id=b.node_id, host=b.host, port=b.port)


HANDLERS = (Handler(ApiKey.FIND_COORDINATOR, (0, 6), find_coordinator, NAMES, FindCoordinatorIn),)
