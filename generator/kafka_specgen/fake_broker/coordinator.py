"""FindCoordinator: the broker that coordinates a group, a transactional id or a share
partition's state (a stable hash of the key, the same for every key type)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any, Protocol

from ..api_keys import ApiKey
from .call import Call
from .errors import ErrorCode
from .handler import Handler
from .shapes import Names

#: FindCoordinator v4 looks up several keys at once (KIP-699, Kafka 3.0)
BATCHED_VERSION = 4
#: key types: a group, a transactional id, a share partition ("group:topicId:partition",
#: KIP-932, FindCoordinator v6)
GROUP, TRANSACTION, SHARE = 0, 1, 2
SHARE_VERSION = 6
NAMES = Names(absent={"coordinator_keys": None, "coordinators": None, "key_type": GROUP})


#: What each key type's coordinator is called for ``coordinator_set`` (librdkafka's mock
#: names: "group", "transaction"; "share" for share partitions)
KINDS = {GROUP: "group", TRANSACTION: "transaction", SHARE: "share"}


class FindCoordinatorIn(Protocol):
    key: str
    key_type: int
    coordinator_keys: Sequence[str] | None


def refusal(key_type: int, key: str, version: int) -> tuple[ErrorCode, str] | None:
    """Why Kafka refuses to look ``key`` up (apache/kafka
    ``KafkaApis.handleFindCoordinatorRequest``, ``SharePartitionKey.validate``)."""
    if key_type not in (GROUP, TRANSACTION, SHARE):
        return ErrorCode.INVALID_REQUEST, f"Unknown coordinator type: {key_type}"
    if key_type != SHARE:
        return None
    if version < SHARE_VERSION:
        return ErrorCode.UNSUPPORTED_VERSION, "Share coordinators need FindCoordinator v6."
    parts = key.split(":")
    try:
        if len(parts) != 3 or not parts[0] or int(parts[2]) < 0:
            raise ValueError
        if len(base64.urlsafe_b64decode(parts[1] + "==")) != 16:
            raise ValueError
    except (ValueError, binascii.Error):
        return ErrorCode.INVALID_REQUEST, f"Invalid coordinator key: {key}"
    return None


def find_coordinator(call: Call) -> Any:
    req: FindCoordinatorIn = call.read(FindCoordinatorIn)
    kind = KINDS.get(req.key_type, "group")
    if call.version >= BATCHED_VERSION:
        item = call.item(call.response, "coordinators")
        found = []
        for key in req.coordinator_keys or ():
            refused = refusal(req.key_type, key, call.version)
            b = call.state.coordinator(key, kind)
            found.append(
                call.build(
                    item,
                    key=key,
                    node_id=-1 if refused else b.node_id,
                    host="" if refused else b.host,
                    port=-1 if refused else b.port,
                    error_code=refused[0] if refused else ErrorCode.NONE,
                    error_message=refused[1] if refused else None,
                )
            )
        return call.respond(coordinators=found)
    refused = refusal(req.key_type, req.key, call.version)
    if refused is not None:
        return call.respond(
            error_code=refused[0], error_message=refused[1], node_id=-1, host="", port=-1
        )
    b = call.state.coordinator(req.key, kind)
    return call.respond(error_code=ErrorCode.NONE, node_id=b.node_id, host=b.host, port=b.port)


HANDLERS = (Handler(ApiKey.FIND_COORDINATOR, (0, 6), find_coordinator, NAMES, FindCoordinatorIn),)
