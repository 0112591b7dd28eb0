"""What the ACL checks of every API share (``authorize`` lists them): Kafka's errors and
their messages, asking the authorizer, and the answers of refused requests.

A guard gets the request (``Call``), the cluster's authorizer and the handler (``answer``);
it answers the request itself (a refusal), passes it on, or passes on part of it and adds
the refused items to the handler's response (``layouts.split``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .acl import CLUSTER_NAME, Authorizer, Operation, ResourceType
from .call import Call
from .dispatch import with_error
from .errors import ErrorCode
from .layouts import BLANK, Level, Path, echo, get, layout, make, split

Answer = Callable[[Call], Any]
Guard = Callable[[Call, Authorizer, Answer], Any]
Decide = Callable[[Path], int | None]

TOPIC_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED
GROUP_DENIED = ErrorCode.GROUP_AUTHORIZATION_FAILED
CLUSTER_DENIED = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
TXN_DENIED = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
#: Kafka's messages of the four errors (apache/kafka ``Errors``), which its answers carry
#: where they have a message field
MESSAGES = {
    TOPIC_DENIED: "Topic authorization failed.",
    GROUP_DENIED: "Group authorization failed.",
    CLUSTER_DENIED: "Cluster authorization failed.",
    TXN_DENIED: "Transactional Id authorization failed.",
}
#: What the ``*_authorized_operations`` fields hold when not asked for
NOT_ASKED = -(2**31)
#: Config resource types that are the cluster's: a broker, a broker's loggers, client
#: metrics (apache/kafka ``ConfigHelper``, ``ControllerApis.authorizeAlterResource``)
CLUSTER_CONFIGS = (4, 8, 16)
TOPIC_CONFIGS, GROUP_CONFIGS = 2, 32


def allowed(call: Call, authorizer: Authorizer, operation: int, kind: int, name: str) -> bool:
    return authorizer.authorize(call.principal, call.client_host, operation, kind, name)


def on_cluster(call: Call, authorizer: Authorizer, *operations: int) -> bool:
    """Whether the principal may do one of ``operations`` on the cluster."""
    return any(
        allowed(call, authorizer, op, ResourceType.CLUSTER, CLUSTER_NAME) for op in operations
    )


def on_group(call: Call, authorizer: Authorizer, operation: int, field: str = "group_id") -> bool:
    group = get(call, call.request, field) or ""
    return allowed(call, authorizer, operation, ResourceType.GROUP, group)


def transactional(call: Call, authorizer: Authorizer) -> bool:
    """Whether the principal may WRITE on the request's transactional id (if it has one)."""
    txn = get(call, call.request, "transactional_id") or get(
        call, call.request, "v3_and_below_transactional_id"
    )
    return not txn or allowed(call, authorizer, Operation.WRITE, ResourceType.TRANSACTIONAL_ID, txn)


def level_of(call: Call) -> Level:
    """The API's layout in ``layouts.LAYOUTS`` at the request's version."""
    level = layout(call.api_key, call.version)
    assert level is not None, call.api_key
    return level


def refused(call: Call, code: int, level: Level | None = None) -> Any:
    """The API's answer with ``code`` in every error field, the handler not run: a
    one-resource request's, or (``level``) one listing every item of the request with it,
    as Kafka's ``getErrorResponse``."""
    response = make(call, call.response, BLANK) if level is None else echo(call, level, code)
    return with_error(response, code)


def refusing(code: int) -> Decide:
    """A ``split`` decision refusing every item with ``code``."""
    return lambda path: code


def topic_name(call: Call, level: Level, item: Any) -> str | None:
    """The topic a request item names (by name, or by id); None for an unknown id."""
    field = level.keys[0][0]
    name = item if field == "" else get(call, item, field)
    if name:
        return str(name)
    found = call.state.topic_by_id(get(call, item, "topic_id"))
    return found.name if found is not None else None


def topics(
    call: Call, authorizer: Authorizer, level: Level, operation: int, code: int = TOPIC_DENIED
) -> Decide:
    """A ``split`` decision refusing the items of topics without ``operation`` (the topic
    is the first item of the path, described by ``level``)."""

    def decide(path: Path) -> int | None:
        name = topic_name(call, level, path[0])
        if name is None or allowed(call, authorizer, operation, ResourceType.TOPIC, name):
            return None
        return code

    return decide


def on_topics(operation: Operation, code: int = TOPIC_DENIED, level: Level | None = None) -> Guard:
    """A guard that checks ``operation`` on each topic of the request (listed as ``level``
    says, else as the API's ``layouts`` entry does)."""

    def check(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
        at = level if level is not None else level_of(call)
        return split(call, at, topics(call, authorizer, at, operation, code), answer)

    return check


def on_cluster_only(operation: Operation, level: Level | None = None) -> Guard:
    """A guard for an API of the cluster: ``operation`` on it, else CLUSTER_AUTHORIZATION_FAILED
    for the whole request (each item of ``level`` listed with it, with Kafka's message)."""

    def check(call: Call, authorizer: Authorizer, answer: Answer) -> Any:
        if on_cluster(call, authorizer, operation):
            return answer(call)
        return with_messages(refused(call, CLUSTER_DENIED, level))

    return check


def with_messages(obj: Any) -> Any:
    """``obj`` with Kafka's message in the empty message field of each part (at any depth)
    refused with one of the four authorization errors."""
    fields = getattr(obj, "__dataclass_fields__", None)
    if fields is None:
        return obj
    code = getattr(obj, "error_code", None)
    if code in MESSAGES and "error_message" in fields and not obj.error_message:
        obj.error_message = MESSAGES[code]
    for attr in fields:
        value = getattr(obj, attr)
        if isinstance(value, (list, tuple)):
            for item in value:
                with_messages(item)
        elif hasattr(value, "__dataclass_fields__"):
            with_messages(value)
    return obj


def cluster_operations(call: Call, authorizer: Authorizer) -> int:
    """The cluster's ``*_authorized_operations``: 0 without DESCRIBE on it (Kafka's
    ``AuthHelper``)."""
    if not allowed(call, authorizer, Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        return 0
    return authorizer.authorized_operations(
        call.principal, call.client_host, ResourceType.CLUSTER, CLUSTER_NAME
    )


def operations(call: Call, authorizer: Authorizer, kind: ResourceType, name: str) -> int:
    """A resource's ``*_authorized_operations`` bit field for the principal."""
    return authorizer.authorized_operations(call.principal, call.client_host, kind, name)
