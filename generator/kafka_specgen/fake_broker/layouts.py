"""Where each API's request and response list their topics, partitions, groups or
resources, so that some of them can be answered with an error and the rest by the handler.

Kafka's own request handlers work that way: the partitions a client may not write to get
TOPIC_AUTHORIZATION_FAILED, the others go on to the log, and the two halves are merged into
one response. The authorizer (``authorize``) and the fault injection (``faults``) do the
same here, through ``split``:

- ``decide(path)`` is asked about each innermost item of the request (``path``: the items
  from the outermost level in, e.g. the topic and the partition) and returns an error code,
  or None to let the handler answer it;
- the handler answers a copy of the request without the refused items (the ``Call`` with
  that request: nothing it does touches them);
- the refused items are added to its response, each with its error and the ``empty``
  values of its other fields (under the topic entry the handler wrote, if any).

A waiting answer (``Wait``) gets them when it is ready. The tables use the newest field
names; older releases' names come from the API's ``Names``, as for the handlers.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..api_keys import ApiKey
from .call import Call
from .waiting import Wait

Path = tuple[Any, ...]
"""Request items from the outermost level in (a topic, then one of its partitions)."""
Decide = Callable[[Path], int | None]
Answer = Callable[[Call], Any]


@dataclass(frozen=True)
class Level:
    """One list of a request and the list of the response that answers it item by item."""

    request: str
    response: str
    keys: tuple[tuple[str, str], ...]
    """(request field, or "" for a plain item such as a partition number; response field)
    pairs that the response item copies from the request item."""
    inner: Level | None = None
    error: str = "error_code"
    empty: Mapping[str, Any] = field(default_factory=dict)
    """The other fields of an item answered with an error."""


_TOPIC = (("name", "name"), ("topic_id", "topic_id"))
_UNKNOWN_OFFSET = {"committed_offset": -1, "committed_leader_epoch": -1, "metadata": ""}

LAYOUTS: dict[int, tuple[tuple[int, Level], ...]] = {
    ApiKey.PRODUCE: (
        (
            0,
            Level(
                "topic_data",
                "responses",
                _TOPIC,
                Level(
                    "partition_data",
                    "partition_responses",
                    (("index", "index"),),
                    empty={"base_offset": -1, "log_append_time_ms": -1, "log_start_offset": -1},
                ),
            ),
        ),
    ),
    ApiKey.FETCH: (
        (
            0,
            Level(
                "topics",
                "responses",
                (("topic", "topic"), ("topic_id", "topic_id")),
                Level(
                    "partitions",
                    "partitions",
                    (("partition", "partition_index"),),
                    empty={
                        "high_watermark": -1,
                        "last_stable_offset": -1,
                        "log_start_offset": -1,
                        "preferred_read_replica": -1,
                        "records": b"",
                    },
                ),
            ),
        ),
    ),
    ApiKey.LIST_OFFSETS: (
        (
            0,
            Level(
                "topics",
                "topics",
                (("name", "name"),),
                Level(
                    "partitions",
                    "partitions",
                    (("partition_index", "partition_index"),),
                    empty={"timestamp": -1, "offset": -1, "leader_epoch": -1},
                ),
            ),
        ),
    ),
    ApiKey.OFFSET_FOR_LEADER_EPOCH: (
        (
            0,
            Level(
                "topics",
                "topics",
                (("topic", "topic"),),
                Level(
                    "partitions",
                    "partitions",
                    (("partition", "partition"),),
                    empty={"leader_epoch": -1, "end_offset": -1},
                ),
            ),
        ),
    ),
    ApiKey.OFFSET_COMMIT: (
        (
            0,
            Level(
                "topics",
                "topics",
                _TOPIC,
                Level("partitions", "partitions", (("partition_index", "partition_index"),)),
            ),
        ),
    ),
    ApiKey.TXN_OFFSET_COMMIT: (
        (
            0,
            Level(
                "topics",
                "topics",
                _TOPIC,
                Level("partitions", "partitions", (("partition_index", "partition_index"),)),
            ),
        ),
    ),
    ApiKey.OFFSET_FETCH: (
        (
            0,
            Level(
                "topics",
                "topics",
                _TOPIC,
                Level(
                    "partition_indexes",
                    "partitions",
                    (("", "partition_index"),),
                    empty=_UNKNOWN_OFFSET,
                ),
            ),
        ),
        (
            8,
            Level(
                "groups",
                "groups",
                (("group_id", "group_id"),),
                Level(
                    "topics",
                    "topics",
                    _TOPIC,
                    Level(
                        "partition_indexes",
                        "partitions",
                        (("", "partition_index"),),
                        empty=_UNKNOWN_OFFSET,
                    ),
                ),
            ),
        ),
    ),
    ApiKey.ADD_PARTITIONS_TO_TXN: (
        (
            0,
            Level(
                "v3_and_below_topics",
                "results_by_topic_v3_and_below",
                (("name", "name"),),
                Level(
                    "partitions",
                    "results_by_partition",
                    (("", "partition_index"),),
                    error="partition_error_code",
                ),
            ),
        ),
    ),
    ApiKey.CREATE_TOPICS: (
        (
            0,
            Level(
                "topics",
                "topics",
                (("name", "name"),),
                empty={"num_partitions": -1, "replication_factor": -1},
            ),
        ),
    ),
    ApiKey.DELETE_TOPICS: (
        (0, Level("topic_names", "responses", (("", "name"),))),
        (6, Level("topics", "responses", _TOPIC)),
    ),
    ApiKey.DESCRIBE_GROUPS: ((0, Level("groups", "groups", (("", "group_id"),))),),
    ApiKey.FIND_COORDINATOR: (
        (
            4,
            Level(
                "coordinator_keys",
                "coordinators",
                (("", "key"),),
                empty={"node_id": -1, "host": "", "port": -1},
            ),
        ),
    ),
    ApiKey.DESCRIBE_CONFIGS: (
        (
            0,
            Level(
                "resources",
                "results",
                (("resource_type", "resource_type"), ("resource_name", "resource_name")),
            ),
        ),
    ),
}


#: The fields of a one-resource answer refused with an error, besides the error (Kafka's
#: error responses: no node, no generation, no producer id)
BLANK = {
    "generation_id": -1,
    "node_id": -1,
    "host": "",
    "port": -1,
    "producer_id": -1,
    "producer_epoch": -1,
}


def layout(api_key: int, version: int) -> Level | None:
    """The API's layout at ``version`` (None: its answer is one flat error)."""
    chosen = None
    for since, level in LAYOUTS.get(api_key, ()):
        if version >= since:
            chosen = level
    return chosen


# --- splitting a request, merging the answers ---------------------------------------------


def split(call: Call, level: Level, decide: Decide, answer: Answer) -> Any:
    """``answer`` for the items ``decide`` lets through, and the refused ones added to it."""
    kept, refused = _split(call, call.request, level, decide, ())
    if not refused:
        return answer(call)
    response = answer(dataclasses.replace(call, request=kept))
    return after(response, lambda r: _merge(call, level, r, refused))


def echo(call: Call, level: Level, code: int) -> Any:
    """The API's response with every item of the request answered with ``code`` and the
    handler not run, as Kafka's ``getErrorResponse`` lists them."""
    _, refused = _split(call, call.request, level, lambda path: code, ())
    return _merge(call, level, make(call, call.response, BLANK), refused)


def after(response: Any, change: Callable[[Any], Any]) -> Any:
    """``change(response)``, or once a waiting answer is ready (None and the other
    sentinels, such as ``DISCONNECT``, pass unchanged)."""
    if isinstance(response, Wait):
        poll = response.poll

        def changed(now: float, expired: bool) -> Any:
            return after(poll(now, expired), change)

        return Wait(response.deadline, changed, response.on)
    if response is None or not hasattr(response, "__dataclass_fields__"):
        return response
    return change(response)


def _split(
    call: Call, obj: Any, level: Level, decide: Decide, path: Path
) -> tuple[Any, list[tuple[Path, int]]]:
    items = get(call, obj, level.request)
    if not items:
        return obj, []
    kept: list[Any] = []
    refused: list[tuple[Path, int]] = []
    for item in items:
        at = (*path, item)
        if level.inner is None:
            code = decide(at)
            if code is None:
                kept.append(item)
            else:
                refused.append((at, code))
            continue
        inner_kept, inner_refused = _split(call, item, level.inner, decide, at)
        refused += inner_refused
        if get(call, inner_kept, level.inner.request) or not inner_refused:
            kept.append(inner_kept)
    if not refused:
        return obj, []
    attr = call.shapes.attr(type(obj), level.request, call.names)
    return dataclasses.replace(obj, **{attr: kept}), refused  # type: ignore[arg-type]


def _merge(call: Call, level: Level, response: Any, refused: list[tuple[Path, int]]) -> Any:
    for path, code in refused:
        _add(call, response, level, path, code)
    return response


def _add(call: Call, parent: Any, level: Level, path: Path, code: int) -> None:
    attr = call.shapes.attr(type(parent), level.response, call.names)
    if attr is None:
        return  # this version's response has no such list
    item_class = call.shapes.item(type(parent), level.response, call.names)
    source = path[0]
    keys = {out: source if name == "" else get(call, source, name) for name, out in level.keys}
    items = list(getattr(parent, attr) or ())
    if level.inner is None:
        items.append(make(call, item_class, {**level.empty, **keys, level.error: code}))
    else:
        wanted = {k: v for k, v in keys.items() if not _blank(v)}
        entry = next((i for i in items if _same(call, i, wanted)), None)
        if entry is None:
            entry = make(call, item_class, keys)
            items.append(entry)
        _add(call, entry, level.inner, path[1:], code)
    setattr(parent, attr, tuple(items))


def _same(call: Call, item: Any, keys: Mapping[str, Any]) -> bool:
    return all(get(call, item, k) == v for k, v in keys.items())


def _blank(value: Any) -> bool:
    return value is None or value == "" or (isinstance(value, uuid.UUID) and value.int == 0)


# --- fields under their newest names ----------------------------------------------------


def get(call: Call, obj: Any, name: str) -> Any:
    """Field ``name`` of a generated object (None where its release has none)."""
    attr = call.shapes.attr(type(obj), name, call.names)
    if attr is None:
        return call.names.absent.get(name)
    return getattr(obj, attr)


def make(call: Call, cls: type, values: Mapping[str, Any]) -> Any:
    """``cls`` with those of ``values`` its release has (under their older names too)."""
    kept = {}
    for name, value in values.items():
        attr = call.shapes.attr(cls, name, call.names)
        if attr is not None:
            kept[attr] = value
    return cls(**kept)
